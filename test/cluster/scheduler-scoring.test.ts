// Scores checked against the cases of kube-scheduler's own scoring tests (in
// pkg/scheduler/framework/plugins: podtopologyspread/scoring_test.go,
// noderesources/least_allocated_test.go and balanced_allocation_test.go,
// interpodaffinity/scoring_test.go): the same clusters
// must give the same scores, so bosun ranks nodes as kube does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetaLabelSelector } from '../../src/apiserver/selectors.js';
import { preFilter } from '../../src/cluster/scheduler/filters.js';
import { nodeInfo } from '../../src/cluster/scheduler/resources.js';
import { balancedAllocationScore, leastAllocatedScore, normalizeSpread } from '../../src/cluster/scheduler/scoring.js';
import { spreadScores } from '../../src/cluster/scheduler/topology-spread.js';
import { podAffinityScores } from '../../src/cluster/scheduler/pod-affinity.js';
import type { Node, Pod, PodAffinityTerm, TopologySpreadConstraint } from '../../src/cluster/scheduler/types.js';
import { existing } from './scheduler-fixtures.js';

const HOST = 'kubernetes.io/hostname';
const exists = (key: string): MetaLabelSelector => ({ matchExpressions: [{ key, operator: 'Exists' }] });
const soft = (maxSkew: number, topologyKey: string, labelSelector: MetaLabelSelector): TopologySpreadConstraint => ({ maxSkew, topologyKey, whenUnsatisfiable: 'ScheduleAnyway', labelSelector });
const mkNode = (name: string, labels: Record<string, string>): Node => ({ metadata: { name, labels }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } });
const host = (name: string, extra: Record<string, string> = {}) => mkNode(name, { [HOST]: name, ...extra });

interface Case {
  name: string;
  constraints?: TopologySpreadConstraint[];
  defaultSelector?: MetaLabelSelector;
  podLabels?: string[];
  nodes: Node[];
  failed?: Node[];
  pods: string[];
  want: Record<string, number>;
}

