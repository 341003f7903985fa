// The Deployment controller against the embedded API server with the ReplicaSet controller and
// the scheduler/kubelet stand-ins: a rolling update watched event by event never exceeds maxSurge
// nor maxUnavailable (ints and percentages), `kubectl rollout status` returns once it is done,
// `kubectl rollout undo` brings the old ReplicaSet back under a new revision, Recreate never runs
// old and new pods together, history is trimmed to revisionHistoryLimit, pause holds a rollout,
// and a rollout that makes no progress reports ProgressDeadlineExceeded. The pure numbers
// (fenceposts, new ReplicaSet size, proportional scaling) as tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { controllerOf, InformerFactory, type Obj, loadKubeConfig } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { DEPLOYMENTS, PODS, REPLICA_SETS } from '../../src/cluster/workloads/resources.js';
import { fenceposts, newReplicaSetSize, proportionalSizes } from '../../src/cluster/workloads/deployment-scaling.js';
import { isReady } from '../../src/cluster/workloads/pods.js';
import { eventually } from '../helpers/eventually.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';

const deployment = (name: string, replicas: number, spec: Obj = {}): api.Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } },
    ...spec,
  },
} as api.Deployment);

async function withCluster(fn: (api: TestApiServer, client: import('../../src/kube/index.js').KubeClient) => Promise<void>, standIn: Parameters<typeof startStandIns>[1] = {}): Promise<void> {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const standIns = startStandIns(client, { readyAfterMs: 100, ...standIn });
  try {
    await createNode(client, 'node-1');
    await createNode(client, 'node-2');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['replicaset', 'deployment'], leaderElection: false });
    await fn(api, client);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
}

/** Watches a Deployment's ReplicaSets and pods and records, at every event, the figures the bounds are about. */
function observe(client: import('../../src/kube/index.js').KubeClient, app: string) {
  const factory = new InformerFactory(client);
  const pods = factory.forResource(PODS, { namespace: 'default', labelSelector: `app=${app}` });
  const sets = factory.forResource(REPLICA_SETS, { namespace: 'default', labelSelector: `app=${app}` });
  const seen = { maxReplicaSetTotal: 0, maxPods: 0, minAvailable: Infinity, events: 0, together: false };
  pods.on(() => {
    const active = pods.list().filter((p) => !p.metadata.deletionTimestamp);
    seen.events++;
    seen.maxPods = Math.max(seen.maxPods, active.length);
    seen.minAvailable = Math.min(seen.minAvailable, active.filter(isReady).length);
    seen.together ||= new Set(active.map((p) => controllerOf(p)?.name)).size > 1;
  });
  sets.on(() => {
    seen.maxReplicaSetTotal = Math.max(seen.maxReplicaSetTotal, sets.list().reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0));
  });
  const stop = new AbortController();
  factory.start(stop.signal);
  return {
    seen,
    ready: () => factory.waitForSync(),
    reset: () => Object.assign(seen, { maxReplicaSetTotal: 0, maxPods: 0, minAvailable: Infinity, events: 0, together: false }),
    async stop() {
      stop.abort();
      await factory.stop();
    },
  };
}

const ownedSets = async (client: import('../../src/kube/index.js').KubeClient, app: string) =>
  ((await client.list(REPLICA_SETS, 'default', { labelSelector: `app=${app}` })).items).sort((a, b) => Number(a.metadata.annotations?.['deployment.kubernetes.io/revision']) - Number(b.metadata.annotations?.['deployment.kubernetes.io/revision']));

