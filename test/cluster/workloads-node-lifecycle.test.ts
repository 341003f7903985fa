// The node lifecycle controller against the embedded API server, with the ReplicaSet controller
// and the scheduler/kubelet stand-ins: a node whose kubelet stops renewing its Lease goes Ready
// Unknown and is tainted unreachable; its pods are marked not Ready, evicted when their
// tolerationSeconds run out (pods without their own keep the API server's 300 s default), and a
// ReplicaSet's pod is recreated on another node; a kubelet posting Ready=False gets the not-ready
// taints; a kubelet coming back clears them. Every node silent at once (master disruption) evicts
// nothing and lifts the evicting taints; within a zone, evicting taints go on at the eviction rate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { type KubeClient, loadKubeConfig, rfc3339 } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { LEASES, NAMESPACES, NODES, PODS, REPLICA_SETS } from '../../src/cluster/workloads/resources.js';
import { evictionDelay } from '../../src/cluster/workloads/node-lifecycle.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';

const UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * The kubelets' part: heartbeats through Leases and the Ready condition, every 300 ms for the
 * nodes in `alive` (which the test changes as kubelets fall silent or come back).
 */
function kubelets(client: KubeClient, alive: Set<string>) {
  /** The renewTime each node's Lease was last given (ms): what the grace period counts from. */
  const renewed = new Map<string, number>();
  const heartbeat = async (node: string, ready = 'True') => {
    const now = rfc3339(new Date());
    const lease = await client.read(LEASES, node, 'kube-node-lease');
    const renewTime = new Date();
    if (lease) await client.mergePatch(LEASES, node, 'kube-node-lease', { spec: { renewTime: renewTime.toISOString() } });
    else await client.create(LEASES, { metadata: { name: node, namespace: 'kube-node-lease' }, spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: renewTime.toISOString() } });
    renewed.set(node, Math.max(renewed.get(node) ?? 0, renewTime.getTime()));
    const n = await client.get(NODES, node);
    const old = (n.status?.conditions ?? []).find((c) => c.type === 'Ready');
    const transition = old?.status === ready ? old.lastTransitionTime : now;
    await client.mergePatch(NODES, node, undefined, { status: { conditions: [{ type: 'Ready', status: ready, reason: ready === 'True' ? 'KubeletReady' : 'KubeletNotReady', message: '', lastHeartbeatTime: now, lastTransitionTime: transition }] } }, 'status');
  };
  let beating = true;
  const beats = (async () => {
    while (beating) {
      for (const node of alive) await heartbeat(node).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return {
    heartbeat,
    lastRenewed: (node: string) => renewed.get(node) ?? 0,
    async stop() {
      beating = false;
      await beats;
    },
  };
}

test('a silent node goes Unknown and unreachable; its pods go after their toleration and come back elsewhere', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const alive = new Set(['node-a', 'node-b']);
  const standIns = startStandIns(client, { readyAfterMs: 20, kubeletUp: (node) => alive.has(node) });
  const beats = kubelets(client, alive);
  const { heartbeat } = beats;
  try {
    if (!(await client.read(NAMESPACES, 'kube-node-lease'))) await client.create(NAMESPACES, { metadata: { name: 'kube-node-lease' } });
    await createNode(client, 'node-a');
    await createNode(client, 'node-b');
    await heartbeat('node-a');
    await heartbeat('node-b');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['nodelifecycle', 'replicaset'], leaderElection: false, nodeLifecycle: { gracePeriodMs: 3000, evictionRate: 1 } });
    await client.create(REPLICA_SETS, {
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }], containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const podsOn = async (node: string, app?: string) => ((await client.list(PODS, 'default', app ? { labelSelector: `app=${app}` } : {})).items).filter((p) => p.spec!.nodeName === node && !p.metadata.deletionTimestamp);
    await eventually('one web pod on each node', async () => (await podsOn('node-a', 'web')).length === 1 && (await podsOn('node-b', 'web')).length === 1);
    await client.create(PODS, { metadata: { name: 'patient', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'i' }] } });
    const patient = await client.get(PODS, 'patient', 'default');
    assert.deepEqual(
      patient.spec!.tolerations!.map((t) => [t.key, t.effect, t.tolerationSeconds]),
      [['node.kubernetes.io/not-ready', 'NoExecute', 300], [UNREACHABLE, 'NoExecute', 300]],
      'the API server gives a pod the default 300 s tolerations',
    );
    await eventually('patient ready', async () => (await client.get(PODS, 'patient', 'default')).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

    // node-a's kubelet falls silent.
    alive.delete('node-a');
    const node = await eventually('node-a Unknown and unreachable', async () => {
      const n = await client.get(NODES, 'node-a');
      const ready = n.status!.conditions!.find((c) => c.type === 'Ready');
      return ready!.status === 'Unknown' && (n.spec!.taints ?? []).length === 2 && n;
    });
    // Counted from the last renewal, not from the moment the test fell silent: on a loaded
    // machine the last renewal can be most of a grace period older than that.
    assert.ok(Date.now() - beats.lastRenewed('node-a') >= 3000, 'not before the grace period (3 s after its last renewal)');
    const ready = node.status!.conditions!.find((c) => c.type === 'Ready');
    assert.deepEqual([ready!.reason, ready!.message], ['NodeStatusUnknown', 'Kubelet stopped posting node status.']);
    assert.deepEqual(node.spec!.taints!.map((t) => `${t.key}:${t.effect}`).sort(), [`${UNREACHABLE}:NoExecute`, `${UNREACHABLE}:NoSchedule`]);
    assert.ok(node.spec!.taints!.find((t) => t.effect === 'NoExecute')!.timeAdded);
    await eventually('its pods marked not Ready', async () => (await client.get(PODS, 'patient', 'default')).status!.conditions!.find((c) => c.type === 'Ready')!.status === 'False');
    // The web pod tolerates unreachable for 2 s: then it goes, and its ReplicaSet recreates it on node-b.
    await eventually('the web pod evicted and recreated on node-b', async () => (await podsOn('node-a', 'web')).length === 0 && (await podsOn('node-b', 'web')).length === 2, 15_000);
    assert.ok(await client.read(PODS, 'patient', 'default'), 'a pod tolerating 300 s stays');

    // A kubelet that reports NotReady: not-ready taints. Back to Ready: no taints.
    alive.add('node-a');
    await eventually('node-a untainted once its kubelet is back', async () => ((await client.get(NODES, 'node-a')).spec!.taints ?? []).length === 0);
    alive.delete('node-b');
    await heartbeat('node-b', 'False');
    await eventually('node-b tainted not-ready', async () => {
      const taints = (await client.get(NODES, 'node-b')).spec!.taints ?? [];
      return taints.some((t) => t.key === 'node.kubernetes.io/not-ready' && t.effect === 'NoExecute');
    });
    await beats.stop();
    stop.abort();
    await running;
  } finally {
    await beats.stop();
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});

