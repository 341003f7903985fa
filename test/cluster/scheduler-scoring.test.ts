// Scores checked against the cases of kube-scheduler's own scoring tests
// (pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go and
// noderesources/least_allocated_test.go): the same clusters must give the same scores, so bosun
// ranks nodes as kube does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetaLabelSelector } from '../../src/apiserver/selectors.js';
import { preFilter } from '../../src/cluster/scheduler/filters.js';
import { nodeInfo } from '../../src/cluster/scheduler/resources.js';
import { leastAllocatedScore, normalizeSpread } from '../../src/cluster/scheduler/scoring.js';
import { spreadScores } from '../../src/cluster/scheduler/topology-spread.js';
import type { Node, Pod, TopologySpreadConstraint } from '../../src/cluster/scheduler/types.js';
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
