// The scheduling decision end to end in the pure core: the FailedScheduling message word for word
// as kube-scheduler's FitError.Error() writes it, scoring (spread, least allocated, taints) and the
// deterministic tie-break.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FitError, fitErrorMessage, schedulePod, type ScheduleResult } from '../../src/cluster/scheduler/schedule.js';
import { normalize, normalizeSpread } from '../../src/cluster/scheduler/scoring.js';
import type { ClusterSnapshot, Node, Pod } from '../../src/cluster/scheduler/types.js';
import { node, pod, snapshot } from './scheduler-fixtures.js';

const master = (name: string) => node(name, { labels: { 'node-role.kubernetes.io/master': '' }, taints: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }] });

function message(result: ScheduleResult): string {
  assert.ok('error' in result, `expected no fit, got ${'node' in result ? result.node : ''}`);
  assert.ok(result.error instanceof FitError);
  return result.error.message;
}

test('the FailedScheduling message: reasons counted over nodes and sorted as kube sorts them', () => {
  const cases: Array<{ name: string; pod: Pod; snap: ClusterSnapshot; want: string }> = [
    {
      name: 'three tainted masters and two full workers',
      pod: pod('p', { requests: { cpu: '2' } }),
      snap: snapshot([master('m0'), master('m1'), master('m2'), node('w0', { cpu: '1' }), node('w1', { cpu: '1' })]),
      // Go's sort.Strings puts "2 Insufficient cpu" before "3 node(s)...".
      want: '0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {node-role.kubernetes.io/master: }.',
    },
    {
      name: 'one node may give several reasons',
      pod: pod('p', { requests: { cpu: '2', memory: '16Gi' } }),
      snap: snapshot([node('a', { cpu: '1' }), node('b', { cpu: '1', memory: '32Gi' })]),
      want: '0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.',
    },
    {
      name: 'no nodes at all',
      pod: pod('p'),
      snap: snapshot([]),
      want: 'no nodes available to schedule pods',
    },
    {
      name: 'a pod pinned by metadata.name (as a DaemonSet pod) to a node it does not fit',
      pod: pod('p', { requests: { cpu: '2' }, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }] } } } }),
      snap: snapshot([node('a', { cpu: '1' }), node('b'), node('c')]),
      want: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
    },
    {
      name: 'metadata.name terms that contradict',
      pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }, { key: 'metadata.name', operator: 'In', values: ['b'] }] }] } } } }),
      snap: snapshot([node('a'), node('b'), node('c')]),
      want: '0/3 nodes are available: pod affinity terms conflict.',
    },
    {
      name: 'a mix of filters',
      pod: pod('p', { nodeSelector: { disk: 'ssd' }, requests: { cpu: '1' } }),
      snap: snapshot([master('m0'), node('a', { unschedulable: true }), node('b'), node('c', { labels: { disk: 'ssd' }, cpu: '500m' })]),
      want: "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, 1 node(s) were unschedulable.",
    },
  ];
  for (const c of cases) assert.equal(message(schedulePod(c.pod, c.snap)), c.want, c.name);
});

test('counts sort as strings, as Go sorts them: "10 ..." before "2 ..."', () => {
  const reasons = new Map<string, string[]>();
  for (let i = 0; i < 10; i++) reasons.set(`t${i}`, ['node(s) had untolerated taint {x: }']);
  for (let i = 0; i < 2; i++) reasons.set(`c${i}`, ['Insufficient cpu']);
  assert.equal(fitErrorMessage(12, reasons), '0/12 nodes are available: 10 node(s) had untolerated taint {x: }, 2 Insufficient cpu.');
});

/** Schedules pods one after another, binding each where the core chose. */
function placeAll(nodes: Node[], pods: Pod[], defaultSpreadSelector?: object): Record<string, string> {
  const bound = new Map<string, Pod[]>();
  const placed: Record<string, string> = {};
  for (const p of pods) {
    const result = schedulePod(p, { nodes, podsByNode: bound }, { defaultSpreadSelector });
    assert.ok('node' in result, `${p.metadata.name}: ${'error' in result ? result.error.message : ''}`);
    placed[p.metadata.name] = result.node;
    bound.set(result.node, [...(bound.get(result.node) ?? []), { ...p, spec: { ...p.spec, nodeName: result.node } }]);
  }
  return placed;
}

const countBy = (placed: Record<string, string>, zoneOf: (n: string) => string) => Object.values(placed).reduce<Record<string, number>>((acc, n) => ({ ...acc, [zoneOf(n)]: (acc[zoneOf(n)] ?? 0) + 1 }), {});

test('ScheduleAnyway spread: replicas spread evenly across zones even when one zone has more room', () => {
  // Zone a has two big nodes; least-allocated alone would fill zone a first.
  const nodes = [node('a1', { zone: 'a', cpu: '32', memory: '64Gi' }), node('a2', { zone: 'a', cpu: '32', memory: '64Gi' }), node('b1', { zone: 'b' }), node('c1', { zone: 'c' })];
  const constraint = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }];
  const pods = Array.from({ length: 6 }, (_, i) => pod(`web-${i}`, { labels: { app: 'web' }, requests: { cpu: '100m' }, topologySpreadConstraints: constraint }));
  assert.deepEqual(countBy(placeAll(nodes, pods), (n) => n[0]), { a: 2, b: 2, c: 2 });
});