test('eviction timing as the taint-eviction controller decides it', () => {
  const now = Date.UTC(2026, 0, 1);
  const taint = (key: string, secondsAgo = 0) => ({ key, effect: 'NoExecute', timeAdded: rfc3339(new Date(now - secondsAgo * 1000)) });
  const pod = (tolerations: api.Toleration[]) => ({ spec: { tolerations } } as api.Pod);
  const t = (key: string | undefined, seconds?: number) => ({ ...(key ? { key } : {}), operator: 'Exists', effect: 'NoExecute', ...(seconds === undefined ? {} : { tolerationSeconds: seconds }) });
  const cases: Array<[string, api.Pod, api.Taint[], number | undefined]> = [
    ['no NoExecute taint', pod([]), [{ key: 'x', effect: 'NoSchedule' }], undefined],
    ['untolerated: at once', pod([]), [taint(UNREACHABLE)], 0],
    ['tolerated for 300 s, added 100 s ago', pod([t(UNREACHABLE, 300)]), [taint(UNREACHABLE, 100)], 200_000],
    ['tolerated forever', pod([t(UNREACHABLE)]), [taint(UNREACHABLE, 100)], undefined],
    ['the shortest toleration in use wins', pod([t(UNREACHABLE, 300), t(undefined, 30)]), [taint(UNREACHABLE)], 30_000],
    ['past due', pod([t(UNREACHABLE, 10)]), [taint(UNREACHABLE, 60)], 0],
    ['one of two taints untolerated', pod([t(UNREACHABLE)]), [taint(UNREACHABLE), taint('node.kubernetes.io/not-ready')], 0],
  ];
  for (const [what, p, taints, want] of cases) assert.equal(evictionDelay(p, taints as never, now), want, what);
});