const cases: Case[] = [
  {
    name: 'one constraint on node, all 4 nodes are candidates (2/1/0/3)', constraints: [soft(1, HOST, exists('foo'))],
    nodes: [host('node-a'), host('node-b'), host('node-c'), host('node-d')],
    pods: ['node-a:foo', 'node-a:foo', 'node-b:foo', 'node-d:foo', 'node-d:foo', 'node-d:foo'],
    want: { 'node-a': 20, 'node-b': 60, 'node-c': 100, 'node-d': 0 },
  },
  {
    name: 'maxSkew=2', constraints: [soft(2, HOST, exists('foo'))],
    nodes: [host('node-a'), host('node-b'), host('node-c'), host('node-d')],
    pods: ['node-a:foo', 'node-a:foo', 'node-b:foo', 'node-d:foo', 'node-d:foo', 'node-d:foo'],
    want: { 'node-a': 33, 'node-b': 66, 'node-c': 100, 'node-d': 16 },
  },
  {
    name: 'maxSkew=3 (4/3/2/1)', constraints: [soft(3, HOST, exists('foo'))],
    nodes: [host('node-a'), host('node-b'), host('node-c'), host('node-d')],
    pods: ['node-a:foo', 'node-a:foo', 'node-a:foo', 'node-a:foo', 'node-b:foo', 'node-b:foo', 'node-b:foo', 'node-c:foo', 'node-c:foo', 'node-d:foo'],
    want: { 'node-a': 44, 'node-b': 66, 'node-c': 77, 'node-d': 100 },
  },
  {
    name: 'system defaulting, nodes without zone, pods a Service selects (4/3/2/1)', defaultSelector: { matchLabels: { foo: '' } },
    nodes: [host('node-a'), host('node-b'), host('node-c'), host('node-d')],
    pods: ['node-a:foo', 'node-a:foo', 'node-a:foo', 'node-a:foo', 'node-b:foo', 'node-b:foo', 'node-b:foo', 'node-c:foo', 'node-c:foo', 'node-d:foo'],
    want: { 'node-a': 44, 'node-b': 66, 'node-c': 77, 'node-d': 100 },
  },
  {
    name: '3 of 4 nodes are candidates (4/2/1/~3~)', constraints: [soft(1, HOST, exists('foo'))],
    nodes: [host('node-a'), host('node-b'), host('node-x')], failed: [host('node-y')],
    pods: ['node-a:foo', 'node-a:foo', 'node-a:foo', 'node-a:foo', 'node-b:foo', 'node-b:foo', 'node-x:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo'],
    want: { 'node-a': 33, 'node-b': 83, 'node-x': 100 },
  },
  {
    name: 'a candidate without the topology key scores 0', constraints: [soft(1, HOST, exists('foo'))],
    nodes: [host('node-a'), mkNode('node-b', { n: 'node-b' }), host('node-x')], failed: [host('node-y')],
    pods: ['node-a:foo', 'node-a:foo', 'node-a:foo', 'node-a:foo', 'node-b:foo', 'node-b:foo', 'node-x:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo'],
    want: { 'node-a': 16, 'node-b': 0, 'node-x': 100 },
  },
  {
    name: 'one constraint on zone, 3 of 4 nodes are candidates', constraints: [soft(1, 'zone', exists('foo'))],
    nodes: [host('node-a', { zone: 'zone1' }), host('node-b', { zone: 'zone1' }), host('node-x', { zone: 'zone2' })], failed: [host('node-y', { zone: 'zone2' })],
    pods: ['node-a:foo', 'node-a:foo', 'node-a:foo', 'node-a:foo', 'node-b:foo', 'node-b:foo', 'node-x:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo'],
    want: { 'node-a': 75, 'node-b': 75, 'node-x': 100 },
  },
  {
    name: 'two constraints on zone and node, 2 of 4 candidates', constraints: [soft(1, 'zone', exists('foo')), soft(1, HOST, exists('foo'))],
    nodes: [host('node-a', { zone: 'zone1' }), host('node-x', { zone: 'zone2' })], failed: [host('node-b', { zone: 'zone1' }), host('node-y', { zone: 'zone2' })],
    pods: ['node-a:foo', 'node-a:foo', 'node-b:foo', 'node-x:foo', 'node-x:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo'],
    want: { 'node-a': 100, 'node-x': 63 },
  },
  {
    name: 'two constraints on zone with different selectors', podLabels: ['foo', 'bar'], constraints: [soft(1, 'zone', exists('foo')), soft(1, 'zone', exists('bar'))],
    nodes: [mkNode('node-a', { zone: 'zone1' }), mkNode('node-x', { zone: 'zone2' })], failed: [mkNode('node-b', { zone: 'zone1' }), mkNode('node-y', { zone: 'zone2' })],
    pods: ['node-a:foo,bar', 'node-a:foo', 'node-b:foo,bar', 'node-y:foo', 'node-y:foo,bar', 'node-y:foo'],
    want: { 'node-a': 85, 'node-x': 100 },
  },
  {
    name: 'zone and node with different selectors', podLabels: ['foo', 'bar'], constraints: [soft(1, 'zone', exists('foo')), soft(1, HOST, exists('bar'))],
    nodes: [host('node-a', { zone: 'zone1' }), host('node-b', { zone: 'zone1' }), host('node-x', { zone: 'zone2' }), host('node-y', { zone: 'zone2' })],
    pods: ['node-a:foo', 'node-b:foo,bar', 'node-y:foo', 'node-y:bar'],
    want: { 'node-a': 60, 'node-b': 20, 'node-x': 100, 'node-y': 60 },
  },
  {
    name: 'zone and node with different selectors, some nodes have 0 pods', podLabels: ['foo', 'bar'], constraints: [soft(1, 'zone', exists('foo')), soft(1, HOST, exists('bar'))],
    nodes: [host('node-a', { zone: 'zone1' }), host('node-b', { zone: 'zone1' }), host('node-x', { zone: 'zone2' }), host('node-y', { zone: 'zone2' })],
    pods: ['node-b:bar', 'node-x:foo', 'node-y:foo,bar'],
    want: { 'node-a': 100, 'node-b': 60, 'node-x': 40, 'node-y': 0 },
  },
  {
    name: 'zone and node with different selectors, 3 of 4 candidates', podLabels: ['foo', 'bar'], constraints: [soft(1, 'zone', exists('foo')), soft(1, HOST, exists('bar'))],
    nodes: [host('node-a', { zone: 'zone1' }), host('node-b', { zone: 'zone1' }), host('node-x', { zone: 'zone2' })], failed: [host('node-y', { zone: 'zone2' })],
    pods: ['node-a:foo', 'node-b:foo,bar', 'node-y:foo', 'node-y:bar'],
    want: { 'node-a': 50, 'node-b': 25, 'node-x': 100 },
  },
  {
    name: 'existing pods in a different namespace do not count', constraints: [soft(1, HOST, exists('foo'))],
    nodes: [host('node-a'), host('node-b')],
    pods: ['node-a:foo:ns1', 'node-a:foo', 'node-b:foo', 'node-b:foo'],
    want: { 'node-a': 100, 'node-b': 33 },
  },
  {
    name: 'terminating pods are excluded', constraints: [soft(1, HOST, exists('foo'))],
    nodes: [host('node-a'), host('node-b')],
    pods: ['node-a:foo:terminating', 'node-b:foo'],
    want: { 'node-a': 100, 'node-b': 0 },
  },
];

