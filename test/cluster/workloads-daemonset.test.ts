// The DaemonSet controller against the embedded API server with the real scheduler (binding the
// daemon pods through their node affinity on metadata.name) and the kubelet stand-in: exactly one
// pod per matching node (nodeSelector, taints against the tolerations it adds, the uninitialized
// taint only where the DaemonSet tolerates it), following nodes joining, changing and leaving,
// rolling updates within maxUnavailable and within maxSurge watched event by event, the status
// counts and `kubectl rollout status daemonset`; the node verdicts and tolerations as tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { InformerFactory, Manager, loadKubeConfig } from '../../src/kube/index.js';
import { addScheduler } from '../../src/cluster/scheduler/scheduler.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { CONTROLLER_REVISIONS, DAEMON_SETS, NODES, PODS } from '../../src/cluster/workloads/resources.js';
import { daemonTolerations, nodeVerdict, targetNode } from '../../src/cluster/workloads/daemonset.js';
import { isReady } from '../../src/cluster/workloads/pods.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';

const daemonSet = (name: string, spec: Partial<api.DaemonSet['spec']> = {}, podSpec: Partial<api.PodSpec> = {}): api.DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'agent:1' }], ...podSpec } },
    ...spec,
  },
});

const UNINITIALIZED = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };

test('a DaemonSet runs one pod on exactly the matching nodes, follows nodes joining and leaving, and rolls within maxUnavailable', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  // The real scheduler binds the daemon pods through their node affinity; the kubelet stand-in runs them.
  const standIns = startStandIns(client, { readyAfterMs: 100, schedule: false });
  const scheduler = new Manager({ name: 'scheduler', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
  addScheduler(scheduler);
  const scheduling = scheduler.start(stop.signal);
  try {
    await createNode(client, 'worker-a', { labels: { role: 'worker' } });
    await createNode(client, 'worker-b', { labels: { role: 'worker' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    await createNode(client, 'worker-c', { labels: { role: 'worker' }, unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] });
    await createNode(client, 'worker-d', { labels: { role: 'worker' }, taints: [UNINITIALIZED] });
    await createNode(client, 'master-0', { labels: { role: 'master' } });
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['daemonset'], leaderElection: false });
    await client.create(DAEMON_SETS, daemonSet('agent', {}, { nodeSelector: { role: 'worker' } }));
    // Before the cloud provider initialises a node, only DaemonSets that say so run there.
    await client.create(DAEMON_SETS, daemonSet('cloud', {}, { hostNetwork: true, tolerations: [{ key: UNINITIALIZED.key, operator: 'Exists', effect: 'NoSchedule' }] }));

    const nodesOf = async (app: string) =>
      (await client.list(PODS, 'default', { labelSelector: `app=${app}` })).items
        .filter((p) => !p.metadata.deletionTimestamp)
        .map((p) => p.spec!.nodeName ?? `unbound:${targetNode(p)}`)
        .sort();
    const settle = (app: string, want: string[]) =>
      eventually(`${app} on ${want.join(',')}`, async () => {
        const ds = await client.get(DAEMON_SETS, app, 'default');
        const s: Partial<NonNullable<api.DaemonSet['status']>> = ds.status ?? {};
        return JSON.stringify(await nodesOf(app)) === JSON.stringify(want) && s.numberReady === want.length && s.desiredNumberScheduled === want.length && ds;
      });
    let agent = await settle('agent', ['worker-a', 'worker-c']);
    assert.deepEqual(agent.status, { currentNumberScheduled: 2, numberMisscheduled: 0, desiredNumberScheduled: 2, numberReady: 2, observedGeneration: 1, updatedNumberScheduled: 2, numberAvailable: 2 });
    await settle('cloud', ['master-0', 'worker-a', 'worker-c', 'worker-d']);

    // Each pod is aimed at its node through node affinity, with the tolerations kube adds.
    const pod = ((await client.list(PODS, 'default', { labelSelector: 'app=cloud' })).items).find((p) => p.spec!.nodeName === 'worker-d')!;
    assert.deepEqual(pod.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['worker-d'] }] }] });
    assert.deepEqual(
      pod.spec!.tolerations!.map((t) => `${t.key}:${t.effect}`).sort(),
      [UNINITIALIZED.key, 'node.kubernetes.io/disk-pressure', 'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/network-unavailable', 'node.kubernetes.io/not-ready', 'node.kubernetes.io/pid-pressure', 'node.kubernetes.io/unreachable', 'node.kubernetes.io/unschedulable']
        .map((k) => `${k}:${k.endsWith('not-ready') || k.endsWith('unreachable') ? 'NoExecute' : 'NoSchedule'}`)
        .sort(),
    );
    assert.match(pod.metadata.labels!['controller-revision-hash'], /^[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(pod.metadata.ownerReferences![0].kind, 'DaemonSet');

    // Nodes join, change and leave.
    await createNode(client, 'worker-e', { labels: { role: 'worker' } });
    await settle('agent', ['worker-a', 'worker-c', 'worker-e']);
    await client.mergePatch(NODES, 'worker-b', undefined, { spec: { taints: null } }); // the dedicated taint is lifted
    await settle('agent', ['worker-a', 'worker-b', 'worker-c', 'worker-e']);
    await client.mergePatch(NODES, 'worker-a', undefined, { metadata: { labels: { role: 'retired' } } });
    await settle('agent', ['worker-b', 'worker-c', 'worker-e']);
    await client.delete(NODES, 'worker-e');
    // The pod bound to the deleted node is the pod garbage collector's; the DaemonSet stops counting the node.
    agent = await eventually('worker-e no longer desired', async () => {
      const ds = await client.get(DAEMON_SETS, 'agent', 'default');
      return ds.status!.desiredNumberScheduled === 3 && ds.status!.numberReady === 3 && ds;
    });
    assert.equal(agent.status!.numberMisscheduled, 0);
    await client.request('DELETE', '/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=agent', fieldSelector: 'spec.nodeName=worker-e' } });

    // Rolling update, watched: at no moment more than maxUnavailable (1) desired nodes without a ready pod.
    await settle('agent', ['worker-b', 'worker-c']);
    const factory = new InformerFactory(client);
    const pods = factory.forResource(PODS, { namespace: 'default', labelSelector: 'app=agent' });
    const watched = new AbortController();
    let worst = 0;
    let events = 0;
    let most = 0;
    let surging = 0;
    pods.on(() => {
      events++;
      const active = pods.list().filter((p) => !p.metadata.deletionTimestamp);
      const covered = new Set(active.filter(isReady).map((p) => p.spec!.nodeName));
      worst = Math.max(worst, ['worker-b', 'worker-c', 'worker-d'].filter((n) => !covered.has(n)).length);
      most = Math.max(most, active.length);
      // A node surging: an old pod still there beside a new one not ready yet (kube's maxSurge counts these).
      const nodes = new Set(active.map((p) => p.spec!.nodeName ?? targetNode(p)));
      const isNew = (p: api.Pod) => p.spec!.containers[0].image === 'agent:3';
      surging = Math.max(surging, [...nodes].filter((n) => {
        const here = active.filter((p) => (p.spec!.nodeName ?? targetNode(p)) === n);
        return here.some((p) => !isNew(p)) && here.some((p) => isNew(p) && !isReady(p));
      }).length);
    });
    factory.start(watched.signal);
    await factory.waitForSync();
    await client.mergePatch(NODES, 'worker-d', undefined, { spec: { taints: null } }); // initialised
    await settle('agent', ['worker-b', 'worker-c', 'worker-d']);
    worst = 0;
    await api.kubectlOk(['set', 'image', 'daemonset/agent', 'c=agent:2']);
    const r = await api.kubectl(['rollout', 'status', 'daemonset/agent', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /daemon set "agent" successfully rolled out/);
    const images = async () => ((await client.list(PODS, 'default', { labelSelector: 'app=agent' })).items).map((p) => p.spec!.containers[0].image);
    assert.deepEqual(await images(), ['agent:2', 'agent:2', 'agent:2']);
    assert.ok(events > 6, `observed the rollout (${events} events)`);
    assert.equal(worst, 1, 'one node at a time went without a ready pod');
    assert.equal(most, 3, 'no surge without maxSurge');

    // maxSurge 1, maxUnavailable 0: a new pod is ready beside the old before the old goes.
    await client.mergePatch(DAEMON_SETS, 'agent', 'default', { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }, template: { spec: { containers: [{ name: 'c', image: 'agent:3' }] } } } });
    [worst, most, events, surging] = [0, 0, 0, 0];
    const surged = await api.kubectl(['rollout', 'status', 'daemonset/agent', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(surged.code, 0, surged.stderr);
    await eventually('only new pods left', async () => JSON.stringify(await images()) === JSON.stringify(['agent:3', 'agent:3', 'agent:3']));
    watched.abort();
    await factory.stop();
    assert.ok(events > 6, `observed the surge rollout (${events} events)`);
    assert.equal(worst, 0, 'every node kept a ready pod throughout');
    assert.equal(surging, 1, 'one node surging at a time');
    assert.ok(most >= 4, 'a new pod ran beside an old one');

    // History: one ControllerRevision per template; kubectl reads it and rolls back through it.
    const history = await api.kubectlOk(['rollout', 'history', 'daemonset/agent']);
    assert.deepEqual(history.split('\n').map((l) => l.split(/\s+/)[0]).filter((w) => /^\d+$/.test(w)), ['1', '2', '3']);
    const undo = await api.kubectl(['rollout', 'undo', 'daemonset/agent', '--to-revision=1']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal((await api.kubectl(['rollout', 'status', 'daemonset/agent', '--timeout=60s'], { timeoutMs: 70_000 })).code, 0);
    await eventually('the first template back', async () => JSON.stringify(await images()) === JSON.stringify(['agent:1', 'agent:1', 'agent:1']));
    const revisions = ((await client.list(CONTROLLER_REVISIONS, 'default', { labelSelector: 'app=agent' })).items).map((h) => [h.data.spec.template.spec.containers[0].image, h.revision]);
    assert.deepEqual(revisions.sort((a, b) => a[1] - b[1]), [['agent:2', 2], ['agent:3', 3], ['agent:1', 4]], 'the rolled-back template took the next revision');
    assert.deepEqual((await client.get(DAEMON_SETS, 'agent', 'default')).status, {
      currentNumberScheduled: 3, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 3, observedGeneration: 4, updatedNumberScheduled: 3, numberAvailable: 3,
    });
    stop.abort();
    await running;
    await scheduling;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});

test('where a DaemonSet runs, as kube decides it', () => {
  const node = (name: string, o: { labels?: Record<string, string>; taints?: api.Taint[] } = {}): api.Node => ({ metadata: { name, labels: o.labels ?? {} }, spec: { taints: o.taints } });
  const ds = (podSpec: Partial<api.PodSpec> = {}) => daemonSet('x', {}, podSpec);
  const cases: Array<[string, api.Node, api.DaemonSet, boolean, boolean]> = [
    ['a plain node', node('n'), ds(), true, true],
    ['nodeSelector mismatch', node('n'), ds({ nodeSelector: { a: 'b' } }), false, false],
    ['required affinity In', node('n', { labels: { zone: 'a' } }), ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] } } } }), true, true],
    ['required affinity NotIn', node('n', { labels: { zone: 'a' } }), ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }] } } } }), false, false],
    ['matchFields on another name', node('n'), ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['m'] }] }] } } } }), false, false],
    ['untolerated NoSchedule: no new pod, the old may stay', node('n', { taints: [{ key: 'k', effect: 'NoSchedule' }] }), ds(), false, true],
    ['untolerated NoExecute: none', node('n', { taints: [{ key: 'k', effect: 'NoExecute' }] }), ds(), false, false],
    ['tolerated taint', node('n', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] }), ds({ tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }] }), true, true],
    ['not-ready NoExecute is tolerated by default', node('n', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }), ds(), true, true],
    ['unschedulable is tolerated by default', node('n', { taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }), ds(), true, true],
    ['network-unavailable only for hostNetwork', node('n', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }), ds(), false, true],
    ['network-unavailable with hostNetwork', node('n', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }), ds({ hostNetwork: true }), true, true],
    ['uninitialized is not tolerated by default', node('n', { taints: [UNINITIALIZED] }), ds(), false, true],
    ['template nodeName elsewhere', node('n'), ds({ nodeName: 'm' }), false, false],
  ];
  for (const [what, n, d, shouldRun, shouldContinueRunning] of cases) assert.deepEqual(nodeVerdict(n, d), { shouldRun, shouldContinueRunning }, what);
  // A toleration the template already has for the same key and effect is replaced, not doubled.
  const tolerations = daemonTolerations({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }] } as api.PodSpec);
  assert.equal(tolerations.filter((t) => t.key === 'node.kubernetes.io/not-ready').length, 1);
  assert.equal(tolerations.find((t) => t.key === 'node.kubernetes.io/not-ready')!.tolerationSeconds, undefined);
});