test('node health and taints as tables', async () => {
  const { nodeHealth, wantedTaints } = await import('../../src/cluster/workloads/node-lifecycle.js');
  const now = Date.UTC(2026, 0, 1, 12);
  const at = (secondsAgo: number) => rfc3339(new Date(now - secondsAgo * 1000));
  const node = (conditions: api.NodeCondition[], extra: api.Node['spec'] = {}): api.Node => ({ metadata: { name: 'n', creationTimestamp: at(600) }, spec: { ...extra }, status: { conditions } });
  const ready = (status: string, heartbeatAgo: number) => ({ type: 'Ready', status, lastHeartbeatTime: at(heartbeatAgo), lastTransitionTime: at(900) });
  const lease = (renewedAgo: number) => ({ spec: { renewTime: new Date(now - renewedAgo * 1000).toISOString() } } as api.Lease);

  assert.deepEqual(nodeHealth(node([ready('True', 10)]), undefined, now), { recheckInMs: 40_000 }, 'heard from 10 s ago: look again when 50 s have passed');
  assert.deepEqual(nodeHealth(node([ready('True', 300)]), lease(5), now), { recheckInMs: 45_000 }, 'a renewed Lease is a sign of life');
  const silent = nodeHealth(node([ready('True', 300), { type: 'MemoryPressure', status: 'False' }]), lease(60), now).conditions!;
  assert.deepEqual(silent.map((c) => [c.type, c.status, c.reason]), [['Ready', 'Unknown', 'NodeStatusUnknown'], ['MemoryPressure', 'Unknown', 'NodeStatusUnknown']]);
  assert.equal(silent[0].lastHeartbeatTime, at(300), 'the last heartbeat is kept');
  assert.deepEqual(nodeHealth(node([{ ...ready('Unknown', 300) }]), undefined, now), {}, 'already Unknown: nothing to write');
  const never = nodeHealth({ metadata: { creationTimestamp: at(120) }, status: {} } as api.Node, undefined, now).conditions!;
  assert.deepEqual([never[0].status, never[0].reason, never[0].message], ['Unknown', 'NodeStatusNeverUpdated', 'Kubelet never posted node status.']);
  assert.deepEqual(nodeHealth({ metadata: { creationTimestamp: at(10) }, status: {} } as api.Node, undefined, now), { recheckInMs: 50_000 }, 'within the startup grace');

  const keys = (taints: api.Taint[]) => taints.map((t) => `${t.key}:${t.effect}`).sort();
  assert.deepEqual(keys(wantedTaints(node([ready('False', 1)]), now)), ['node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/not-ready:NoSchedule']);
  assert.deepEqual(keys(wantedTaints(node([ready('True', 1), { type: 'DiskPressure', status: 'True' }], { unschedulable: true }), now)), ['node.kubernetes.io/disk-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule']);
  const others = [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }, { key: `${UNREACHABLE}`, effect: 'NoExecute', timeAdded: at(30) }];
  assert.deepEqual(wantedTaints(node([ready('True', 1)], { taints: others }), now), [others[0]], 'its own taints go when healthy, others stay');
  assert.deepEqual(wantedTaints(node([ready('Unknown', 100)], { taints: others }), now).find((t) => t.effect === 'NoExecute'), others[1], 'timeAdded is kept');
  assert.deepEqual(wantedTaints(node([]), now), [], 'a node that has not reported yet is not tainted');
});

test('every node silent: master disruption mode evicts nothing; one node back, the others are tainted one per eviction interval', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const nodes = ['node-a', 'node-b', 'node-c'];
  const alive = new Set(nodes);
  const beats = kubelets(client, alive);
  const { heartbeat } = beats;
  const evicting = async (node: string) => ((await client.get(NODES, node)).spec!.taints ?? []).filter((t) => t.effect === 'NoExecute');
  try {
    if (!(await client.read(NAMESPACES, 'kube-node-lease'))) await client.create(NAMESPACES, { metadata: { name: 'kube-node-lease' } });
    for (const n of nodes) await createNode(client, n);
    for (const n of nodes) await heartbeat(n);
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['nodelifecycle'], leaderElection: false, nodeLifecycle: { gracePeriodMs: 1500, evictionRate: 0.5 } });
    for (const n of nodes) await client.create(PODS, { metadata: { name: `p-${n}`, namespace: 'default' }, spec: { nodeName: n, tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 3 }], containers: [{ name: 'c', image: 'i' }] } });

    // Every kubelet falls silent at once: all Unknown, none tainted NoExecute, no pod evicted.
    alive.clear();
    await eventually('every node Unknown', async () => {
      const all = (await client.list(NODES)).items;
      return all.length === 3 && all.every((n) => n.status!.conditions!.find((c) => c.type === 'Ready')!.status === 'Unknown');
    });
    await new Promise((r) => setTimeout(r, 1500));
    for (const n of nodes) {
      assert.deepEqual(await evicting(n), [], `${n}: no evicting taint in master disruption mode`);
      assert.ok(!(await client.read(PODS, `p-${n}`, 'default'))?.metadata.deletionTimestamp, `${n}'s pod stays`);
      assert.ok(((await client.get(NODES, n)).spec!.taints ?? []).some((t) => t.key === UNREACHABLE && t.effect === 'NoSchedule'), `${n} still tainted NoSchedule`);
    }

    // node-a comes back: the mode ends; node-b and node-c get evicting taints, one per 2 s (rate 0.5/s).
    alive.add('node-a');
    const times: Record<string, number> = {};
    await eventually('node-b and node-c tainted unreachable NoExecute', async () => {
      for (const n of ['node-b', 'node-c']) if (!times[n] && (await evicting(n)).length) times[n] = Date.now();
      return times['node-b'] && times['node-c'];
    }, 20_000);
    const gap = Math.abs(times['node-b'] - times['node-c']);
    assert.ok(gap >= 1500, `the second evicting taint waited for the zone's eviction rate (${gap} ms apart)`);
    // Deleted gracefully: with no kubelet to finish them, they keep their deletionTimestamp.
    const going = async (name: string) => {
      const pod = await client.read(PODS, name, 'default');
      return !pod || Boolean(pod.metadata.deletionTimestamp);
    };
    await eventually('their pods evicted', async () => (await going('p-node-b')) && (await going('p-node-c')));
    assert.equal(await going('p-node-a'), false, "node-a's pod stays");
    await beats.stop();
    stop.abort();
    await running;
  } finally {
    await beats.stop();
    stop.abort();
    await api.stop();
  }
});

