// The ReplicaSet controller against the embedded API server: pods from the template with
// generated names and controller references, exactly `replicas` of them however fast the events
// come (expectations), adoption and release by selector, status counts with minReadySeconds, and
// scale-down in kube's order — unscheduled, pending, not ready, crowded nodes, recently ready —
// with the order's rules also checked as a table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { EventRecorder, InformerFactory, type KubeClient, realClock, resources, rfc3339 } from '../../src/kube/index.js';
import type { WorkloadContext } from '../../src/cluster/workloads/context.js';
import { replicaSetController } from '../../src/cluster/workloads/replicaset-controller.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { CONFIG_MAPS, SECRETS, CONTROLLER_REVISIONS, DAEMON_SETS, DEPLOYMENTS, ENDPOINT_SLICES, ENDPOINTS, JOBS, LEASES, NAMESPACES, NODES, PODS, REPLICA_SETS, SERVICES } from '../../src/cluster/workloads/resources.js';
import { deletionOrder } from '../../src/cluster/workloads/delete-order.js';
import { loadKubeConfig } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, LaggingInformer, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';

const rs = (name: string, replicas: number, extra: Partial<api.ReplicaSet['spec']> = {}): api.ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace: 'default' },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name, tier: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } }, ...extra },
});

const podsOf = async (client: KubeClient, app: string) => (await client.list(PODS, 'default', { labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);

test('a ReplicaSet makes exactly its replicas, owned and named from it, adopts and releases by selector, and reports its status', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const standIns = startStandIns(client);
  // Every pod creation, counted from a watch: a controller acting on a stale cache would overshoot.
  const created = new Set<string>();
  const watch = await client.open('GET', '/api/v1/namespaces/default/pods', { query: { watch: 1, labelSelector: 'app=web' }, signal: stop.signal });
  let partial = ''; // a line split across chunks waits for its end
  watch.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const event = JSON.parse(line);
      if (event.type === 'ADDED') created.add(event.object.metadata.uid);
    }
  });
  watch.on('error', () => undefined);
  try {
    await createNode(client, 'node-1');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['replicaset'], leaderElection: false });
    // An orphan the selector matches, made before the ReplicaSet: adopted, so only 19 are created.
    await client.create(PODS, { metadata: { name: 'orphan', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:0' }] } });
    const set = await client.create(REPLICA_SETS, rs('web', 20));
    const status = await eventually('20 ready replicas', async () => {
      const s = (await client.get(REPLICA_SETS, 'web', 'default')).status;
      return s?.readyReplicas === 20 && s?.availableReplicas === 20 && s;
    });
    assert.deepEqual({ ...status }, { replicas: 20, fullyLabeledReplicas: 19, readyReplicas: 20, availableReplicas: 20, observedGeneration: 1 });
    const pods = await podsOf(client, 'web');
    assert.equal(pods.length, 20);
    for (const pod of pods) {
      const ref = pod.metadata.ownerReferences?.[0];
      assert.deepEqual(ref, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true });
      if (pod.metadata.name !== 'orphan') assert.match(pod.metadata.name, /^web-[a-z0-9]{5}$/);
    }
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(created.size, 20, 'never more pods created than the replicas (1 orphan + 19)');

    // A pod relabelled out of the selector is released (and replaced); the template's labels count.
    await client.mergePatch(PODS, 'orphan', 'default', { metadata: { labels: { app: 'elsewhere' } } });
    await eventually('the released pod to lose its owner', async () => !(await client.get(PODS, 'orphan', 'default')).metadata.ownerReferences);
    await eventually('a replacement and full labels', async () => {
      const s = (await client.get(REPLICA_SETS, 'web', 'default')).status;
      return s?.replicas === 20 && s?.fullyLabeledReplicas === 20 && s?.readyReplicas === 20;
    });

    // minReadySeconds: ready pods become available only after it.
    await client.create(REPLICA_SETS, rs('slow', 2, { minReadySeconds: 2 }));
    await eventually('ready but not yet available', async () => {
      const s = (await client.get(REPLICA_SETS, 'slow', 'default')).status;
      return s?.readyReplicas === 2 && !s.availableReplicas;
    });
    await eventually('available after minReadySeconds', async () => (await client.get(REPLICA_SETS, 'slow', 'default')).status?.availableReplicas === 2, 10_000);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});