test('PodTopologySpread scores equal kube-scheduler\'s for its own test clusters', () => {
  for (const c of cases) {
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'default', labels: Object.fromEntries((c.podLabels ?? ['foo']).map((l) => [l, ''])) },
      spec: { containers: [{ name: 'c' }], topologySpreadConstraints: c.constraints },
    };
    const pods = existing(c.pods);
    const infoOf = (n: Node) => nodeInfo(n, pods.filter((p) => p.spec.nodeName === n.metadata.name));
    const feasible = c.nodes.map(infoOf);
    const all = [...c.nodes, ...(c.failed ?? [])].map(infoOf);
    const raw = spreadScores(pod, feasible, all, c.defaultSelector);
    const scores = normalizeSpread(feasible.map((n) => raw.get(n.name)));
    assert.deepEqual(Object.fromEntries(feasible.map((n, i) => [n.name, scores[i]])), c.want, c.name);
  }
});

/** A pod as kube's test builder makes it: one container per Req(), none without. */
function reqPod(name: string, nodeName: string | undefined, ...requests: Array<Record<string, string>>): Pod {
  return { metadata: { name, namespace: 'default' }, spec: { nodeName, containers: requests.map((r, i) => ({ name: `c${i}`, resources: { requests: r } })) } };
}
const sized = (name: string, allocatable?: Record<string, string>): Node => ({ metadata: { name, labels: {} }, status: { allocatable: allocatable ? { ...allocatable, pods: '110' } : undefined } });

