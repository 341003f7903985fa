// The scheduler against the embedded API server: Nodes (allocatable, taints, zones) and Pods
// created directly, as a node agent and a workload controller would. Pods are bound to the right
// nodes through pods/binding and spread across zones; a pod that fits nowhere stays Pending with
// PodScheduled=False and a FailedScheduling Event in kube-scheduler's exact words, and is bound as
// soon as a node that fits it joins; two pods racing for a node's last slot do not both get it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler } from '../../src/cluster/scheduler/scheduler.js';
import { KubeClient, type Obj, type ResourceRef } from '../../src/kube/client.js';
import { EventRecorder } from '../../src/kube/events.js';
import { InformerFactory } from '../../src/kube/informer.js';
import { registry } from '../../src/kube/metrics.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { node, pod } from './scheduler-fixtures.js';
import type { Node, Pod } from '../../src/cluster/scheduler/types.js';

const NODES: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'nodes', namespaced: false };
const PODS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const EVENTS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'events', namespaced: true };

async function withScheduler(body: (ctx: { api: TestApiServer; client: KubeClient }) => Promise<void>, backoff = { initialBackoffMs: 100, maxBackoffMs: 400 }, before?: (client: KubeClient) => Promise<void>): Promise<void> {
  const api = await startTestApiServer({ port: 0 });
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await before?.(client);
  const scheduler = new Scheduler({
    client,
    informers: new InformerFactory(client),
    events: new EventRecorder(client, { component: 'default-scheduler' }),
    ...backoff,
  });
  const stop = new AbortController();
  const running = scheduler.start(stop.signal);
  try {
    await body({ api, client });
  } finally {
    stop.abort();
    await running;
    await api.stop();
  }
}

async function createNode(client: KubeClient, n: Node): Promise<void> {
  await client.create(NODES, n);
  await client.mergePatch(NODES, n.metadata.name, undefined, { status: n.status }, 'status');
}

const master = (name: string, zone: string) => node(name, { zone, labels: { 'node-role.kubernetes.io/master': '' }, taints: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }] });
const boundNode = async (client: KubeClient, name: string) => (await client.get(PODS, name, 'default')).spec?.nodeName as string | undefined;

