// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The cloud-controller-manager against the embedded API server and a real local cloud: nodes
// registered with the uninitialized taint are initialised from their instances; routes follow the
// podCIDRs; a LoadBalancer Service gets a virtual IP whose proxies (run by the cloud) carry real
// TCP to the nodes' NodePorts, spreading over them, following port and node-set changes and source
// ranges; deleting the Service removes its balancer and finalizer; an orphaned balancer is removed
// at start; a NotReady node whose instance is terminated is deleted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { KubeClient, Obj } from '../src/kube/index.js';
import { balancerName } from '../src/ccm-operator/local-provider.js';
import { LB_CLEANUP_FINALIZER, NODES, SERVICES, UNINITIALIZED_TAINT } from '../src/ccm-operator/context.js';
import type { Instance } from '../src/cloud/types.js';
import { closeServer } from '../src/common/http-server.js';
import { eventually } from './helpers/eventually.js';
import { isUp, waitForInstance, type CloudFixture } from './cloud/cloud-fixture.js';
import { EVENTS, httpGet, startCcmFixture, type CcmFixture } from './ccm-operator/ccm-fixture.js';

let f: CcmFixture;
let cloud: CloudFixture;
let client: KubeClient;
let instances: Instance[];

before(async () => {
  f = await startCcmFixture({ clusterPrefix: 'ccm' });
  ({ cloud, client } = f);
  instances = [];
  for (const name of ['ccm-node-a', 'ccm-node-b', 'ccm-node-c']) {
    const created = await cloud.client.createInstance({ name, zone: name === 'ccm-node-b' ? 'local-b' : 'local-a' });
    instances.push(await waitForInstance(cloud.client, created.id, 'up', isUp));
  }
  for (const [i, instance] of instances.entries()) {
    await f.registerNode(instance, { labels: { 'kubernetes.io/hostname': instance.name }, podCIDR: `127.1.${i + 1}.0/24` });
  }
  // A balancer of this cluster whose Service never existed (a CCM stopped mid-delete).
  await cloud.client.ensureLoadBalancer(`${f.clusterName}-lb-0123456789abcdef`, { ports: [{ protocol: 'TCP', port: 9999, targetPort: 30999 }], targets: [], sourceRanges: [] });
  await cloud.client.ensureLoadBalancer('someone-else', { ports: [{ protocol: 'TCP', port: 9998, targetPort: 30998 }], targets: [], sourceRanges: [] });

  await f.startCcm();
});

after(() => f.close());

test('uninitialised nodes get providerID, labels and addresses from their instances and lose the taint', async () => {
  for (const instance of instances) {
    const node = await eventually(`${instance.name} initialised`, async () => {
      const n = await client.get(NODES, instance.name);
      return (n.spec!.taints ?? []).some((t: Obj) => t.key === UNINITIALIZED_TAINT) ? undefined : n;
    }, 10_000);
    assert.equal(node.spec!.providerID, `local://${instance.id}`);
    const labels = node.metadata.labels;
    assert.deepEqual(
      [labels!['node.kubernetes.io/instance-type'], labels!['topology.kubernetes.io/zone'], labels!['topology.kubernetes.io/region'], labels!['failure-domain.beta.kubernetes.io/zone'], labels!['beta.kubernetes.io/instance-type']],
      [instance.type, instance.zone, instance.region, instance.zone, instance.type],
    );
    assert.deepEqual(node.status!.addresses, [{ type: 'InternalIP', address: instance.privateIp }, { type: 'Hostname', address: instance.name }]);
    await eventually(`Synced event on ${instance.name}`, async () => (await f.eventReasons(instance.name)).includes('Synced'));
  }
  // Addresses follow the cloud: a wrong one is put back on the next periodic sync.
  const a = instances[0];
  await client.mergePatch(NODES, a.name, undefined, { status: { addresses: [{ type: 'InternalIP', address: '10.9.9.9' }] } }, 'status');
  await eventually('addresses restored', async () => (await client.get(NODES, a.name)).status!.addresses![0].address === a.privateIp, 10_000);
});

test('a route per podCIDR and NetworkUnavailable=False (RouteCreated); stale routes in the cluster CIDR go', async () => {
  await cloud.client.createRoute({ name: `${f.clusterName}-stale`, destinationCidr: '127.1.99.0/24', targetInstance: instances[0].id });
  await cloud.client.createRoute({ name: 'outside-cluster-cidr', destinationCidr: '127.2.0.0/24', targetInstance: instances[0].id });
  await eventually('routes for every podCIDR, the stale one gone', async () => {
    const routes = (await cloud.client.listRoutes()).map((r) => `${r.destinationCidr} ${r.targetInstance}`).sort();
    const want = [...instances.map((inst, i) => `127.1.${i + 1}.0/24 ${inst.id}`), `127.2.0.0/24 ${instances[0].id}`].sort();
    return JSON.stringify(routes) === JSON.stringify(want);
  }, 10_000);
  for (const instance of instances) {
    await eventually(`NetworkUnavailable=False on ${instance.name}`, async () => {
      const c = (await client.get(NODES, instance.name)).status!.conditions!.find((x: Obj) => x.type === 'NetworkUnavailable');
      return c?.status === 'False' && c.reason === 'RouteCreated';
    });
  }
});