test('NodeResourcesFit LeastAllocated scores equal kube-scheduler\'s for its own test clusters', () => {
  const cases: Array<{ name: string; pod: Pod; nodes: Node[]; existing?: Pod[]; want: [number, number] }> = [
    { name: 'nothing scheduled, nothing requested', pod: reqPod('p', undefined), nodes: [sized('node1', { cpu: '4000', memory: '10000' }), sized('node2', { cpu: '4000', memory: '10000' })], want: [100, 100] },
    {
      name: 'nothing scheduled, resources requested, differently sized nodes', pod: reqPod('p', undefined, { cpu: '1000', memory: '2000' }, { cpu: '2000', memory: '3000' }),
      nodes: [sized('node1', { cpu: '4000', memory: '10000' }), sized('node2', { cpu: '6000', memory: '10000' })], want: [37, 50],
    },
    {
      name: 'no resources requested, pods scheduled', pod: reqPod('p', undefined),
      nodes: [sized('node1', { cpu: '4000', memory: '10000' }), sized('node2', { cpu: '4000', memory: '10000' })],
      existing: [reqPod('e1', 'node1'), reqPod('e2', 'node1'), reqPod('e3', 'node2'), reqPod('e4', 'node2')], want: [100, 100],
    },
    {
      name: 'no resources requested, pods scheduled with resources', pod: reqPod('p', undefined),
      nodes: [sized('node1', { cpu: '10000', memory: '20000' }), sized('node2', { cpu: '10000', memory: '20000' })],
      existing: [reqPod('e1', 'node1', { cpu: '3000', memory: '0' }), reqPod('e2', 'node1', { cpu: '3000', memory: '0' }), reqPod('e3', 'node2', { cpu: '3000', memory: '0' }), reqPod('e4', 'node2', { cpu: '3000', memory: '5000' })],
      want: [70, 57],
    },
    {
      name: 'resources requested, pods scheduled with resources', pod: reqPod('p', undefined, { cpu: '1000', memory: '2000' }, { cpu: '2000', memory: '3000' }),
      nodes: [sized('node1', { cpu: '10000', memory: '20000' }), sized('node2', { cpu: '10000', memory: '20000' })],
      existing: [reqPod('e1', 'node1', { cpu: '3000', memory: '0' }), reqPod('e2', 'node2', { cpu: '3000', memory: '5000' })], want: [57, 45],
    },
    {
      name: 'resources requested, pods scheduled with resources, differently sized nodes', pod: reqPod('p', undefined, { cpu: '1000', memory: '2000' }, { cpu: '2000', memory: '3000' }),
      nodes: [sized('node1', { cpu: '10000', memory: '20000' }), sized('node2', { cpu: '10000', memory: '50000' })],
      existing: [reqPod('e1', 'node1', { cpu: '3000', memory: '0' }), reqPod('e2', 'node2', { cpu: '3000', memory: '5000' })], want: [57, 60],
    },
    {
      name: 'requested resources exceed node capacity', pod: reqPod('p', undefined, { cpu: '3000', memory: '0' }),
      nodes: [sized('node1', { cpu: '4000', memory: '10000' }), sized('node2', { cpu: '4000', memory: '10000' })],
      existing: [reqPod('e1', 'node1', { cpu: '3000', memory: '0' }), reqPod('e2', 'node2', { cpu: '3000', memory: '5000' })], want: [50, 25],
    },
    {
      name: 'zero node resources, pods scheduled with resources', pod: reqPod('p', undefined), nodes: [sized('node1'), sized('node2')],
      existing: [reqPod('e1', 'node1', { cpu: '3000', memory: '0' }), reqPod('e2', 'node2', { cpu: '3000', memory: '5000' })], want: [0, 0],
    },
  ];
  for (const c of cases) {
    const infos = c.nodes.map((n) => nodeInfo(n, (c.existing ?? []).filter((p) => p.spec.nodeName === n.metadata.name)));
    const state = preFilter(c.pod, infos);
    assert.deepEqual(infos.map((info) => leastAllocatedScore(state, info)), c.want, c.name);
  }
});

