// test: shared-addresses (starts a local cloud)
// MachineSets and MachineDeployments against the embedded API server and a real local cloud:
// a MachineSet keeps its replicas, clones its LocalMachineTemplate per Machine, and scales down
// the Machine marked cluster.x-k8s.io/delete-machine first, then by its deletion order; a
// MachineDeployment rolls a template change with maxSurge 1 / maxUnavailable 0 — a new machine
// is Ready before an old one is deleted, never more than replicas+1 machines, never fewer than
// `replicas` available — and `kubectl scale machinedeployment` adds and removes machines.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSION, LOCAL_MACHINES, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_SETS } from '../../src/capi/api.js';
import { Informer, type Obj, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { CLUSTER, NS, type CapiCluster, createClusterObjects, machineDeployment, machineSpec, machinesOf, runKubelets, startCapiCluster, waitForRunning } from './capi-fixture.js';

let c: CapiCluster;
const kubelets = new AbortController();
let kubeletLoop: Promise<void>;
before(async () => {
  c = await startCapiCluster();
  await createClusterObjects(c);
  kubeletLoop = runKubelets(c, kubelets.signal);
});
after(async () => {
  kubelets.abort();
  await kubeletLoop;
  await c?.close();
});

const isReady = (m: Obj) => m.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True');

test('a MachineSet keeps its replicas and deletes the marked Machine first, then by its deletion order', async () => {
  await c.kube.create(MACHINE_SETS, {
    apiVersion: API_VERSION, kind: 'MachineSet', metadata: { name: 'set', namespace: NS },
    spec: { clusterName: CLUSTER, replicas: 3, selector: { matchLabels: { pool: 'set' } }, template: { metadata: { labels: { pool: 'set' } }, spec: machineSpec() }, deletion: { order: 'Newest' } },
  });
  const machines = await waitForRunning(c, 'pool=set', 3);
  for (const m of machines) {
    assert.equal(m.metadata.labels['cluster.x-k8s.io/set-name'], 'set');
    assert.equal(m.metadata.ownerReferences[0].kind, 'MachineSet');
    assert.deepEqual(m.spec.infrastructureRef, { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name: m.metadata.name });
    const lm = await c.kube.get(LOCAL_MACHINES, m.metadata.name, NS);
    assert.equal(lm.metadata.annotations!['cluster.x-k8s.io/cloned-from-name'], 'small');
    assert.equal(lm.spec.instanceType, 'local.small');
  }
  const set = await eventually('the set\'s status', async () => {
    const s = await c.kube.get(MACHINE_SETS, 'set', NS);
    return s.status?.readyReplicas === 3 && s.status?.availableReplicas === 3 ? s : undefined;
  });
  assert.equal(set.status!.selector, 'pool=set');
  assert.match((await c.kubectlOk(['-n', NS, 'get', 'ms', 'set'])).split('\n')[1], /^set\s+local\s+3\s+3\s+3\s+3\s+3\s+/);

  const byAge = [...machines].sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) || a.metadata.name.localeCompare(b.metadata.name));
  const marked = byAge[0].metadata.name;
  await c.kube.mergePatch(MACHINES, marked, NS, { metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } } });
  await c.kubectlOk(['-n', NS, 'scale', 'machineset', 'set', '--replicas', '2']);
  let left = await waitForRunning(c, 'pool=set', 2);
  assert.ok(!left.some((m) => m.metadata.name === marked), 'the annotated machine went first, though it is the oldest and the order is Newest');
  await eventually(`${marked} gone`, async () => !(await c.kube.read(MACHINES, marked, NS)));

  const newest = [...left].sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp) || b.metadata.name.localeCompare(a.metadata.name))[0].metadata.name;
  await c.kubectlOk(['-n', NS, 'scale', 'machineset', 'set', '--replicas', '1']);
  left = await waitForRunning(c, 'pool=set', 1);
  assert.notEqual(left[0].metadata.name, newest, 'Newest: the newest machine went');

  // A machine deleted by hand is replaced.
  await c.kube.delete(MACHINES, left[0].metadata.name, NS);
  const replaced = await waitForRunning(c, 'pool=set', 1);
  assert.notEqual(replaced[0].metadata.name, left[0].metadata.name);
  await c.kube.delete(MACHINE_SETS, 'set', NS);
});