test('zones, their disruption and the eviction rate as tables', async () => {
  const { disruption, zoneEvictionRate, zoneOf, EvictionLimiter, wantedTaints } = await import('../../src/cluster/workloads/node-lifecycle.js');
  const n = (zone: string, ready: string) => ({ metadata: { labels: zone ? { 'topology.kubernetes.io/region': 'local', 'topology.kubernetes.io/zone': zone } : {} }, status: { conditions: [{ type: 'Ready', status: ready }] } } as api.Node);
  assert.equal(zoneOf(n('local-a', 'True')), 'local:local-a');
  assert.equal(zoneOf(n('', 'True')), '');
  const states = (nodes: api.Node[]) => Object.fromEntries([...disruption(nodes).zones].map(([z, v]) => [z, v.state]));
  assert.deepEqual(states([n('a', 'True'), n('a', 'Unknown'), n('b', 'Unknown')]), { 'local:a': 'Normal', 'local:b': 'FullDisruption' });
  assert.deepEqual(states([n('a', 'True'), n('a', 'False'), n('a', 'Unknown'), n('a', 'Unknown')]), { 'local:a': 'PartialDisruption' }, 'more than 2 and at least 55% not Ready');
  assert.deepEqual(states([n('a', 'True'), n('a', 'True'), n('a', 'Unknown'), n('a', 'Unknown')]), { 'local:a': 'Normal' }, '2 not Ready is never a disruption');
  assert.equal(disruption([n('a', 'Unknown'), n('b', 'False')]).allFullyDisrupted, true);
  assert.equal(disruption([n('a', 'Unknown'), n('b', 'True')]).allFullyDisrupted, false);
  assert.equal(disruption([]).allFullyDisrupted, false, 'no nodes is no disruption');
  assert.equal(zoneEvictionRate('Normal', 3), 0.1);
  assert.equal(zoneEvictionRate('FullDisruption', 3), 0.1, 'a whole zone down while others are up: evict at the normal rate');
  assert.equal(zoneEvictionRate('PartialDisruption', 10), 0, 'a small zone mostly down: stop');
  assert.equal(zoneEvictionRate('PartialDisruption', 100), 0.01, 'a large one: the secondary rate');

  const limiter = new EvictionLimiter(0.5, 0);
  assert.equal(limiter.take(0), 0, 'burst 1');
  assert.equal(limiter.take(0), 2000);
  assert.equal(limiter.take(1000), 1000);
  assert.equal(limiter.take(2000), 0);
  limiter.setRate(0, 2000);
  assert.equal(limiter.take(9000), Infinity);

  const unknown = { metadata: {}, spec: { taints: [] }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } } as unknown as api.Node;
  const keys = (taints: api.Taint[]) => taints.map((t) => `${t.key}:${t.effect}`).sort();
  assert.deepEqual(keys(wantedTaints(unknown, 0, 'hold')), [`${UNREACHABLE}:NoSchedule`], 'held: no new evicting taint');
  assert.deepEqual(keys(wantedTaints(unknown, 0, 'add')), [`${UNREACHABLE}:NoExecute`, `${UNREACHABLE}:NoSchedule`]);
  const wasNotReady: api.Node = { ...unknown, spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:00Z' }] } };
  assert.deepEqual(wantedTaints(wasNotReady, 0, 'hold').find((t) => t.effect === 'NoExecute'), { key: UNREACHABLE, effect: 'NoExecute', timeAdded: '2026-01-01T00:00:00Z' }, 'not-ready swapped for unreachable at once, eviction time kept');
  assert.deepEqual(keys(wantedTaints(wasNotReady, 0, 'remove')), [`${UNREACHABLE}:NoSchedule`], 'master disruption lifts evicting taints');
});