test('InterPodAffinity scores equal kube-scheduler\'s for its own preferred-affinity cases', () => {
  const sec = (op: string, ...values: string[]) => ({ key: 'security', operator: op, ...(values.length ? { values } : {}) });
  const term = (topologyKey: string, expressions: object[], extra: object = {}) => ({ topologyKey, labelSelector: { matchExpressions: expressions }, ...extra }) as PodAffinityTerm;
  const pref = (weight: number, t: PodAffinityTerm) => ({ weight, podAffinityTerm: t });
  const teamSelector = { namespaces: ['subteam2.team2'], namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['team1'] }] } };
  const A = {
    stayWithS1InRegion: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(5, term('region', [sec('In', 'S1')]))] } },
    stayWithS2InRegion: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(6, term('region', [sec('In', 'S2')]))] } },
    affinity3: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(8, term('region', [sec('NotIn', 'S1'), sec('In', 'S2')])), pref(2, term('region', [sec('Exists'), { key: 'wrongkey', operator: 'DoesNotExist' }]))] } },
    hardAffinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('region', [sec('In', 'S1', 'value2')]), term('region', [sec('Exists'), { key: 'wrongkey', operator: 'DoesNotExist' }])] } },
    awayFromS1InAz: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(5, term('az', [sec('In', 'S1')]))] } },
    awayFromS2InAz: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(5, term('az', [sec('In', 'S2')]))] } },
    stayWithS1InRegionAwayFromS2InAz: {
      podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(8, term('region', [sec('In', 'S1')]))] },
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(5, term('az', [sec('In', 'S2')]))] },
    },
    affinityNamespaceSelector: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(5, term('region', [sec('In', 'S1')], teamSelector))] } },
    antiAffinityNamespaceSelector: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(5, term('region', [sec('In', 'S1')], teamSelector))] } },
  };
  type Affinity = NonNullable<Pod['spec']['affinity']>;
  const L = { china: { region: 'China' }, india: { region: 'India' }, az1: { az: 'az1' }, az2: { az: 'az2' }, chinaAz1: { region: 'China', az: 'az1' } };
  const p = (security?: string, affinity?: Affinity, namespace = 'default'): Pod => ({ metadata: { name: 'p', namespace, labels: security ? { security } : {} }, spec: { containers: [], affinity } });
  const on = (nodeName: string, security?: string, affinity?: Affinity): Pod => ({ ...p(security, affinity), spec: { nodeName, containers: [], affinity } });
  const cases: Array<{ name: string; pod: Pod; pods: Pod[]; nodes: Array<Record<string, string>>; want: number[] }> = [
    { name: 'affinity: matching topology and pods score high', pod: p('S1', A.stayWithS1InRegion), pods: [on('n1', 'S1'), on('n2', 'S2'), on('n3', 'S1')], nodes: [L.china, L.india, L.az1], want: [100, 0, 0] },
    { name: 'affinity: the whole domain scores alike', pod: p(undefined, A.stayWithS1InRegion), pods: [on('n1', 'S1')], nodes: [L.china, L.chinaAz1, L.india], want: [100, 100, 0] },
    {
      name: 'affinity: the region with more matches', pod: p('S1', A.stayWithS2InRegion), pods: [on('n1', 'S2'), on('n1', 'S2'), on('n2', 'S2'), on('n3', 'S2'), on('n4', 'S2'), on('n5', 'S2')],
      nodes: [L.china, L.india, L.china, L.china, L.india], want: [100, 0, 100, 100, 0],
    },
    { name: 'affinity: operators and failed matches', pod: p('S1', A.affinity3), pods: [on('n1', 'S1'), on('n2', 'S2'), on('n3', 'S1')], nodes: [L.china, L.india, L.az1], want: [20, 100, 0] },
    { name: 'affinity symmetry (preferred)', pod: p('S2'), pods: [on('n1', 'S1', A.stayWithS1InRegion), on('n2', 'S2', A.stayWithS2InRegion)], nodes: [L.china, L.india, L.az1], want: [0, 100, 0] },
    { name: 'affinity symmetry with a namespace selector', pod: p('S1', undefined, 'subteam1.team1'), pods: [on('n1', 'S1', A.affinityNamespaceSelector), on('n2', 'S2', A.stayWithS2InRegion)], nodes: [L.china, L.india, L.az1], want: [100, 0, 0] },
    { name: 'anti-affinity symmetry with a namespace selector', pod: p('S1', undefined, 'subteam1.team1'), pods: [on('n1', 'S1', A.antiAffinityNamespaceSelector), on('n2', 'S2', A.stayWithS2InRegion)], nodes: [L.china, L.india, L.az1], want: [0, 100, 100] },
    { name: 'affinity symmetry (required, hardPodAffinityWeight)', pod: p('S1'), pods: [on('n1', 'S1', A.hardAffinity), on('n2', 'S2', A.hardAffinity)], nodes: [L.china, L.india, L.az1], want: [100, 100, 0] },
    { name: 'anti-affinity: away from matching pods', pod: p('S1', A.awayFromS1InAz), pods: [on('n1', 'S1'), on('n2', 'S2')], nodes: [L.az1, L.china], want: [0, 100] },
    { name: 'anti-affinity: nodes without the key score high', pod: p('S1', A.awayFromS1InAz), pods: [on('n1', 'S1'), on('n2', 'S1')], nodes: [L.az1, L.china], want: [0, 100] },
    { name: 'anti-affinity: more matches score lower', pod: p('S1', A.awayFromS1InAz), pods: [on('n1', 'S1'), on('n1', 'S1'), on('n2', 'S2')], nodes: [L.az1, L.india], want: [0, 100] },
    { name: 'anti-affinity symmetry', pod: p('S2'), pods: [on('n1', 'S1', A.awayFromS2InAz), on('n2', 'S2', A.awayFromS1InAz)], nodes: [L.az1, L.az2], want: [0, 100] },
    { name: 'affinity and anti-affinity', pod: p('S1', A.stayWithS1InRegionAwayFromS2InAz), pods: [on('n1', 'S1'), on('n2', 'S1')], nodes: [L.china, L.az1], want: [100, 0] },
    {
      name: 'affinity and anti-affinity, same labels', pod: p('S1', A.stayWithS1InRegionAwayFromS2InAz),
      pods: [on('n1', 'S1'), on('n1', 'S1'), on('n2', 'S1'), on('n3', 'S1'), on('n3', 'S1'), on('n4', 'S1'), on('n5', 'S1')],
      nodes: [L.chinaAz1, L.india, L.china, L.china, L.india], want: [100, 0, 100, 100, 0],
    },
    {
      name: 'affinity, anti-affinity and symmetry', pod: p('S1', A.stayWithS1InRegionAwayFromS2InAz),
      pods: [on('n1', 'S1'), on('n2', 'S2'), on('n3', undefined, A.stayWithS1InRegionAwayFromS2InAz), on('n4', undefined, A.awayFromS1InAz)],
      nodes: [L.china, L.az1, L.india, L.az2], want: [100, 0, 100, 0],
    },
    { name: 'some nodes of a domain without pods with affinity', pod: p('S1'), pods: [on('n1', 'S1'), on('n2', undefined, A.stayWithS1InRegionAwayFromS2InAz)], nodes: [L.china, L.china], want: [0, 0] },
  ];
  const namespaceLabels = new Map([['subteam1.team1', { team: 'team1' }], ['subteam2.team1', { team: 'team1' }], ['subteam1.team2', { team: 'team2' }], ['subteam2.team2', { team: 'team2' }]]);
  for (const c of cases) {
    const infos = c.nodes.map((labels, i) => nodeInfo({ metadata: { name: `n${i + 1}`, labels } }, c.pods.filter((x) => x.spec.nodeName === `n${i + 1}`)));
    assert.deepEqual(podAffinityScores(c.pod, infos, infos, namespaceLabels), c.want, c.name);
  }
});