test('pods are bound where they fit and spread across zones; one that fits nowhere waits with kube\'s message until a node fits it', async () => {
  await withScheduler(async ({ api, client }) => {
    for (const n of [master('m0', 'a'), master('m1', 'b'), master('m2', 'c'), node('w0', { zone: 'a', cpu: '2' }), node('w1', { zone: 'b', cpu: '2' })]) await createNode(client, n);

    // A pod for the masters of zone c only.
    await client.create(PODS, pod('on-master', { nodeSelector: { 'topology.kubernetes.io/zone': 'c' }, tolerations: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' }] }));
    // Four replicas spread by zone, two in each worker zone. (nodeTaintsPolicy Honor leaves the
    // tainted masters' zones out; with the default, Ignore, zone c would count as an empty domain
    // and hold the skew at one pod per zone, as in kube.)
    const spread = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', nodeTaintsPolicy: 'Honor', labelSelector: { matchLabels: { app: 'web' } } }];
    for (let i = 0; i < 4; i++) await client.create(PODS, pod(`web-${i}`, { labels: { app: 'web' }, requests: { cpu: '100m' }, topologySpreadConstraints: spread }));
    // Needs more cpu than any worker has.
    await client.create(PODS, pod('big', { requests: { cpu: '3' } }));

    await eventually('on-master bound to m2', async () => (await boundNode(client, 'on-master')) === 'm2');
    const placements = await eventually('web pods bound', async () => {
      const nodes = await Promise.all([0, 1, 2, 3].map((i) => boundNode(client, `web-${i}`)));
      return nodes.every(Boolean) && nodes;
    });
    assert.deepEqual([...placements].sort(), ['w0', 'w0', 'w1', 'w1']);

    const message = '0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {node-role.kubernetes.io/master: }. preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.';
    const condition = await eventually('big marked unschedulable', async () => {
      const big = await client.get(PODS, 'big', 'default');
      return big.status?.conditions?.find((c: Obj) => c.type === 'PodScheduled' && c.status === 'False');
    });
    assert.equal(condition.reason, 'Unschedulable');
    assert.equal(condition.message, message);
    assert.equal((await client.get(PODS, 'big', 'default')).spec.nodeName, undefined);
    const event = await eventually('FailedScheduling event', async () =>
      (await client.list(EVENTS, 'default')).items.find((e: Obj) => e.reason === 'FailedScheduling' && e.involvedObject?.name === 'big'));
    assert.equal(event.type, 'Warning');
    assert.equal(event.message, message);
    assert.equal(event.source?.component, 'default-scheduler');
    // What an administrator sees.
    const described = await api.kubectlOk(['describe', 'pod', 'big']);
    assert.match(described, /FailedScheduling/);
    assert.ok(described.includes('0/5 nodes are available: 2 Insufficient cpu'), described);

    // A node that fits joins: big is bound to it, without anything else happening.
    await createNode(client, node('w2', { zone: 'c', cpu: '8' }));
    await eventually('big bound to w2', async () => (await boundNode(client, 'big')) === 'w2', 15_000);
    const scheduled = (await client.list(EVENTS, 'default')).items.find((e: Obj) => e.reason === 'Scheduled' && e.involvedObject?.name === 'big');
    assert.equal(scheduled?.message, 'Successfully assigned default/big to w2');
  });
});

test('with no nodes at all a pod waits with kube\'s "no nodes available to schedule pods", no preemption sentence after it', async () => {
  await withScheduler(async ({ client }) => {
    await client.create(PODS, pod('early'));
    const condition = await eventually('early marked unschedulable', async () => {
      const early = await client.get(PODS, 'early', 'default');
      return early.status?.conditions?.find((c: Obj) => c.type === 'PodScheduled' && c.status === 'False');
    });
    assert.equal(condition.message, 'no nodes available to schedule pods');
    const event = await eventually('FailedScheduling event', async () =>
      (await client.list(EVENTS, 'default')).items.find((e: Obj) => e.reason === 'FailedScheduling' && e.involvedObject?.name === 'early'));
    assert.equal(event.message, 'no nodes available to schedule pods');
  });
});

test('pods racing for the last slots of a node: assumed placements count, so no node is overcommitted', async () => {
  await withScheduler(async ({ client }) => {
    await createNode(client, node('only', { cpu: '1', pods: '3' }));
    // Created together: each needs 300m; the node takes three (by cpu, 900m of 1000m, and by pod count).
    await Promise.all(Array.from({ length: 5 }, (_, i) => client.create(PODS, pod(`p${i}`, { requests: { cpu: '300m' } }))));
    await eventually('three bound, two waiting', async () => {
      const pods = (await client.list(PODS, 'default')).items as Pod[];
      const bound = pods.filter((p) => p.spec.nodeName === 'only').length;
      const waiting = pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')).length;
      return bound === 3 && waiting === 2;
    });
    const waiting = ((await client.list(PODS, 'default')).items as Pod[]).find((p) => !p.spec.nodeName)!;
    const condition = waiting.status!.conditions!.find((c) => c.type === 'PodScheduled')!;
    assert.equal(condition.message, '0/1 nodes are available: 1 Insufficient cpu, 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.');

    // A bound pod goes away: one waiting pod takes its place (the other still does not fit).
    const gone = ((await client.list(PODS, 'default')).items as Pod[]).find((p) => p.spec.nodeName === 'only')!;
    await client.delete(PODS, gone.metadata.name, 'default', { gracePeriodSeconds: 0 });
    await eventually('a waiting pod bound after the delete', async () => {
      const pods = (await client.list(PODS, 'default')).items as Pod[];
      return pods.filter((p) => p.spec.nodeName === 'only').length === 3 && pods.length === 4;
    });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(((await client.list(PODS, 'default')).items as Pod[]).filter((p) => p.spec.nodeName === 'only').length, 3, 'never more than fit');
  });
});

test('a pod whose requests do not parse is told why, once, instead of blocking the queue', async () => {
  await withScheduler(async ({ client }) => {
    await createNode(client, node('w0'));
    await client.create(PODS, pod('odd', { requests: { cpu: 'lots' } }));
    await client.create(PODS, pod('fine', { requests: { cpu: '100m' } }));
    await eventually('fine bound', async () => (await boundNode(client, 'fine')) === 'w0');
    const condition = await eventually('odd marked', async () =>
      (await client.get(PODS, 'odd', 'default')).status?.conditions?.find((c: Obj) => c.type === 'PodScheduled'));
    assert.equal(condition.status, 'False');
    assert.equal(condition.reason, 'SchedulerError');
    assert.match(condition.message, /^quantities must match the regular expression .*"lots"$/);
    assert.equal(await boundNode(client, 'odd'), undefined);
  });
});

test('uncordoning a node and removing scheduling gates bring waiting pods back', async () => {
  await withScheduler(async ({ client }) => {
    await createNode(client, node('w0', { unschedulable: true }));
    await client.create(PODS, pod('waits'));
    await client.create(PODS, pod('gated', { schedulingGates: [{ name: 'example.com/quota' }] }));
    const waiting = await eventually('waits unschedulable', async () =>
      (await client.get(PODS, 'waits', 'default')).status?.conditions?.find((c: Obj) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    assert.equal(waiting.message, '0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.');
    const gated = await eventually('gated condition', async () =>
      (await client.get(PODS, 'gated', 'default')).status?.conditions?.find((c: Obj) => c.type === 'PodScheduled'));
    assert.deepEqual([gated.status, gated.reason, gated.message], ['False', 'SchedulingGated', 'Scheduling is blocked due to non-empty scheduling gates']);

    await client.mergePatch(NODES, 'w0', undefined, { spec: { unschedulable: null } });
    await eventually('waits bound after uncordon', async () => (await boundNode(client, 'waits')) === 'w0');
    assert.equal(await boundNode(client, 'gated'), undefined, 'gated pods are not scheduled');
    await client.mergePatch(PODS, 'gated', 'default', { spec: { schedulingGates: null } });
    await eventually('gated bound once its gates are gone', async () => (await boundNode(client, 'gated')) === 'w0');
  });
});

test('a node change retries a waiting pod only when that node now fits it (queueing hints): a tainted node\'s other changes cost the pod no attempt, and it is bound once the taint goes', async () => {
  const unschedulableAttempts = async () => ((await registry.getSingleMetric('scheduler_schedule_attempts_total')?.get())?.values ?? []).find((v) => v.labels.result === 'unschedulable')?.value ?? 0;
  await withScheduler(async ({ client }) => {
    const uninitialized = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
    await createNode(client, node('booting', { taints: [uninitialized] }));
    const before = await unschedulableAttempts();
    await client.create(PODS, pod('operator'));
    await eventually('the pod marked unschedulable', async () => (await client.get(PODS, 'operator', 'default')).status?.conditions?.some((c: Obj) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    // The node changes in ways the scheduler looks at (labels), still tainted: before queueing
    // hints each change cost the pod an attempt after its back-off (at most 400 ms here).
    for (let i = 0; i < 3; i++) {
      await client.mergePatch(NODES, 'booting', undefined, { metadata: { labels: { [`example.com/step-${i}`]: 'done' } } });
      await new Promise((r) => setTimeout(r, 500)); // room for a futile attempt's back-off to pass
    }
    await client.mergePatch(NODES, 'booting', undefined, { spec: { taints: [] } });
    await eventually('the pod bound once the taint is gone', async () => (await boundNode(client, 'operator')) === 'booting', 10_000);
    assert.equal(await unschedulableAttempts() - before, 1, 'one attempt while the node was tainted, none for its label changes');
  });
});

test('an idle scheduler does not wait out a back-off: a waiting pod is tried as soon as a node that fits it comes (KEP-5142)', async () => {
  const unschedulableAttempts = async () => ((await registry.getSingleMetric('scheduler_schedule_attempts_total')?.get())?.values ?? []).find((v) => v.labels.result === 'unschedulable')?.value ?? 0;
  // A back-off of ten minutes: were it waited out, the pod would not be bound within the wait below.
  await withScheduler(async ({ client }) => {
    const before = await unschedulableAttempts();
    await client.create(PODS, pod('early'));
    await eventually('the pod marked unschedulable (no nodes)', async () => (await client.get(PODS, 'early', 'default')).status?.conditions?.some((c: Obj) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    await createNode(client, node('w0'));
    await eventually('the pod bound to the new node with nothing else to schedule', async () => (await boundNode(client, 'early')) === 'w0', 20_000);
    assert.equal(await unschedulableAttempts() - before, 1, 'one attempt before the node, one that bound it');
  }, { initialBackoffMs: 600_000, maxBackoffMs: 600_000 });
});

test('pods of higher priority are tried first: with room for one, the pending pod of the highest PriorityClass gets it', async () => {
  const PRIORITY_CLASSES: ResourceRef<Obj> = { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', namespaced: false };
  // Everything is pending before the scheduler starts, so all three are in its queue at once (in name order).
  await withScheduler(async ({ client }) => {
    await eventually('the high-priority pod bound', async () => (await boundNode(client, 'b-high')) === 'only');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await boundNode(client, 'a-low'), undefined, 'no room left for the earlier, lower one');
    assert.equal(await boundNode(client, 'c-low'), undefined);
  }, undefined, async (client) => {
    await createNode(client, node('only', { zone: 'a', cpu: '1' }));
    await client.create(PRIORITY_CLASSES, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 });
    for (const [name, priorityClassName] of [['a-low', undefined], ['b-high', 'high'], ['c-low', undefined]]) {
      await client.create(PODS, pod(name as string, { requests: { cpu: '1' }, ...(priorityClassName ? { priorityClassName } : {}) }));
    }
  });
});

test('a pod with an unbound WaitForFirstConsumer claim: the claim is given the node whose volume fits, the pod bound only once the claim is', async () => {
  const PVCS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'persistentvolumeclaims', namespaced: true };
  const PVS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'persistentvolumes', namespaced: false };
  const CLASSES: ResourceRef<Obj> = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', namespaced: false };
  await withScheduler(async ({ client }) => {
    for (const n of [node('a'), node('b')]) await createNode(client, n);
    await client.create(CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' });
    await client.create(PVS, {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'disk-b' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'local', local: { path: '/mnt/disk' }, nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['b'] }] }] } } },
    });
    // No binder runs here: the volume is made Available by hand, as the binder would.
    await client.mergePatch(PVS, 'disk-b', undefined, { status: { phase: 'Available' } }, 'status');
    await client.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Gi' } } } });
    await client.create(PODS, pod('db', { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] }));
    const selected = await eventually('the selected node', async () => (await client.get(PVCS, 'data', 'default')).metadata.annotations?.['volume.kubernetes.io/selected-node']);
    assert.equal(selected, 'b', 'the node where a volume fits');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await boundNode(client, 'db'), undefined, 'not bound while its claim is not');
    // The binder's part: the claim bound to the volume.
    await client.mergePatch(PVCS, 'data', 'default', { spec: { volumeName: 'disk-b' } });
    await client.mergePatch(PVCS, 'data', 'default', { status: { phase: 'Bound' } }, 'status');
    await eventually('db bound to b', async () => (await boundNode(client, 'db')) === 'b');
  });
});
