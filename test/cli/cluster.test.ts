// `bosun cluster versions` and `bosun cluster generate` as a user runs them: the real command,
// its output, its help, and clear errors for bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { runBosun } from '../helpers/cli.js';
import { clusterNetworkFor, substitute, templateVariables, CLUSTER_TEMPLATE } from '../../src/capi/kubeadm/cluster-template.js';

test('bosun cluster versions lists the installable versions with their etcd', async () => {
  const r = await runBosun(['cluster', 'versions']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'VERSION   ETCD       COREDNS\nv1.32.5   3.5.16-0   v1.11.3\nv1.33.1   3.5.21-0   v1.12.0\n');
});

test('bosun cluster generate prints the quick-start objects with the variables filled in and the namespace set', async () => {
  const r = await runBosun(['cluster', 'generate', 'dev', '--kubernetes-version', 'v1.32.5', '--control-plane-machine-count', '3', '--worker-machine-count', '2', '--target-namespace', 'team-a'], { env: { POD_CIDR: '', SERVICE_CIDR: '', KUBERNETES_VERSION: '' } });
  assert.equal(r.code, 0, r.stderr);
  const objects = parseAllDocuments(r.stdout).map((d) => d.toJS());
  assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`), [
    'Cluster/dev', 'LocalCluster/dev', 'LocalMachineTemplate/dev-control-plane', 'KubeadmControlPlane/dev-control-plane',
    'LocalMachineTemplate/dev-md-0', 'KubeadmConfigTemplate/dev-md-0', 'MachineDeployment/dev-md-0',
  ]);
  assert.ok(objects.every((o) => o.metadata.namespace === 'team-a'));
  const [cluster, , , kcp, , template, md] = objects;
  const network = clusterNetworkFor('team-a', 'dev');
  assert.deepEqual(cluster.spec.clusterNetwork, { pods: { cidrBlocks: [network.podCidr] }, serviceDomain: 'cluster.local', services: { cidrBlocks: [network.serviceCidr] } });
  assert.deepEqual(cluster.spec.controlPlaneRef, { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', name: 'dev-control-plane' });
  assert.equal(kcp.spec.replicas, 3);
  assert.equal(kcp.spec.version, 'v1.32.5');
  assert.equal(template.spec, undefined, 'Cluster API\'s KubeadmConfigTemplate has no spec');
  assert.equal(md.spec.replicas, 2);
  assert.deepEqual(md.spec.template.spec.bootstrap.configRef, { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfigTemplate', name: 'dev-md-0' });
  assert.match(r.stdout, /^apiVersion: cluster\.x-k8s\.io\/v1beta2\nkind: Cluster\nmetadata:\n {2}name: dev\n {2}namespace: team-a\nspec:\n {2}clusterNetwork:\n {4}pods:\n {6}cidrBlocks:\n {6}- 127\./);
});

test('bosun cluster generate: the environment sets variables as for clusterctl; bad input gets a clear error', async () => {
  const env = await runBosun(['cluster', 'generate', 'dev'], { env: { KUBERNETES_VERSION: 'v1.33.1', POD_CIDR: '127.99.0.0/16', SERVICE_CIDR: '127.199.0.0/16' } });
  assert.equal(env.code, 0, env.stderr);
  assert.match(env.stdout, /- 127\.99\.0\.0\/16/);
  assert.match(env.stdout, /version: v1\.33\.1/);
  const cases: Array<[string[], RegExp]> = [
    [['dev', '--kubernetes-version', 'v1.20.0'], /Kubernetes version "v1\.20\.0" cannot be installed by bosun; supported versions: v1\.32\.5, v1\.33\.1/],
    [['dev'], /--kubernetes-version is required/],
    [['dev', '--kubernetes-version', 'v1.33.1', '--control-plane-machine-count', '2'], /cannot be an even number when etcd is stacked/],
    [['dev', '--kubernetes-version', 'v1.33.1', '--worker-machine-count', 'two'], /--worker-machine-count must be a whole number, not "two"/],
    [['Dev_1', '--kubernetes-version', 'v1.33.1'], /cluster name "Dev_1" must be a DNS label/],
    [['dev', '--kubernetes-version', 'v1.33.1', '--flavor', 'ha'], /no flavor "ha"/],
  ];
  for (const [args, message] of cases) {
    const r = await runBosun(['cluster', 'generate', ...args], { env: { KUBERNETES_VERSION: '' } });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '', 'nothing printed on error');
  }
});

test('bosun cluster --help lists generate and versions; generate --help shows its flags and an example', async () => {
  const group = await runBosun(['cluster', '--help']);
  assert.equal(group.code, 0);
  assert.match(group.stdout, /generate \[options\] <name>/);
  assert.match(group.stdout, /versions/);
  const help = await runBosun(['cluster', 'generate', '--help']);
  for (const flag of ['--kubernetes-version <version>', '--control-plane-machine-count <n>', '--worker-machine-count <n>', '--target-namespace <namespace>', '--flavor <flavor>', 'POD_CIDR', 'Example:']) assert.ok(help.stdout.includes(flag), flag);
});

test('the template\'s variables are clusterctl\'s; a missing one is named; the networks avoid the management cluster\'s ranges', () => {
  assert.deepEqual(templateVariables(CLUSTER_TEMPLATE), ['CLUSTER_NAME', 'SERVICE_CIDR', 'POD_CIDR', 'CONTROL_PLANE_MACHINE_COUNT', 'KUBERNETES_VERSION', 'WORKER_MACHINE_COUNT']);
  assert.throws(() => substitute(CLUSTER_TEMPLATE, { CLUSTER_NAME: 'x' }), /value for variables \[SERVICE_CIDR, POD_CIDR, CONTROL_PLANE_MACHINE_COUNT, KUBERNETES_VERSION, WORKER_MACHINE_COUNT\] is not set/);
  for (const name of ['a', 'dev', 'prod', 'capi-quickstart', 'x'.repeat(63)]) {
    const n = clusterNetworkFor('default', name);
    assert.deepEqual(n, clusterNetworkFor('default', name), 'deterministic');
    const second = (cidr: string) => Number(cidr.split('.')[1]);
    assert.ok(second(n.podCidr) >= 64 && second(n.podCidr) < 128, n.podCidr);
    assert.ok(second(n.serviceCidr) >= 128 && second(n.serviceCidr) < 192, n.serviceCidr);
    assert.ok(![0, 1, 30].includes(second(n.podCidr)) && ![0, 1, 30].includes(second(n.serviceCidr)));
  }
});
