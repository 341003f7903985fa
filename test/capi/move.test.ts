// test: shared-addresses (starts a local cloud)
// `bosun cluster move` between two management clusters (two embedded API servers, each running
// Cluster API's controllers) that share one local cloud, with the real CLI: the cluster's objects
// move owners first without their status, nothing is created or torn down in the cloud, the source
// keeps nothing of the cluster, and the target then manages it — its controllers adopt the running
// instances and scale its MachineDeployment. A move the target cannot take touches nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSION, CLUSTERS, INFRA_API_VERSION, LOCAL_CLUSTERS, LOCAL_MACHINES, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_SETS } from '../../src/capi/api.js';
import { loadBalancerName } from '../../src/capi/local/localcluster-controller.js';
import { type Obj, type ResourceRef, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { runBosun } from '../helpers/cli.js';
import { EMPTY_IGNITION, type CapiCluster, startCapiCluster } from './capi-fixture.js';

const NS = 'moving';
const NAME = 'mv';
let source: CapiCluster;
let target: CapiCluster;

before(async () => {
  source = await startCapiCluster();
  target = await startCapiCluster({ sharedCloud: source.cloud });
});
after(async () => {
  await target?.close();
  await source?.close();
});

const objects = [
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mv-worker-data', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': NAME } }, data: { value: Buffer.from(EMPTY_IGNITION).toString('base64') } },
  { apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: { name: NAME, namespace: NS }, spec: {} },
  { apiVersion: API_VERSION, kind: 'Cluster', metadata: { name: NAME, namespace: NS }, spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', name: NAME } } },
  { apiVersion: INFRA_API_VERSION, kind: 'LocalMachineTemplate', metadata: { name: 'mv-small', namespace: NS }, spec: { template: { spec: { instanceType: 'local.small' } } } },
  {
    apiVersion: API_VERSION, kind: 'MachineDeployment', metadata: { name: 'mv-md-0', namespace: NS },
    spec: {
      clusterName: NAME, replicas: 2,
      selector: { matchLabels: { pool: 'mv-md-0' } },
      template: {
        metadata: { labels: { pool: 'mv-md-0' } },
        spec: { clusterName: NAME, version: 'v1.33.0', bootstrap: { dataSecretName: 'mv-worker-data' }, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 'mv-small' } },
      },
    },
  },
];

const names = async (c: CapiCluster, ref: ResourceRef) => ((await c.kube.list(ref, NS)).items ?? []).map((o) => o.metadata.name).sort();
const running = async () => (await source.cloud.client.listInstances()).filter((i) => i.name.startsWith('mv-md-0') && i.state === 'running');