test('NodeResourcesBalancedAllocation scores equal kube-scheduler\'s for its own test clusters', () => {
  const cpuOnly = (name: string, nodeName?: string) => reqPod(name, nodeName, { cpu: '1000m', memory: '0' }, { cpu: '2000m', memory: '0' });
  const cpuAndMemory = (name: string, nodeName?: string) => reqPod(name, nodeName, { cpu: '1000m', memory: '2000' }, { cpu: '2000m', memory: '3000' });
  const milli = (name: string, cpu: number, memory: number) => sized(name, { cpu: `${cpu}m`, memory: String(memory) });
  const existingPods = [cpuOnly('e1', 'node1'), cpuAndMemory('e2', 'node2')];
  const cases: Array<{ name: string; pod: Pod; nodes: Node[]; existing?: Pod[]; want: [number, number] }> = [
    { name: 'best-effort pods are not scored', pod: reqPod('p', undefined), nodes: [milli('node1', 4000, 10000), milli('node2', 4000, 10000)], want: [0, 0] },
    { name: 'nothing scheduled, resources requested, differently sized nodes', pod: cpuAndMemory('p'), nodes: [milli('node1', 4000, 10000), milli('node2', 6000, 10000)], want: [87, 100] },
    { name: 'resources requested, pods scheduled with resources', pod: cpuAndMemory('p'), nodes: [milli('node1', 10000, 20000), milli('node2', 10000, 20000)], existing: existingPods, want: [82, 95] },
    { name: 'differently sized nodes', pod: cpuAndMemory('p'), nodes: [milli('node1', 10000, 20000), milli('node2', 10000, 50000)], existing: existingPods, want: [82, 80] },
    { name: 'requested resources at node capacity', pod: cpuOnly('p'), nodes: [milli('node1', 6000, 10000), milli('node2', 6000, 10000)], existing: existingPods, want: [50, 75] },
  ];
  for (const c of cases) {
    const infos = c.nodes.map((n) => nodeInfo(n, (c.existing ?? []).filter((p) => p.spec.nodeName === n.metadata.name)));
    const state = preFilter(c.pod, infos);
    assert.deepEqual(infos.map((info) => balancedAllocationScore(state, info)), c.want, c.name);
  }
});