test('a rolling update stays within maxSurge and maxUnavailable at every observed moment; rollout status, undo and history work with the real kubectl', async () => {
  await withCluster(async (api, client) => {
    for (const [name, replicas, maxSurge, maxUnavailable, surge, unavailable] of [
      ['web', 4, 1, 1, 1, 1],
      ['pct', 10, '25%', '25%', 3, 2], // surge rounds up (2.5 → 3), unavailable down (2.5 → 2)
    ] as const) {
      await client.create(DEPLOYMENTS, deployment(name, replicas, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } }));
      const first = await api.kubectl(['rollout', 'status', `deployment/${name}`, '--timeout=60s'], { timeoutMs: 70_000 });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, new RegExp(`deployment "${name}" successfully rolled out`));
      const watcher = observe(client, name);
      await watcher.ready();
      watcher.reset();
      await api.kubectlOk(['set', 'image', `deployment/${name}`, 'c=img:2']);
      const rolled = await api.kubectl(['rollout', 'status', `deployment/${name}`, '--timeout=60s'], { timeoutMs: 70_000 });
      assert.equal(rolled.code, 0, rolled.stderr);
      assert.match(rolled.stdout, /Waiting for deployment .* rollout to finish/, 'kubectl saw the rollout in progress');
      assert.match(rolled.stdout, new RegExp(`deployment "${name}" successfully rolled out`));
      await new Promise((r) => setTimeout(r, 300));
      await watcher.stop();
      const { seen } = watcher;
      assert.ok(seen.events > replicas * 2, `observed the rollout (${seen.events} pod events)`);
      assert.ok(seen.maxReplicaSetTotal <= replicas + surge, `ReplicaSets sized ${seen.maxReplicaSetTotal} > ${replicas} + maxSurge ${surge}`);
      assert.ok(seen.maxPods <= replicas + surge, `${seen.maxPods} pods at once > ${replicas} + maxSurge ${surge}`);
      assert.ok(seen.minAvailable >= replicas - unavailable, `only ${seen.minAvailable} ready at one moment < ${replicas} - maxUnavailable ${unavailable}`);
      assert.equal(seen.maxReplicaSetTotal, replicas + surge, 'the surge was used');

      const d = await client.get(DEPLOYMENTS, name, 'default');
      const [oldRS, newRS] = await ownedSets(client, name);
      assert.match(newRS.metadata.name, new RegExp(`^${name}-[bcdfghjklmnpqrstvwxz2456789]+$`));
      assert.equal(newRS.metadata.labels!['pod-template-hash'], newRS.metadata.name.slice(name.length + 1));
      assert.deepEqual([oldRS.spec!.replicas, newRS.spec!.replicas], [0, replicas]);
      assert.deepEqual([oldRS.metadata.annotations!['deployment.kubernetes.io/revision'], newRS.metadata.annotations!['deployment.kubernetes.io/revision']], ['1', '2']);
      assert.equal(d.metadata.annotations!['deployment.kubernetes.io/revision'], '2');
      assert.deepEqual(
        { ...d.status, conditions: undefined },
        { observedGeneration: 2, replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas, conditions: undefined },
      );
      const conditions = Object.fromEntries(d.status!.conditions!.map((c) => [c.type, [c.status, c.reason, c.message]]));
      assert.deepEqual(conditions, {
        Available: ['True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
        Progressing: ['True', 'NewReplicaSetAvailable', `ReplicaSet "${newRS.metadata.name}" has successfully progressed.`],
      });
    }

    // Roll back: kubectl copies the old ReplicaSet's template back; that ReplicaSet returns as revision 3.
    const [original] = await ownedSets(client, 'web');
    await api.kubectlOk(['rollout', 'undo', 'deployment/web']);
    const undone = await api.kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(undone.code, 0, undone.stderr);
    const after = await ownedSets(client, 'web');
    assert.equal(after.length, 2, 'no third ReplicaSet: the old one was reused');
    const back = after.find((rs) => rs.metadata.uid === original.metadata.uid)!;
    assert.equal(back.spec!.replicas, 4);
    assert.equal(back.metadata.annotations!['deployment.kubernetes.io/revision'], '3');
    assert.equal(back.metadata.annotations!['deployment.kubernetes.io/revision-history'], '1');
    assert.equal((await client.get(DEPLOYMENTS, 'web', 'default')).metadata.annotations!['deployment.kubernetes.io/revision'], '3');
    const history = await api.kubectlOk(['rollout', 'history', 'deployment/web']);
    assert.match(history, /^2\s/m);
    assert.match(history, /^3\s/m);
    assert.doesNotMatch(history, /^1\s/m);

    // A plain resize is a scaling event: the active ReplicaSet follows, nothing rolls.
    await api.kubectlOk(['scale', 'deployment/web', '--replicas=6']);
    assert.equal((await api.kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'], { timeoutMs: 70_000 })).code, 0);
    assert.deepEqual((await ownedSets(client, 'web')).map((rs) => rs.spec!.replicas), [0, 6]);
  });
});

test('Recreate never runs old and new pods together; history is trimmed to revisionHistoryLimit; pause holds a rollout', async () => {
  await withCluster(async (api, client) => {
    await client.create(DEPLOYMENTS, deployment('batch', 3, { strategy: { type: 'Recreate' }, revisionHistoryLimit: 1 }));
    assert.equal((await api.kubectl(['rollout', 'status', 'deployment/batch', '--timeout=60s'], { timeoutMs: 70_000 })).code, 0);
    const watcher = observe(client, 'batch');
    await watcher.ready();
    for (const image of ['img:2', 'img:3', 'img:4']) {
      await api.kubectlOk(['set', 'image', 'deployment/batch', `c=${image}`]);
      const r = await api.kubectl(['rollout', 'status', 'deployment/batch', '--timeout=60s'], { timeoutMs: 70_000 });
      assert.equal(r.code, 0, r.stderr);
    }
    await watcher.stop();
    assert.equal(watcher.seen.together, false, 'old and new pods never ran at once');
    await eventually('history trimmed to 1 old ReplicaSet', async () => (await ownedSets(client, 'batch')).length === 2);
    assert.deepEqual((await ownedSets(client, 'batch')).map((rs) => rs.metadata.annotations!['deployment.kubernetes.io/revision']), ['3', '4']);

    await api.kubectlOk(['rollout', 'pause', 'deployment/batch']);
    await eventually('the paused condition', async () => {
      const c = (await client.get(DEPLOYMENTS, 'batch', 'default')).status!.conditions!.find((x) => x.type === 'Progressing');
      return c!.status === 'Unknown' && c!.reason === 'DeploymentPaused' && c!.message === 'Deployment is paused';
    });
    await api.kubectlOk(['set', 'image', 'deployment/batch', 'c=img:5']);
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok((await ownedSets(client, 'batch')).every((rs) => rs.spec!.template!.spec!.containers[0].image !== 'img:5'), 'no new ReplicaSet while paused');
    await api.kubectlOk(['rollout', 'resume', 'deployment/batch']);
    assert.equal((await api.kubectl(['rollout', 'status', 'deployment/batch', '--timeout=60s'], { timeoutMs: 70_000 })).code, 0);
    assert.equal((await ownedSets(client, 'batch')).at(-1)!.spec!.template!.spec!.containers[0].image, 'img:5');
  });
});