test('bosun cluster move: the target takes the cluster over, the cloud is untouched, the source keeps nothing', { timeout: 180_000 }, async () => {
  await source.kubectlOk(['create', 'namespace', NS]);
  for (const o of objects) await source.kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
  const before = await eventually('two worker instances running', async () => {
    const r = await running();
    return r.length === 2 ? r : undefined;
  }, 60_000);
  await eventually('the source\'s Cluster Provisioned', async () => ((await source.kube.read(CLUSTERS, NAME, NS))?.status?.phase === 'Provisioned' ? true : undefined), 30_000);
  const lb = (await source.cloud.client.listLoadBalancers()).find((b) => b.name === loadBalancerName({ metadata: { name: NAME, namespace: NS } }));
  assert.ok(lb, 'the LocalCluster has its balancer');

  // Dry run: what would move, nothing changed.
  const dry = await runBosun(['cluster', 'move', NAME, '-n', NS, `--kubeconfig=${source.api.server.kubeconfigPath}`, `--to-kubeconfig=${target.api.server.kubeconfigPath}`, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  const listed = dry.stdout.trim().split('\n');
  assert.equal(listed[0], 'Cluster/mv', 'owners first');
  for (const key of ['LocalCluster/mv', 'MachineDeployment/mv-md-0', 'LocalMachineTemplate/mv-small', 'Secret/mv-worker-data']) assert.ok(listed.includes(key), key);
  assert.equal(listed.filter((k) => k.startsWith('Machine/')).length, 2);
  assert.equal(listed.filter((k) => k.startsWith('LocalMachine/')).length, 2);
  assert.ok(listed.indexOf('MachineDeployment/mv-md-0') < listed.findIndex((k) => k.startsWith('MachineSet/')), 'a MachineSet after its MachineDeployment');
  assert.equal((await source.kube.read(CLUSTERS, NAME, NS))?.spec?.paused, undefined);

  const moved = await runBosun(['cluster', 'move', NAME, '-n', NS, `--kubeconfig=${source.api.server.kubeconfigPath}`, `--to-kubeconfig=${target.api.server.kubeconfigPath}`]);
  assert.equal(moved.code, 0, moved.stderr);
  assert.match(moved.stdout, new RegExp(`Discovered ${listed.length} objects of cluster moving/mv\\nPaused cluster moving/mv on the source\\nCreated ${listed.length} objects on the target\\nDeleted ${listed.length} objects from the source\\nResumed cluster moving/mv on the target`));

  // The source keeps nothing of it; the cloud kept everything.
  // (An object still finishing its deletion may be listed for a moment after the command's answer.)
  for (const ref of [CLUSTERS, LOCAL_CLUSTERS, MACHINE_DEPLOYMENTS, MACHINE_SETS, MACHINES, LOCAL_MACHINES] as ResourceRef[]) {
    await eventually(`no ${ref.resource} left on the source`, async () => ((await names(source, ref)).length === 0 ? true : undefined), 30_000)
      .catch(async () => assert.deepEqual(await names(source, ref), [], ref.resource));
  }
  assert.equal(await source.kube.read(resources.secrets, 'mv-worker-data', NS), undefined);
  assert.deepEqual((await running()).map((i) => i.id).sort(), before.map((i) => i.id).sort(), 'the same instances run');
  assert.ok((await source.cloud.client.listLoadBalancers()).some((b) => b.name === lb.name && b.address === lb.address), 'the balancer stays');

  // The target has it, without the source's status, and manages it: owners rebuilt, instances adopted.
  const cluster = await target.kube.get(CLUSTERS, NAME, NS) as Obj;
  assert.equal(cluster.spec.paused, false);
  const md = await target.kube.get(MACHINE_DEPLOYMENTS, 'mv-md-0', NS) as Obj;
  const sets = ((await target.kube.list(MACHINE_SETS, NS)).items ?? []) as Obj[];
  assert.equal(sets[0].metadata.ownerReferences[0].uid, md.metadata.uid, 'the MachineSet is owned by the target\'s MachineDeployment');
  await eventually('the target adopts the running instances', async () => {
    const lms = ((await target.kube.list(LOCAL_MACHINES, NS)).items ?? []) as Obj[];
    const ids = lms.map((lm) => lm.status?.instanceID).filter(Boolean).sort();
    return JSON.stringify(ids) === JSON.stringify(before.map((i) => i.id).sort()) ? true : undefined;
  }, 30_000);
  await target.kubectlOk(['scale', 'machinedeployment', 'mv-md-0', '-n', NS, '--replicas=3']);
  const after3 = await eventually('a third instance, made by the target', async () => {
    const r = await running();
    return r.length === 3 ? r : undefined;
  }, 60_000);
  for (const i of before) assert.ok(after3.some((x) => x.id === i.id), `instance ${i.name} kept`);
  assert.equal((await source.cloud.client.listInstances()).filter((i) => i.name.startsWith('mv-md-0') && i.state === 'terminated').length, 0);

  // Moving it back onto a cluster that already has it: refused, nothing touched.
  const again = await runBosun(['cluster', 'move', NAME, '-n', NS, `--kubeconfig=${target.api.server.kubeconfigPath}`, `--to-kubeconfig=${target.api.server.kubeconfigPath}`]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /the target cluster already has Cluster\/mv, .* in namespace moving: nothing moved/);
  assert.equal((await target.kube.get(CLUSTERS, NAME, NS) as Obj).spec.paused, false);
  const missing = await runBosun(['cluster', 'move', 'nope', '-n', NS, `--kubeconfig=${target.api.server.kubeconfigPath}`, `--to-kubeconfig=${source.api.server.kubeconfigPath}`]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cluster moving\/nope not found/);
});