test('with a slow pod informer, expectations keep the ReplicaSet controller from creating twice', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  try {
    const factory = new InformerFactory(client);
    const ctx: WorkloadContext = {
      client,
      informers: {
        pods: new LaggingInformer(client, PODS, 1500),
        nodes: factory.forResource(NODES),
        replicaSets: factory.forResource(REPLICA_SETS),
        deployments: factory.forResource(DEPLOYMENTS),
        daemonSets: factory.forResource(DAEMON_SETS),
        controllerRevisions: factory.forResource(CONTROLLER_REVISIONS),
        jobs: factory.forResource(JOBS),
        get statefulSets() { return factory.forResource(resources.statefulSets); },
        get cronJobs() { return factory.forResource(resources.cronJobs); },
        get horizontalPodAutoscalers() { return factory.forResource(resources.horizontalPodAutoscalers); },
        get resourceQuotas() { return factory.forResource(resources.resourceQuotas); },
        services: factory.forResource(SERVICES),
        endpoints: factory.forResource(ENDPOINTS),
        endpointSlices: factory.forResource(ENDPOINT_SLICES),
        namespaces: factory.forResource(NAMESPACES),
        rootCaConfigMaps: factory.forResource(CONFIG_MAPS),
        nodeLeases: factory.forResource(LEASES),
        get secrets() { return factory.forResource(SECRETS); },
        get configMaps() { return factory.forResource(CONFIG_MAPS); },
        get persistentVolumeClaims() { return factory.forResource(resources.persistentVolumeClaims); },
        get persistentVolumes() { return factory.forResource(resources.persistentVolumes); },
        get storageClasses() { return factory.forResource(resources.storageClasses); },
        get mutatingWebhookConfigurations() { return factory.forResource(resources.mutatingWebhookConfigurations); },
        get validatingWebhookConfigurations() { return factory.forResource(resources.validatingWebhookConfigurations); },
      },
      events: new EventRecorder(client, { component: 'replicaset-controller' }),
      clock: realClock,
    };
    const controller = replicaSetController(ctx);
    factory.start(stop.signal);
    const running = controller.run(stop.signal);
    await client.create(REPLICA_SETS, rs('lag', 5));
    // The controller's own status write wakes it again long before it sees its pods.
    await eventually('the status write', async () => (await client.get(REPLICA_SETS, 'lag', 'default')).status?.observedGeneration === 1);
    await client.mergePatch(REPLICA_SETS, 'lag', 'default', { metadata: { labels: { touched: 'yes' } } });
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal((await podsOf(client, 'lag')).length, 5, 'exactly the replicas, though the cache showed none for 1.5 s');
    stop.abort();
    await running;
    await factory.stop();
  } finally {
    stop.abort();
    await api.stop();
  }
});