test('a LoadBalancer Service: finalizer, ingress IP, real TCP through the VIP spread over the nodes, updates, source ranges, deletion', async () => {
  // The orphan of this cluster is removed at start; another cluster's balancer stays.
  await eventually('the orphan removed', async () => JSON.stringify((await cloud.client.listLoadBalancers()).map((lb) => lb.name)) === '["someone-else"]');
  const created = await client.create(SERVICES, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port: 18080, targetPort: 8080 }] },
  });
  const nodePort = created.spec!.ports![0].nodePort as number;
  const nodePorts: Server[] = [];
  for (const i of instances) nodePorts.push(await f.serveNodePort(i.name, i.privateIp, nodePort));

  const svc = await eventually('ingress IP', async () => {
    const s = await client.get(SERVICES, 'web', 'default');
    return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
  }, 15_000);
  const vip = svc.status!.loadBalancer!.ingress![0].ip as string;
  assert.match(vip, /^127\.0\.200\.\d+$/);
  assert.ok(svc.metadata.finalizers!.includes(LB_CLEANUP_FINALIZER));
  const [lb] = await f.balancers();
  assert.equal(lb.name, balancerName(f.clusterName, svc));
  assert.deepEqual(lb.ports, [{ name: 'http', protocol: 'TCP', port: 18080, targetPort: nodePort }]);
  assert.deepEqual([...lb.targets].sort(), instances.map((i) => i.id).sort());
  await eventually('Ensuring/Ensured events', async () => {
    const reasons = await f.eventReasons('web');
    return reasons.includes('EnsuringLoadBalancer') && reasons.includes('EnsuredLoadBalancer');
  });

  const seen = new Set<string>();
  await eventually('traffic through the VIP reaches every node', async () => {
    seen.add(await httpGet(vip, 18080));
    return instances.every((i) => seen.has(i.name));
  }, 10_000);

  // A node that refuses: the proxy tries the next one, so no request fails.
  await closeServer(nodePorts[2]);
  for (let i = 0; i < 6; i++) assert.match(await httpGet(vip, 18080), /^ccm-node-[ab]$/);

  // Node set: the exclusion label takes node c out of the balancer.
  await client.mergePatch(NODES, instances[2].name, undefined, { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': '' } } });
  await eventually('node c out of the balancer', async () => {
    const [b] = await f.balancers();
    return b.targets.length === 2 && !b.targets.includes(instances[2].id);
  }, 10_000);
  await eventually('UpdatedLoadBalancer event', async () => (await f.eventReasons('web')).includes('UpdatedLoadBalancer'));

  // Ports: a second port is served, the address and status stay.
  await client.mergePatch(SERVICES, 'web', 'default', { spec: { ports: [{ name: 'http', port: 18080, targetPort: 8080, nodePort }, { name: 'alt', port: 18081, targetPort: 8080 }] } });
  const altNodePort = (await client.get(SERVICES, 'web', 'default')).spec!.ports![1].nodePort as number;
  for (const i of instances.slice(0, 2)) await f.serveNodePort(`${i.name}-alt`, i.privateIp, altNodePort);
  await eventually('the second port through the VIP', async () => /-alt$/.test(await httpGet(vip, 18081)), 10_000);
  assert.equal((await client.get(SERVICES, 'web', 'default')).status!.loadBalancer!.ingress![0].ip, vip, 'the address survives a port change');

  // Source ranges: a client outside them is refused.
  await client.mergePatch(SERVICES, 'web', 'default', { spec: { loadBalancerSourceRanges: ['10.0.0.0/8'] } });
  await eventually('refused from 127.0.0.1', async () => !/^ccm-node/.test(await httpGet(vip, 18080)), 10_000);
  await client.mergePatch(SERVICES, 'web', 'default', { spec: { loadBalancerSourceRanges: ['127.0.0.0/8'] } });
  await eventually('allowed again', async () => /^ccm-node/.test(await httpGet(vip, 18080)), 10_000);

  // Deleting the Service removes its balancer, then the finalizer (and so the Service).
  await client.delete(SERVICES, 'web', 'default');
  await eventually('Service gone', async () => (await client.read(SERVICES, 'web', 'default')) === undefined, 10_000);
  assert.deepEqual(await f.balancers(), []);
  assert.notEqual(await httpGet(vip, 18080), 'ccm-node-a', 'nothing listens on the VIP any more');
  await eventually('Deleting/Deleted events', async () => {
    const reasons = await f.eventReasons('web');
    return reasons.includes('DeletingLoadBalancer') && reasons.includes('DeletedLoadBalancer');
  });
});