test('DoNotSchedule spread holds the skew even against free capacity', () => {
  const nodes = [node('a1', { zone: 'a', cpu: '64' }), node('b1', { zone: 'b', cpu: '2' })];
  const constraint = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } }];
  const pods = Array.from({ length: 4 }, (_, i) => pod(`web-${i}`, { labels: { app: 'web' }, topologySpreadConstraints: constraint }));
  assert.deepEqual(countBy(placeAll(nodes, pods), (n) => n[0]), { a: 2, b: 2 });
});

test('system default spreading applies to pods a Service or controller selects, across hostnames', () => {
  // The first node is far larger: least-allocated alone would put everything there.
  const nodes = [node('big', { cpu: '64', memory: '256Gi' }), node('small1'), node('small2')];
  const pods = Array.from({ length: 3 }, (_, i) => pod(`rs-${i}`, { labels: { app: 'rs' } }));
  assert.deepEqual(new Set(Object.values(placeAll(nodes, pods, { matchLabels: { app: 'rs' } }))), new Set(['big', 'small1', 'small2']));
  assert.deepEqual(Object.values(placeAll(nodes, pods)), ['big', 'big', 'big'], 'without a selector no default spreading');
});

test('least allocated prefers the emptier node; PreferNoSchedule taints are avoided; ties go to the first name', () => {
  const busy = pod('busy', { requests: { cpu: '3', memory: '6Gi' } });
  assert.equal((schedulePod(pod('p'), snapshot([node('a'), node('b')], { a: [busy] })) as { node: string }).node, 'b');
  const soft = node('a', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] });
  assert.equal((schedulePod(pod('p'), snapshot([soft, node('b')])) as { node: string }).node, 'b');
  assert.equal((schedulePod(pod('p', { tolerations: [{ key: 'soft', operator: 'Exists', effect: 'PreferNoSchedule' }] }), snapshot([soft, node('b')])) as { node: string }).node, 'a');
  assert.equal((schedulePod(pod('p'), snapshot([node('c'), node('b'), node('d')])) as { node: string }).node, 'b');
});

test('preferred node affinity: matching terms add their weight; it outweighs a little free room', () => {
  const preferred = (weight: number, key: string, value: string) => ({ weight, preference: { matchExpressions: [{ key, operator: 'In', values: [value] }] } });
  const nodes = [node('a', { labels: { disk: 'hdd' } }), node('b', { labels: { disk: 'ssd', gpu: 'yes' } }), node('c', { labels: { disk: 'ssd' } })];
  const p = pod('p', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(80, 'disk', 'ssd'), preferred(20, 'gpu', 'yes'), { weight: 50, preference: {} }] } } });
  const result = schedulePod(p, snapshot(nodes, { b: [pod('q', { requests: { cpu: '1' } })] }));
  assert.ok('node' in result);
  assert.deepEqual(Object.fromEntries(result.scores.map((s) => [s.name, s.plugins.NodeAffinity])), { a: 0, b: 100, c: 80 });
  assert.equal(result.node, 'b');
});

test('score normalisation as kube: DefaultNormalizeScore and the spread plugin\'s min/max', () => {
  assert.deepEqual(normalize([0, 1, 3], true), [100, 67, 0]);
  assert.deepEqual(normalize([0, 0], true), [100, 100]);
  assert.deepEqual(normalize([1, 2], false), [50, 100]);
  assert.deepEqual(normalizeSpread([2, 5, 8, undefined]), [100, 62, 25, 0]);
  assert.deepEqual(normalizeSpread([0, 0]), [100, 100]);
});

test('scores per plugin are those kube computes for the same cluster', () => {
  // Two nodes: 4 cpu / 8Gi each; "a" already runs 1 cpu / 2Gi. The pod asks 1 cpu / 1Gi.
  const snap = snapshot([node('a'), node('b')], { a: [pod('q', { requests: { cpu: '1', memory: '2Gi' } })] });
  const result = schedulePod(pod('p', { requests: { cpu: '1', memory: '1Gi' } }), snap);
  assert.ok('node' in result);
  const byName = Object.fromEntries(result.scores.map((s) => [s.name, s.plugins]));
  // LeastAllocated: a = ((4000-2000)*100/4000 + (8Gi-3Gi)*100/8Gi)/2 = (50 + 62)/2 = 56; b = (75 + 87)/2 = 81.
  // BalancedAllocation: a = (1 - |0.5 - 0.375|/2) * 100 = 93; b = (1 - |0.25 - 0.125|/2) * 100 = 93.
  assert.deepEqual(byName.a, { PodTopologySpread: 0, TaintToleration: 100, NodeAffinity: 0, InterPodAffinity: 0, NodeResourcesFit: 56, NodeResourcesBalancedAllocation: 93 });
  assert.deepEqual(byName.b, { PodTopologySpread: 0, TaintToleration: 100, NodeAffinity: 0, InterPodAffinity: 0, NodeResourcesFit: 81, NodeResourcesBalancedAllocation: 93 });
  assert.equal(result.node, 'b');
});