test('a MachineDeployment rolls a template change with maxSurge 1 / maxUnavailable 0: new Ready before old deleted', async () => {
  await c.kube.create(MACHINE_DEPLOYMENTS, machineDeployment('workers', 2, { rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } }));
  const before = await waitForRunning(c, 'pool=workers', 2);
  const oldNames = new Set(before.map((m) => m.metadata.name));
  const firstSet = (await c.kube.list(MACHINE_SETS, NS, { labelSelector: 'cluster.x-k8s.io/deployment-name=workers' })).items;
  assert.equal(firstSet.length, 1);
  assert.equal(firstSet[0].metadata.annotations!['machinedeployment.clusters.x-k8s.io/revision'], '1');
  assert.equal(firstSet[0].metadata.name, `workers-${firstSet[0].metadata.labels!['machine-template-hash']}`);

  // Watch the rollout: every state of the machines the API server passes through, one sample
  // per watch event (polling could miss a deletion that completes between two polls).
  const samples: { live: number; available: number; oldDeleting: number; newReady: number }[] = [];
  const watching = new Informer(c.kube, MACHINES, { namespace: NS, labelSelector: 'pool=workers' });
  let listed = false; // the first list arrives one add at a time: not states the API server was in
  watching.on(() => {
    if (!listed) return;
    const ms = watching.list();
    const live = ms.filter((m) => !m.metadata.deletionTimestamp);
    samples.push({
      live: live.length, available: live.filter(isReady).length,
      oldDeleting: ms.filter((m) => oldNames.has(m.metadata.name) && m.metadata.deletionTimestamp).length,
      newReady: live.filter((m) => !oldNames.has(m.metadata.name) && isReady(m)).length,
    });
  });
  watching.start();
  await watching.waitForSync();
  listed = true;
  await c.kube.mergePatch(MACHINE_DEPLOYMENTS, 'workers', NS, { spec: { template: { spec: { version: 'v1.33.1' } } } });
  const deletedAt = new Map<string, string>();
  const after = await eventually('the rollout to finish', async () => {
    const ms = await machinesOf(c, 'pool=workers');
    for (const m of ms) if (m.metadata.deletionTimestamp && !deletedAt.has(m.metadata.name)) deletedAt.set(m.metadata.name, m.metadata.deletionTimestamp);
    const done = ms.length === 2 && ms.every((m) => !oldNames.has(m.metadata.name) && m.spec.version === 'v1.33.1' && m.status?.phase === 'Running' && isReady(m));
    return done ? ms : undefined;
  }, 60_000);
  await watching.stop();

  const firstNewReady = Math.min(...after.map((m) => Date.parse(m.status.conditions.find((x: Obj) => x.type === 'Ready').lastTransitionTime)));
  const firstOldDeleted = Math.min(...[...deletedAt.values()].map(Date.parse));
  assert.ok(deletedAt.size >= 1, 'old machines were seen being deleted');
  assert.ok(firstNewReady <= firstOldDeleted, `a new machine was Ready (${new Date(firstNewReady).toISOString()}) before an old one was deleted (${new Date(firstOldDeleted).toISOString()})`);
  assert.ok(samples.some((s) => s.oldDeleting > 0), 'the sampling saw an old machine being deleted');
  assert.ok(samples.every((s) => s.oldDeleting === 0 || s.newReady > 0), 'no old machine was being deleted before a new one was Ready');
  assert.ok(samples.every((s) => s.live <= 3), `never more than replicas + maxSurge machines: ${JSON.stringify(samples.filter((s) => s.live > 3))}`);
  assert.ok(samples.every((s) => s.available >= 2), `never fewer than replicas − maxUnavailable available: ${JSON.stringify(samples.filter((s) => s.available < 2))}`);

  const sets = await eventually('the old MachineSet deleted', async () => {
    const items = (await c.kube.list(MACHINE_SETS, NS, { labelSelector: 'cluster.x-k8s.io/deployment-name=workers' })).items;
    return items.length === 1 ? items : undefined;
  }, 30_000);
  assert.equal(sets[0].metadata.annotations!['machinedeployment.clusters.x-k8s.io/revision'], '2');
  for (const m of after) assert.equal(m.status.conditions.find((x: Obj) => x.type === 'UpToDate')?.status, 'True');
  const md = await eventually('the deployment\'s status', async () => {
    const d = await c.kube.get(MACHINE_DEPLOYMENTS, 'workers', NS);
    return d.status?.upToDateReplicas === 2 && d.status?.availableReplicas === 2 && d.status?.phase === 'Running' ? d : undefined;
  });
  assert.equal(md.status!.conditions!.find((x: Obj) => x.type === 'RollingOut')?.status, 'False');
});

test('kubectl scale machinedeployment adds a machine, and scaling back removes one, drained and terminated', async () => {
  assert.match(await c.kubectlOk(['-n', NS, 'scale', 'machinedeployment', 'workers', '--replicas=3']), /scaled/);
  const three = await waitForRunning(c, 'pool=workers', 3);
  await c.kubectlOk(['-n', NS, 'scale', 'md', 'workers', '--replicas=2']);
  const two = await waitForRunning(c, 'pool=workers', 2);
  const gone = three.find((m) => !two.some((t) => t.metadata.name === m.metadata.name))!;
  await eventually(`${gone.metadata.name} gone`, async () => !(await c.kube.read(MACHINES, gone.metadata.name, NS)));
  const [instance] = (await c.cloud.client.listInstances({ names: [gone.metadata.name] }));
  assert.equal(instance.state, 'terminated');
  assert.equal(await c.kube.read(resources.nodes, gone.metadata.name), undefined);
  const events = JSON.parse(await c.kubectlOk(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${gone.metadata.name}`, '-o', 'json'])).items.map((e: Obj) => e.reason);
  assert.ok(events.includes('SuccessfulDrainNode'), `drained before it went: ${events}`);
  const row = (await c.kubectlOk(['-n', NS, 'get', 'md', 'workers'])).split('\n')[1];
  assert.match(row, /^workers\s+local\s+True\s+2\s+2\s+2\s+2\s+2\s+Running\s+/);
});