test('a Service the cloud cannot serve: finalizer first, SyncLoadBalancerFailed, no balancer', async () => {
  await client.create(SERVICES, { metadata: { name: 'dns', namespace: 'default' }, spec: { type: 'LoadBalancer', ports: [{ port: 18053, protocol: 'UDP' }] } });
  await eventually('SyncLoadBalancerFailed', async () => (await f.eventReasons('dns')).includes('SyncLoadBalancerFailed'), 10_000);
  const events = (await client.list(EVENTS, 'default')).items.filter((e: Obj) => e.involvedObject?.name === 'dns' && e.reason === 'SyncLoadBalancerFailed');
  assert.match(events[0].message ?? '', /^Error syncing load balancer: .*protocol UDP is not supported by the local cloud/);
  assert.equal(events[0].type, 'Warning');
  const s = await client.get(SERVICES, 'dns', 'default');
  assert.ok(s.metadata.finalizers!.includes(LB_CLEANUP_FINALIZER), 'the finalizer is there before the cloud is asked');
  assert.deepEqual(s.status?.loadBalancer ?? {}, {});
  assert.deepEqual(await f.balancers(), []);
  // Said on the Service as Kubernetes says it (KEP-1435's condition), not only in an Event.
  const ports = await eventually('LoadBalancerPortsError', async () => (await client.get(SERVICES, 'dns', 'default')).status?.conditions?.find((c: Obj) => c.type === 'LoadBalancerPortsError'), 10_000);
  assert.equal(ports.status, 'True');
  assert.equal(ports.reason, 'LoadBalancerMixedProtocolNotSupported');
  assert.match(ports.message, /port 18053\/UDP: protocol UDP is not supported by the local cloud provider \(its load balancers carry TCP only\)/);
  await client.delete(SERVICES, 'dns', 'default');
  await eventually('dns gone', async () => (await client.read(SERVICES, 'dns', 'default')) === undefined, 10_000);
});

test('TCP and UDP ports on one Service: the TCP port is balanced, the UDP port reported per port and in LoadBalancerPortsError', async () => {
  await client.create(SERVICES, { metadata: { name: 'mixed', namespace: 'default' }, spec: { type: 'LoadBalancer', ports: [{ name: 'tcp', port: 18095, protocol: 'TCP' }, { name: 'udp', port: 18096, protocol: 'UDP' }] } });
  const s = await eventually('ingress with per-port status', async () => {
    const live = await client.get(SERVICES, 'mixed', 'default');
    return live.status?.loadBalancer?.ingress?.[0]?.ip ? live : undefined;
  }, 10_000);
  assert.deepEqual(s.status!.loadBalancer!.ingress![0].ports, [{ port: 18095, protocol: 'TCP' }, { port: 18096, protocol: 'UDP', error: 'local.bosun.io/ProtocolNotSupported' }]);
  const [lb] = (await cloud.client.listLoadBalancers()).filter((b) => b.name === balancerName(f.clusterName, s));
  assert.deepEqual(lb.ports.map((p) => `${p.port}/${p.protocol}`), ['18095/TCP']);
  const cond = s.status!.conditions!.find((c: Obj) => c.type === 'LoadBalancerPortsError');
  assert.equal(cond!.status, 'True');
  assert.match(cond!.message, /does not serve port 18096\/UDP \(local.bosun.io\/ProtocolNotSupported\)/);

  // Without the UDP port: the condition turns False and the per-port status goes.
  await client.mergePatch(SERVICES, 'mixed', 'default', { spec: { ports: [{ name: 'tcp', port: 18095, protocol: 'TCP' }] } });
  const fixed = await eventually('LoadBalancerPortsError=False', async () => {
    const live = await client.get(SERVICES, 'mixed', 'default');
    return live.status?.conditions?.find((c: Obj) => c.type === 'LoadBalancerPortsError')?.status === 'False' ? live : undefined;
  }, 10_000);
  assert.equal(fixed.status!.loadBalancer!.ingress![0].ports, undefined);
  await client.delete(SERVICES, 'mixed', 'default');
  await eventually('mixed gone', async () => (await client.read(SERVICES, 'mixed', 'default')) === undefined, 10_000);
});