test('scaling a ReplicaSet down deletes in kube order: unscheduled, pending, not ready, crowded node, most recently ready', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  try {
    await createNode(client, 'node-1');
    await createNode(client, 'node-2');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['replicaset'], leaderElection: false });
    await client.create(REPLICA_SETS, rs('db', 6));
    const pods = await eventually('6 pods', async () => {
      const list = await podsOf(client, 'db');
      return list.length === 6 && list;
    });
    // Play scheduler and kubelet by hand to put each pod in a known state.
    const [unscheduled, pending, notReady, crowdedOld, crowdedNew, alone] = pods.map((p) => p.metadata.name);
    const bind = (name: string, node: string) => client.request('POST', `/api/v1/namespaces/default/pods/${name}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } } });
    const setStatus = (name: string, readySince?: number) =>
      client.mergePatch(PODS, name, 'default', {
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: readySince ? 'True' : 'False', lastTransitionTime: rfc3339(new Date(readySince ?? Date.now())) }] },
      }, 'status');
    await bind(pending, 'node-2');
    await bind(notReady, 'node-2');
    await setStatus(notReady);
    await bind(crowdedOld, 'node-1');
    await setStatus(crowdedOld, Date.now() - 3 * 3600_000);
    await bind(crowdedNew, 'node-1');
    await setStatus(crowdedNew, Date.now() - 60_000);
    await bind(alone, 'node-2');
    await setStatus(alone, Date.now() - 600_000);
    void unscheduled;

    const remaining = async () => (await podsOf(client, 'db')).map((p) => p.metadata.name).sort();
    const scaleTo = async (replicas: number, expected: string[]) => {
      await client.mergePatch(REPLICA_SETS, 'db', 'default', { spec: { replicas } });
      await eventually(`${replicas} left`, async () => (await remaining()).length === replicas, 10_000);
      assert.deepEqual(await remaining(), [...expected].sort(), `after scaling to ${replicas}`);
    };
    await scaleTo(3, [crowdedOld, crowdedNew, alone]); // unscheduled, pending, not ready went first
    // Ready pods: node-1 holds two of them (both in node-2 counts: pending and not-ready pods are gone).
    await scaleTo(2, [crowdedOld, alone]); // the crowded node loses its most recently ready pod
    await scaleTo(1, [crowdedOld]); // one each per node now: the more recently ready goes
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await api.stop();
  }
});

test('deletion order rules, one at a time', () => {
  const now = Date.UTC(2026, 0, 1, 12);
  const pod = (name: string, o: { node?: string; phase?: string; readyAgoMs?: number; cost?: number; restarts?: number; createdAgoMs?: number } = {}): api.Pod => ({
    metadata: {
      name,
      uid: name,
      creationTimestamp: rfc3339(new Date(now - (o.createdAgoMs ?? 3600_000))),
      annotations: o.cost !== undefined ? { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) } : {},
    },
    spec: o.node ? { nodeName: o.node } : {},
    status: {
      phase: o.phase ?? 'Running',
      conditions: o.readyAgoMs !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339(new Date(now - o.readyAgoMs)) }] : [],
      containerStatuses: [{ restartCount: o.restarts ?? 0 }],
    },
  } as api.Pod);
  const rank = () => 0;
  const cases: Array<[string, api.Pod, api.Pod]> = [
    ['unscheduled before scheduled', pod('a', { phase: 'Pending' }), pod('b', { node: 'n', phase: 'Pending' })],
    ['pending before running', pod('a', { node: 'n', phase: 'Pending' }), pod('b', { node: 'n' })],
    ['not ready before ready', pod('a', { node: 'n' }), pod('b', { node: 'n', readyAgoMs: 1000 })],
    ['lower deletion cost first', pod('a', { node: 'n', readyAgoMs: 1000, cost: -5 }), pod('b', { node: 'n', readyAgoMs: 1000 })],
    ['ready more recently first (another log2 bucket)', pod('a', { node: 'n', readyAgoMs: 60_000 }), pod('b', { node: 'n', readyAgoMs: 3600_000 })],
    ['more restarts first', pod('a', { node: 'n', restarts: 3 }), pod('b', { node: 'n', restarts: 1 })],
    ['newer first', pod('a', { node: 'n', createdAgoMs: 60_000 }), pod('b', { node: 'n', createdAgoMs: 7200_000 })],
    ['same age bucket: by uid', pod('a', { node: 'n', createdAgoMs: 1000 }), pod('b', { node: 'n', createdAgoMs: 1001 })],
  ];
  for (const [rule, first, second] of cases) {
    assert.ok(deletionOrder(first, second, rank, now) < 0, rule);
    assert.ok(deletionOrder(second, first, rank, now) > 0, `${rule} (reversed)`);
  }
  const crowded = pod('a', { node: 'busy', readyAgoMs: 1000 });
  const spread = pod('b', { node: 'quiet', readyAgoMs: 1000 });
  assert.ok(deletionOrder(crowded, spread, (p) => (p.spec!.nodeName === 'busy' ? 3 : 1), now) < 0, 'pods on crowded nodes first');
});

test('a pod deleted gracefully is replaced while it terminates: not counted by its ReplicaSet, gone from the endpoints, removed once its kubelet finishes', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  // The kubelet stand-in finishes graceful deletions only once `finishing` is true.
  let finishing = false;
  const standIns = startStandIns(client, { finishDeletion: () => finishing });
  try {
    await createNode(client, 'node-1');
    await client.create(SERVICES, { metadata: { name: 'graceful', namespace: 'default' }, spec: { selector: { app: 'graceful' }, ports: [{ port: 80 }] } });
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['replicaset', 'endpoint'], leaderElection: false });
    await client.create(REPLICA_SETS, rs('graceful', 2));
    await eventually('2 ready replicas', async () => (await client.get(REPLICA_SETS, 'graceful', 'default')).status?.readyReplicas === 2);
    const [victim] = await podsOf(client, 'graceful');
    const marked = await client.delete(PODS, victim.metadata.name, 'default');
    assert.equal(marked?.metadata.deletionGracePeriodSeconds, 30, 'bound to a node: deleted gracefully');
    // Terminating, it is not one of the two: a replacement comes at once, the endpoints drop it.
    const all = await eventually('a replacement beside the terminating pod', async () => {
      const pods = (await client.list(PODS, 'default', { labelSelector: 'app=graceful' })).items;
      return pods.length === 3 && pods.filter((p) => !p.metadata.deletionTimestamp).every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) && pods;
    });
    assert.equal(all.filter((p) => p.metadata.deletionTimestamp).length, 1);
    const status = (await client.get(REPLICA_SETS, 'graceful', 'default')).status!;
    assert.equal(status.replicas, 2, 'the terminating pod is not counted');
    const addresses = await eventually('endpoints without the terminating pod', async () => {
      const ep = await client.read(ENDPOINTS, 'graceful', 'default');
      const ips = (ep?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
      return ips.length === 2 && ips;
    });
    assert.ok(!addresses.includes(victim.status!.podIP!), 'the terminating pod\'s address is gone');
    finishing = true;
    // The next event on the pod is the kubelet's cue (a real one would see its grace period run out).
    await client.mergePatch(PODS, victim.metadata.name, 'default', { metadata: { annotations: { 'example.com/poke': '1' } } });
    await eventually('the terminating pod removed once its kubelet finishes', async () => !(await client.read(PODS, victim.metadata.name, 'default')));
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});
