// The pure parts of the cloud-controller-manager as tables: the cloud config in both shapes, the
// --controllers syntax, the provider registry, node labels from instance metadata, balancer ports
// and source ranges from a Service, which nodes a balancer uses, the route plan, and the proxies'
// source-range check.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as api from '../src/api/index.js';
import { initCloudProvider, parseCloudConfig } from '../src/ccm-operator/cloud-provider.js';
import { selectCcmControllers } from '../src/ccm-operator/ccm.js';
import { balancerName, balancerPorts, cloudUrlFromConfig, instanceIdOf, sourceRanges } from '../src/ccm-operator/local-provider.js';
import { cloudLabels } from '../src/ccm-operator/node-controller.js';
import { eligibleNode, wantsLoadBalancer } from '../src/ccm-operator/service-controller.js';
import { cidrWithin, planRoutes } from '../src/ccm-operator/route-controller.js';
import { allowedSource } from '../src/cloud/load-balancer-proxy.js';

test('cloud config: INI, YAML and JSON, sections, comments; bad lines named', () => {
  assert.deepEqual(parseCloudConfig('[Global]\nurl = http://127.0.0.1:1\n; comment\n[LoadBalancer]\nsubnet-id = "s-1"\n'), { url: 'http://127.0.0.1:1', 'LoadBalancer.subnet-id': 's-1' });
  assert.deepEqual(parseCloudConfig('---\n# yaml\nurl: http://x:2\ndataDir: \'/tmp/d\'\n'), { url: 'http://x:2', dataDir: '/tmp/d' });
  assert.throws(() => parseCloudConfig('url http://x'), /cloud config line 1: "url http:\/\/x" is neither/);
  // JSON, as the install writes openshift-config/cloud-provider-config.
  assert.deepEqual(parseCloudConfig('{\n  "url": "http://127.0.0.1:8082",\n  "LoadBalancer": {"port": 1}\n}'), { url: 'http://127.0.0.1:8082', 'LoadBalancer.port': '1' });
  assert.throws(() => parseCloudConfig('{"url": '), /cloud config: not a JSON object/);
  assert.throws(() => parseCloudConfig('{"url": ["a"]}'), /"url" must be a string, number, boolean or object/);
  assert.equal(cloudUrlFromConfig('{"url": "http://a:1"}'), 'http://a:1');
  assert.equal(cloudUrlFromConfig('url = http://a:1'), 'http://a:1');
  assert.throws(() => cloudUrlFromConfig(''), /needs --cloud-config with "url = /);
  assert.throws(() => cloudUrlFromConfig('dataDir = /nonexistent/bosun'), /no local cloud is running for \/nonexistent\/bosun/);
});

test('providers by name', async () => {
  const credentialDir = mkdtempSync(join(tmpdir(), 'bosun-ccm-rules-'));
  after(() => rmSync(credentialDir, { recursive: true, force: true }));
  const credential = join(credentialDir, 'credential');
  writeFileSync(credential, 'BCK0123456789ABCDEF.secret\n', { mode: 0o600 });
  const local = await initCloudProvider('local', 'url = http://127.0.0.1:9', { credentialsFile: credential });
  assert.equal(local.providerName(), 'local');
  // The cloud answers 401 without a credential: the provider refuses to start without one.
  await assert.rejects(async () => initCloudProvider('local', 'url = http://127.0.0.1:9'), /the local cloud provider needs a cloud credential: --cloud-credentials-file <file>/);
  await assert.rejects(async () => initCloudProvider('local', `url = http://127.0.0.1:9\ncredentialsFile = ${credential}.missing`), /cannot read the cloud credential .*credential\.missing: no such file/);
  assert.equal((await initCloudProvider('local', `url = http://127.0.0.1:9\ncredentialsFile = ${credential}`)).providerName(), 'local');
  assert.ok(local.instancesV2() && local.loadBalancer() && local.routes());
  assert.equal(local.instances(), undefined);
  assert.equal(local.zones(), undefined);
  await assert.rejects(initCloudProvider('aws', undefined), /unknown cloud provider "aws" \(known: local\)/);
});

test('--controllers', () => {
  const cases: Array<[string, string[] | RegExp]> = [
    ['*', ['cloud-node', 'cloud-node-lifecycle', 'service', 'route']],
    ['*,-route', ['cloud-node', 'cloud-node-lifecycle', 'service']],
    ['service,route', ['service', 'route']],
    ['-service', []],
    ['*,nodeipam', /"nodeipam" is not a known controller; known controllers: cloud-node, cloud-node-lifecycle, service, route/],
  ];
  for (const [spec, want] of cases) {
    if (want instanceof RegExp) assert.throws(() => selectCcmControllers(spec), want, spec);
    else assert.deepEqual(selectCcmControllers(spec), want, spec);
  }
});

test('node labels from instance metadata: GA and beta names, additional labels', () => {
  assert.deepEqual(cloudLabels({ providerID: 'local://i-1', instanceType: 'small', nodeAddresses: [], zone: 'local-a', region: 'local', additionalLabels: { x: 'y' } }), {
    'node.kubernetes.io/instance-type': 'small', 'beta.kubernetes.io/instance-type': 'small',
    'topology.kubernetes.io/zone': 'local-a', 'failure-domain.beta.kubernetes.io/zone': 'local-a',
    'topology.kubernetes.io/region': 'local', 'failure-domain.beta.kubernetes.io/region': 'local', x: 'y',
  });
  assert.deepEqual(cloudLabels({ providerID: 'p', instanceType: '', nodeAddresses: [], zone: '', region: '' }), {});
  assert.equal(instanceIdOf('local://i-abc'), 'i-abc');
  assert.equal(instanceIdOf('aws:///us-east-1a/i-abc'), undefined);
});

test('balancers from Services: stable names, ports to NodePorts, source ranges, which Services and nodes', () => {
  const svc = (spec: api.Service['spec'], annotations: Record<string, string> = {}): api.Service => ({ metadata: { name: 'web', namespace: 'default', annotations }, spec: { type: 'LoadBalancer', ...spec } });
  assert.equal(balancerName('c1', svc({})), balancerName('c1', svc({ ports: [] })), 'the name depends on cluster/namespace/name only');
  assert.notEqual(balancerName('c1', svc({})), balancerName('c2', svc({})));
  assert.match(balancerName('kubernetes', svc({})), /^kubernetes-lb-[0-9a-f]{16}$/);
  assert.deepEqual(balancerPorts(svc({ ports: [{ name: 'http', port: 80, nodePort: 30080 }, { port: 443, protocol: 'TCP', nodePort: 30443 }] })),
    [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 30080 }, { protocol: 'TCP', port: 443, targetPort: 30443 }]);
  assert.throws(() => balancerPorts(svc({ ports: [{ port: 53, protocol: 'UDP', nodePort: 30053 }] })), /protocol UDP is not supported by the local cloud/);
  assert.throws(() => balancerPorts(svc({ ports: [{ port: 80 }] })), /port 80 has no nodePort yet/);
  assert.deepEqual(sourceRanges(svc({ loadBalancerSourceRanges: ['10.0.0.0/8'] }, { 'service.beta.kubernetes.io/load-balancer-source-ranges': '1.0.0.0/8' })), ['10.0.0.0/8']);
  assert.deepEqual(sourceRanges(svc({}, { 'service.beta.kubernetes.io/load-balancer-source-ranges': '1.0.0.0/8, 2.0.0.0/8' })), ['1.0.0.0/8', '2.0.0.0/8']);
  assert.equal(wantsLoadBalancer(svc({})), true);
  assert.equal(wantsLoadBalancer(svc({ loadBalancerClass: 'example.com/other' })), false, 'another controller owns classed balancers');
  assert.equal(wantsLoadBalancer(svc({ type: 'NodePort' })), false);

  const ready = [{ type: 'Ready', status: 'True' }];
  const node = (extra: { metadata?: Partial<api.Node['metadata']>; spec?: api.Node['spec'] } = {}, conditions: { type: string; status: string }[] = ready): api.Node => ({ metadata: { name: 'n', labels: {}, ...extra.metadata }, spec: { providerID: 'local://i-1', ...extra.spec }, status: { conditions } });
  const nodes: Array<[string, api.Node, boolean]> = [
    ['ready, initialised', node(), true],
    ['not ready', node({}, [{ type: 'Ready', status: 'False' }]), false],
    ['no providerID yet', node({ spec: { providerID: '' } }), false],
    ['excluded', node({ metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': '' } } }), false],
    ['being scaled away', node({ spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] } }), false],
  ];
  for (const [what, n, want] of nodes) assert.equal(eligibleNode(n), want, what);
});

test('route plan: a route per (node, podCIDR); stale ones inside the cluster CIDR removed', () => {
  const node = (name: string, cidrs: string[]): api.Node => ({ metadata: { name, uid: `uid-${name}` }, spec: { podCIDRs: cidrs } });
  const plan = planRoutes(
    [node('a', ['127.1.1.0/24']), node('b', ['127.1.2.0/24', '127.1.3.0/24']), node('c', [])],
    [
      { name: 'k-uid-a', targetNode: 'a', destinationCIDR: '127.1.1.0/24' },
      { name: 'k-old', targetNode: 'gone', destinationCIDR: '127.1.9.0/24' },
      { name: 'k-moved', targetNode: 'a', destinationCIDR: '127.1.2.0/24' },
      { name: 'k-outside', targetNode: 'gone', destinationCIDR: '10.0.0.0/24' },
    ],
    '127.1.0.0/16',
  );
  assert.deepEqual(plan.create.map((c) => `${c.node.metadata.name} ${c.cidr} ${c.hint}`), ['b 127.1.2.0/24 uid-b', 'b 127.1.3.0/24 uid-b-1']);
  assert.deepEqual(plan.remove.map((r) => r.name), ['k-old', 'k-moved']);
  assert.equal(cidrWithin('127.1.2.0/24', '127.1.0.0/16'), true);
  assert.equal(cidrWithin('127.0.0.0/8', '127.1.0.0/16'), false);
});

test('proxy source ranges', () => {
  const cases: Array<[string, string[], boolean]> = [
    ['127.0.0.1', [], true],
    ['127.0.0.1', ['127.0.0.0/8'], true],
    ['::ffff:127.0.0.1', ['127.0.0.0/8'], true],
    ['127.0.0.1', ['10.0.0.0/8', '192.168.0.0/16'], false],
    ['127.0.1.5', ['127.0.1.4/32'], false],
    ['::1', ['127.0.0.0/8'], false],
  ];
  for (const [ip, ranges, want] of cases) assert.equal(allowedSource(ip, ranges), want, `${ip} in ${ranges.join(',')}`);
});