test('externalTrafficPolicy Local: the balancer health-checks spec.healthCheckNodePort; Cluster: it does not', async () => {
  await client.create(SERVICES, { metadata: { name: 'local-policy', namespace: 'default' }, spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 31999, ports: [{ port: 18097 }] } });
  const s = await eventually('ingress', async () => {
    const live = await client.get(SERVICES, 'local-policy', 'default');
    return live.status?.loadBalancer?.ingress?.[0]?.ip ? live : undefined;
  }, 10_000);
  const balancer = async () => (await cloud.client.listLoadBalancers()).find((b) => b.name === balancerName(f.clusterName, s));
  assert.deepEqual((await balancer())?.healthCheck, { port: 31999, path: '/healthz' });
  await client.mergePatch(SERVICES, 'local-policy', 'default', { spec: { externalTrafficPolicy: 'Cluster', healthCheckNodePort: null } });
  await eventually('no health check with policy Cluster', async () => (await balancer())?.healthCheck === undefined, 10_000);
  await client.delete(SERVICES, 'local-policy', 'default');
  await eventually('local-policy gone', async () => (await client.read(SERVICES, 'local-policy', 'default')) === undefined, 10_000);
});

test('a spec.loadBalancerIP is honoured', async () => {
  await client.create(SERVICES, { metadata: { name: 'pinned', namespace: 'default' }, spec: { type: 'LoadBalancer', loadBalancerIP: '127.0.200.201', ports: [{ port: 18090 }] } });
  await eventually('pinned address', async () => (await client.get(SERVICES, 'pinned', 'default')).status?.loadBalancer?.ingress?.[0]?.ip === '127.0.200.201', 10_000);
  await client.mergePatch(SERVICES, 'pinned', 'default', { spec: { type: 'ClusterIP', loadBalancerIP: null } });
  await eventually('balancer gone when the type changes', async () => (await f.balancers()).length === 0, 10_000);
  const s = await eventually('finalizer removed', async () => {
    const x = await client.get(SERVICES, 'pinned', 'default');
    return (x.metadata.finalizers ?? []).includes(LB_CLEANUP_FINALIZER) ? undefined : x;
  });
  assert.deepEqual(s.status?.loadBalancer ?? {}, {});
});

test('balancers are the cloud\'s: traffic flows with no CCM running, and a new CCM keeps the address', async () => {
  await client.create(SERVICES, { metadata: { name: 'steady', namespace: 'default' }, spec: { type: 'LoadBalancer', ports: [{ port: 18095 }] } });
  const nodePort = (await client.get(SERVICES, 'steady', 'default')).spec!.ports![0].nodePort as number;
  await f.serveNodePort('steady-a', instances[0].privateIp, nodePort);
  const vip = await eventually('steady ingress', async () => (await client.get(SERVICES, 'steady', 'default')).status?.loadBalancer?.ingress?.[0]?.ip as string | undefined, 10_000);
  await eventually('steady serves', async () => (await httpGet(vip, 18095)) === 'steady-a', 10_000);
  await f.stopCcm();
  assert.equal(await httpGet(vip, 18095), 'steady-a', 'the balancer carries traffic while no CCM runs');
  const before = await f.balancers();
  await f.startCcm();
  await eventually('the new CCM has synced the Service', async () => (await f.eventReasons('steady')).filter((r) => r === 'EnsuredLoadBalancer').length >= 2, 10_000);
  assert.deepEqual((await f.balancers()).map((b) => [b.name, b.address, b.createdAt]), before.map((b) => [b.name, b.address, b.createdAt]));
  assert.equal((await client.get(SERVICES, 'steady', 'default')).status!.loadBalancer!.ingress![0].ip, vip);
  assert.equal(await httpGet(vip, 18095), 'steady-a');
  await client.delete(SERVICES, 'steady', 'default');
  await eventually('steady gone', async () => (await client.read(SERVICES, 'steady', 'default')) === undefined && (await f.balancers()).length === 0, 10_000);
});

test('a NotReady node whose instance is stopped is tainted shutdown; once terminated it is deleted', async () => {
  const victim = instances[1];
  await f.setReady(victim.name, 'False');
  await cloud.client.operate('stop', victim.id);
  await eventually('shutdown taint', async () => ((await client.get(NODES, victim.name)).spec!.taints ?? []).some((t: Obj) => t.key === 'node.cloudprovider.kubernetes.io/shutdown'), 15_000);
  await cloud.client.operate('terminate', victim.id);
  await eventually(`${victim.name} deleted`, async () => (await client.read(NODES, victim.name)) === undefined, 15_000);
  assert.ok((await f.eventReasons(victim.name)).includes('DeletingNode'));
  assert.ok(await client.read(NODES, instances[0].name), 'Ready nodes stay');
});