test('a rollout whose pods never become ready ends Progressing=False ProgressDeadlineExceeded, and kubectl says so', async () => {
  await withCluster(
    async (api, client) => {
      await client.create(DEPLOYMENTS, deployment('stuck', 2, { progressDeadlineSeconds: 2 }));
      assert.equal((await api.kubectl(['rollout', 'status', 'deployment/stuck', '--timeout=60s'], { timeoutMs: 70_000 })).code, 0);
      await api.kubectlOk(['set', 'image', 'deployment/stuck', 'c=broken']);
      const r = await api.kubectl(['rollout', 'status', 'deployment/stuck', '--timeout=30s'], { timeoutMs: 40_000 });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /deployment "stuck" exceeded its progress deadline/);
      const d = await client.get(DEPLOYMENTS, 'stuck', 'default');
      const newRS = (await ownedSets(client, 'stuck')).at(-1)!;
      const progressing = d.status!.conditions!.find((c) => c.type === 'Progressing');
      assert.deepEqual([progressing!.status, progressing!.reason, progressing!.message], ['False', 'ProgressDeadlineExceeded', `ReplicaSet "${newRS.metadata.name}" has timed out progressing.`]);
      // maxUnavailable 25% of 2 rounds down to 0: the old pods all stay available.
      assert.equal(d.status!.availableReplicas, 2);
    },
    { holdReady: (pod) => pod.spec!.containers[0].image === 'broken' },
  );
});

test('rollout numbers as kube computes them', () => {
  const d = (replicas: number, maxSurge: unknown, maxUnavailable: unknown, status: Obj = {}) => deployment('d', replicas, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } }, ...status });
  const fenceCases: Array<[number, unknown, unknown, [number, number]]> = [
    [10, '25%', '25%', [3, 2]],
    [4, 1, 0, [1, 0]],
    [4, 0, 0, [0, 1]], // both zero: one may be unavailable
    [3, '10%', '10%', [1, 0]],
    [5, '0%', '0%', [0, 1]],
    [10, 2, '50%', [2, 5]],
  ];
  for (const [replicas, surge, unavailable, want] of fenceCases) assert.deepEqual(fenceposts(d(replicas, surge, unavailable)), want, `${replicas} ${surge} ${unavailable}`);

  const rs = (name: string, replicas: number, maxReplicas?: number, created = '2026-01-01T00:00:00Z'): api.ReplicaSet => ({
    metadata: { name, creationTimestamp: created, annotations: maxReplicas === undefined ? {} : { 'deployment.kubernetes.io/max-replicas': String(maxReplicas) } },
    spec: { replicas },
  } as api.ReplicaSet);
  // New ReplicaSet growth: limited by what maxSurge leaves.
  assert.equal(newReplicaSetSize(d(4, 1, 1), [rs('old', 4), rs('new', 0)], rs('new', 0)), 1);
  assert.equal(newReplicaSetSize(d(4, 1, 1), [rs('old', 2), rs('new', 2)], rs('new', 2)), 3);
  assert.equal(newReplicaSetSize(d(4, 1, 1), [rs('old', 3), rs('new', 2)], rs('new', 2)), 2);
  // Proportional scaling mid-rollout: 10 → 20 with old 8 and new 5 (sized for 13) grows both by their share.
  const sizes = proportionalSizes(d(20, 3, 2), [rs('old', 8, 13, '2026-01-01T00:00:00Z'), rs('new', 5, 13, '2026-01-02T00:00:00Z')]);
  assert.deepEqual(Object.fromEntries(sizes), { old: 14, new: 9 });
  assert.equal([...sizes.values()].reduce((a, b) => a + b, 0), 23);
  // Scaling down shares the cut the same way.
  const down = proportionalSizes(d(5, 1, 1), [rs('old', 8, 13, '2026-01-01T00:00:00Z'), rs('new', 5, 13, '2026-01-02T00:00:00Z')]);
  assert.equal([...down.values()].reduce((a, b) => a + b, 0), 6);
  assert.ok((down.get('old') ?? 0) > (down.get('new') ?? 0));
});
