// Every filter of the scheduler's pure core, one table each: a pod, a node (and the pods already on
// the nodes), and the reasons kube-scheduler would give for that node — [] when it fits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterNode, preFilter } from '../../src/cluster/scheduler/filters.js';
import { buildNodeInfos } from '../../src/cluster/scheduler/schedule.js';
import type { Node, Pod } from '../../src/cluster/scheduler/types.js';
import { existing, node, pod, snapshot } from './scheduler-fixtures.js';
import { nodeInfo } from '../../src/cluster/scheduler/resources.js';
import { spreadFilterReason, spreadFilterState } from '../../src/cluster/scheduler/topology-spread.js';

interface Case {
  name: string;
  pod: Pod;
  nodes: Node[];
  bound?: Record<string, Pod[]>;
  namespaces?: Record<string, Record<string, string>>;
  /** Expected reasons per node name ([] = fits). */
  want: Record<string, string[]>;
}

function run(cases: Case[]): void {
  for (const c of cases) {
    const snap = snapshot(c.nodes, c.bound, c.namespaces);
    const infos = buildNodeInfos(snap);
    const state = preFilter(c.pod, infos, snap.namespaceLabels);
    for (const [nodeName, want] of Object.entries(c.want)) {
      const info = infos.find((i) => i.name === nodeName)!;
      assert.deepEqual(filterNode(state, info)?.reasons ?? [], want, `${c.name}: node ${nodeName}`);
    }
  }
}

const UNSCHEDULABLE = 'node(s) were unschedulable';
const taint = (key: string, effect: string, value?: string) => ({ key, effect, ...(value !== undefined ? { value } : {}) });

test('NodeUnschedulable: cordoned nodes take only pods tolerating node.kubernetes.io/unschedulable', () => run([
  { name: 'cordoned', pod: pod('p'), nodes: [node('a', { unschedulable: true }), node('b')], want: { a: [UNSCHEDULABLE], b: [] } },
  { name: 'tolerated by key', pod: pod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), nodes: [node('a', { unschedulable: true })], want: { a: [] } },
  { name: 'tolerate-everything', pod: pod('p', { tolerations: [{ operator: 'Exists' }] }), nodes: [node('a', { unschedulable: true })], want: { a: [] } },
  { name: 'wrong effect', pod: pod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }] }), nodes: [node('a', { unschedulable: true })], want: { a: [UNSCHEDULABLE] } },
]));

test('NodeName: a pod naming a node fits only there', () => run([
  { name: 'named', pod: pod('p', { nodeName: 'b' }), nodes: [node('a'), node('b')], want: { a: ["node(s) didn't match the requested node name"], b: [] } },
]));

test('TaintToleration: NoSchedule and NoExecute taints need a toleration; PreferNoSchedule never filters', () => {
  const master = taint('node-role.kubernetes.io/master', 'NoSchedule');
  run([
    { name: 'master taint', pod: pod('p'), nodes: [node('m', { taints: [master] })], want: { m: ['node(s) had untolerated taint {node-role.kubernetes.io/master: }'] } },
    { name: 'value shown', pod: pod('p'), nodes: [node('m', { taints: [taint('dedicated', 'NoExecute', 'gpu')] })], want: { m: ['node(s) had untolerated taint {dedicated: gpu}'] } },
    { name: 'first untolerated taint named', pod: pod('p', { tolerations: [{ key: 'a', operator: 'Exists' }] }), nodes: [node('m', { taints: [taint('a', 'NoSchedule'), taint('b', 'NoSchedule'), taint('c', 'NoSchedule')] })], want: { m: ['node(s) had untolerated taint {b: }'] } },
    { name: 'PreferNoSchedule ignored', pod: pod('p'), nodes: [node('m', { taints: [taint('soft', 'PreferNoSchedule')] })], want: { m: [] } },
    { name: 'Exists', pod: pod('p', { tolerations: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' }] }), nodes: [node('m', { taints: [master] })], want: { m: [] } },
    { name: 'Equal with value', pod: pod('p', { tolerations: [{ key: 'dedicated', value: 'gpu', effect: 'NoExecute' }] }), nodes: [node('m', { taints: [taint('dedicated', 'NoExecute', 'gpu')] })], want: { m: [] } },
    { name: 'Equal wrong value', pod: pod('p', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'cpu' }] }), nodes: [node('m', { taints: [taint('dedicated', 'NoExecute', 'gpu')] })], want: { m: ['node(s) had untolerated taint {dedicated: gpu}'] } },
    { name: 'empty effect tolerates all effects', pod: pod('p', { tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), nodes: [node('m', { taints: [taint('dedicated', 'NoExecute', 'gpu')] })], want: { m: [] } },
    { name: 'effect mismatch', pod: pod('p', { tolerations: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoExecute' }] }), nodes: [node('m', { taints: [master] })], want: { m: ['node(s) had untolerated taint {node-role.kubernetes.io/master: }'] } },
    { name: 'not-ready node (taint-based)', pod: pod('p'), nodes: [node('n', { taints: [taint('node.kubernetes.io/not-ready', 'NoExecute')] })], want: { n: ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'] } },
    { name: 'not-ready tolerated for 300s', pod: pod('p', { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] }), nodes: [node('n', { taints: [taint('node.kubernetes.io/not-ready', 'NoExecute')] })], want: { n: [] } },
    { name: 'unknown operator tolerates nothing', pod: pod('p', { tolerations: [{ key: 'a', operator: 'Sometimes' }] }), nodes: [node('n', { taints: [taint('a', 'NoSchedule')] })], want: { n: ['node(s) had untolerated taint {a: }'] } },
  ]);
});

const AFFINITY = "node(s) didn't match Pod's node affinity/selector";
const required = (...terms: object[]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } });
const expr = (key: string, operator: string, values?: string[]) => ({ key, operator, ...(values ? { values } : {}) });

test('NodeAffinity: nodeSelector and required node affinity terms', () => {
  const nodes = [node('a', { labels: { disk: 'ssd', cores: '8' } }), node('b', { labels: { disk: 'hdd', cores: '2' } }), node('c')];
  run([
    { name: 'nodeSelector', pod: pod('p', { nodeSelector: { disk: 'ssd' } }), nodes, want: { a: [], b: [AFFINITY], c: [AFFINITY] } },
    { name: 'In', pod: pod('p', { affinity: required({ matchExpressions: [expr('disk', 'In', ['ssd', 'nvme'])] }) }), nodes, want: { a: [], b: [AFFINITY], c: [AFFINITY] } },
    { name: 'NotIn (absent label passes)', pod: pod('p', { affinity: required({ matchExpressions: [expr('disk', 'NotIn', ['hdd'])] }) }), nodes, want: { a: [], b: [AFFINITY], c: [] } },
    { name: 'Exists', pod: pod('p', { affinity: required({ matchExpressions: [expr('disk', 'Exists')] }) }), nodes, want: { a: [], b: [], c: [AFFINITY] } },
    { name: 'DoesNotExist', pod: pod('p', { affinity: required({ matchExpressions: [expr('disk', 'DoesNotExist')] }) }), nodes, want: { a: [AFFINITY], b: [AFFINITY], c: [] } },
    { name: 'Gt', pod: pod('p', { affinity: required({ matchExpressions: [expr('cores', 'Gt', ['4'])] }) }), nodes, want: { a: [], b: [AFFINITY], c: [AFFINITY] } },
    { name: 'Lt', pod: pod('p', { affinity: required({ matchExpressions: [expr('cores', 'Lt', ['4'])] }) }), nodes, want: { a: [AFFINITY], b: [], c: [AFFINITY] } },
    { name: 'Gt with a non-integer matches nothing', pod: pod('p', { affinity: required({ matchExpressions: [expr('cores', 'Gt', ['four'])] }) }), nodes, want: { a: [AFFINITY], b: [AFFINITY] } },
    { name: 'terms are ORed', pod: pod('p', { affinity: required({ matchExpressions: [expr('disk', 'In', ['ssd'])] }, { matchExpressions: [expr('cores', 'In', ['2'])] }) }), nodes, want: { a: [], b: [], c: [AFFINITY] } },
    { name: 'expressions are ANDed', pod: pod('p', { affinity: required({ matchExpressions: [expr('disk', 'In', ['ssd']), expr('cores', 'In', ['2'])] }) }), nodes, want: { a: [AFFINITY], b: [AFFINITY] } },
    { name: 'an empty term matches nothing', pod: pod('p', { affinity: required({}) }), nodes, want: { a: [AFFINITY], c: [AFFINITY] } },
    { name: 'nodeSelector and affinity both apply', pod: pod('p', { nodeSelector: { disk: 'ssd' }, affinity: required({ matchExpressions: [expr('cores', 'In', ['2'])] }) }), nodes, want: { a: [AFFINITY], b: [AFFINITY] } },
    { name: 'matchFields metadata.name NotIn', pod: pod('p', { affinity: required({ matchFields: [expr('metadata.name', 'NotIn', ['a'])] }) }), nodes, want: { a: [AFFINITY], b: [], c: [] } },
    { name: 'matchFields on another field matches nothing', pod: pod('p', { affinity: required({ matchFields: [expr('metadata.uid', 'In', ['a'])] }) }), nodes, want: { a: [AFFINITY] } },
  ]);
});

const PORTS = "node(s) didn't have free ports for the requested pod ports";
const withPort = (name: string, hostPort: number, protocol?: string, hostIP?: string) => pod(name, { containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort, protocol, hostIP }] }] });

test('NodePorts: a host port, protocol and address in use on the node conflicts', () => run([
  { name: 'same port', pod: withPort('p', 8080), nodes: [node('a'), node('b')], bound: { a: [withPort('q', 8080)] }, want: { a: [PORTS], b: [] } },
  { name: 'other protocol', pod: withPort('p', 8080, 'UDP'), nodes: [node('a')], bound: { a: [withPort('q', 8080)] }, want: { a: [] } },
  { name: 'different specific IPs', pod: withPort('p', 8080, 'TCP', '127.0.1.1'), nodes: [node('a')], bound: { a: [withPort('q', 8080, 'TCP', '127.0.1.2')] }, want: { a: [] } },
  { name: 'same specific IP', pod: withPort('p', 8080, 'TCP', '127.0.1.1'), nodes: [node('a')], bound: { a: [withPort('q', 8080, 'TCP', '127.0.1.1')] }, want: { a: [PORTS] } },
  { name: 'wildcard against specific', pod: withPort('p', 8080), nodes: [node('a')], bound: { a: [withPort('q', 8080, 'TCP', '127.0.1.2')] }, want: { a: [PORTS] } },
  { name: 'specific against 0.0.0.0', pod: withPort('p', 8080, 'TCP', '127.0.1.1'), nodes: [node('a')], bound: { a: [withPort('q', 8080, 'TCP', '0.0.0.0')] }, want: { a: [PORTS] } },
  { name: 'container ports without hostPort never conflict', pod: pod('p', { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] }), nodes: [node('a')], bound: { a: [pod('q', { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] })] }, want: { a: [] } },
]));

test('NodeResourcesFit: requests against allocatable minus what bound pods request', () => {
  const small = node('small', { cpu: '1', memory: '1Gi', pods: '3' });
  run([
    { name: 'fits', pod: pod('p', { requests: { cpu: '500m', memory: '512Mi' } }), nodes: [small], want: { small: [] } },
    { name: 'cpu', pod: pod('p', { requests: { cpu: '1500m' } }), nodes: [small], want: { small: ['Insufficient cpu'] } },
    { name: 'cpu and memory both reported', pod: pod('p', { requests: { cpu: '2', memory: '2Gi' } }), nodes: [small], want: { small: ['Insufficient cpu', 'Insufficient memory'] } },
    { name: 'bound pods count', pod: pod('p', { requests: { cpu: '600m' } }), nodes: [small], bound: { small: [pod('q', { requests: { cpu: '500m' } })] }, want: { small: ['Insufficient cpu'] } },
    { name: 'exactly full still fits', pod: pod('p', { requests: { cpu: '500m' } }), nodes: [small], bound: { small: [pod('q', { requests: { cpu: '0.5' } })] }, want: { small: [] } },
    { name: 'too many pods', pod: pod('p'), nodes: [small], bound: { small: [pod('q1'), pod('q2'), pod('q3')] }, want: { small: ['Too many pods'] } },
    { name: 'too many pods and cpu', pod: pod('p', { requests: { cpu: '2' } }), nodes: [small], bound: { small: [pod('q1'), pod('q2'), pod('q3')] }, want: { small: ['Too many pods', 'Insufficient cpu'] } },
    { name: 'no pods allocatable', pod: pod('p'), nodes: [node('x', { pods: null })], want: { x: ['Too many pods'] } },
    { name: 'best-effort pod on a full node', pod: pod('p'), nodes: [small], bound: { small: [pod('q', { requests: { cpu: '1', memory: '1Gi' } })] }, want: { small: [] } },
    { name: 'ephemeral storage', pod: pod('p', { requests: { 'ephemeral-storage': '20Gi' } }), nodes: [node('e', { extra: { 'ephemeral-storage': '10Gi' } })], want: { e: ['Insufficient ephemeral-storage'] } },
    { name: 'extended resource', pod: pod('p', { requests: { 'example.com/gpu': '1' } }), nodes: [small, node('g', { extra: { 'example.com/gpu': '2' } })], want: { small: ['Insufficient example.com/gpu'], g: [] } },
    {
      name: 'init containers: the largest counts, not the sum',
      pod: pod('p', { containers: [{ name: 'c', resources: { requests: { cpu: '200m' } } }], initContainers: [{ name: 'i1', resources: { requests: { cpu: '900m' } } }, { name: 'i2', resources: { requests: { cpu: '800m' } } }] }),
      nodes: [small], bound: { small: [pod('q', { requests: { cpu: '150m' } })] }, want: { small: ['Insufficient cpu'] },
    },
    {
      name: 'init containers: max(init, containers) fits',
      pod: pod('p', { containers: [{ name: 'c', resources: { requests: { cpu: '200m' } } }], initContainers: [{ name: 'i1', resources: { requests: { cpu: '800m' } } }] }),
      nodes: [small], bound: { small: [pod('q', { requests: { cpu: '200m' } })] }, want: { small: [] },
    },
    {
      name: 'sidecars add to the containers',
      pod: pod('p', { containers: [{ name: 'c', resources: { requests: { cpu: '600m' } } }], initContainers: [{ name: 's', restartPolicy: 'Always', resources: { requests: { cpu: '500m' } } }] }),
      nodes: [small], want: { small: ['Insufficient cpu'] },
    },
    { name: 'overhead', pod: pod('p', { requests: { cpu: '900m' }, overhead: { cpu: '200m' } }), nodes: [small], want: { small: ['Insufficient cpu'] } },
    { name: 'a bound pod whose request does not parse counts as nothing', pod: pod('p', { requests: { cpu: '1' } }), nodes: [small], bound: { small: [pod('q', { requests: { cpu: 'lots' } })] }, want: { small: [] } },
    { name: 'a node whose allocatable does not parse offers nothing', pod: pod('p', { requests: { cpu: '1' } }), nodes: [node('odd', { cpu: 'four' })], want: { odd: ['Insufficient cpu'] } },
    { name: 'terminating pods still hold their requests', pod: pod('p', { requests: { cpu: '600m' } }), nodes: [small], bound: { small: [{ ...pod('q', { requests: { cpu: '500m' } }), metadata: { name: 'q', namespace: 'default', deletionTimestamp: '2026-01-01T00:00:00Z' } }] }, want: { small: ['Insufficient cpu'] } },
  ]);
});

const anti = (topologyKey: string, matchLabels: Record<string, string>, extra: object = {}) => ({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey, labelSelector: { matchLabels }, ...extra }] } });
const aff = (topologyKey: string, matchLabels: Record<string, string>) => ({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey, labelSelector: { matchLabels } }] } });

test('InterPodAffinity: required anti-affinity (both ways) and affinity, per topology domain', () => {
  const zoned = [node('a1', { zone: 'a' }), node('a2', { zone: 'a' }), node('b1', { zone: 'b' }), node('nozone')];
  const web = (name: string, extra: Partial<Pod['spec']> = {}, namespace?: string) => pod(name, { labels: { app: 'web' }, namespace, ...extra });
  run([
    { name: 'hostname anti-affinity', pod: web('p', { affinity: anti('kubernetes.io/hostname', { app: 'web' }) }), nodes: zoned, bound: { a1: [web('q')] }, want: { a1: ["node(s) didn't match pod anti-affinity rules"], a2: [], b1: [] } },
    { name: 'zone anti-affinity covers the whole zone; nodes without the key pass', pod: web('p', { affinity: anti('topology.kubernetes.io/zone', { app: 'web' }) }), nodes: zoned, bound: { a1: [web('q')] }, want: { a1: ["node(s) didn't match pod anti-affinity rules"], a2: ["node(s) didn't match pod anti-affinity rules"], b1: [], nozone: [] } },
    { name: 'other namespaces do not count', pod: web('p', { affinity: anti('kubernetes.io/hostname', { app: 'web' }) }), nodes: zoned, bound: { a1: [web('q', {}, 'other')] }, want: { a1: [] } },
    { name: 'namespaces list', pod: web('p', { affinity: anti('kubernetes.io/hostname', { app: 'web' }, { namespaces: ['other'] }) }), nodes: zoned, bound: { a1: [web('q', {}, 'other')], a2: [web('r')] }, want: { a1: ["node(s) didn't match pod anti-affinity rules"], a2: [] } },
    {
      name: 'namespaceSelector', pod: web('p', { affinity: anti('kubernetes.io/hostname', { app: 'web' }, { namespaceSelector: { matchLabels: { team: 'x' } } }) }), nodes: zoned,
      bound: { a1: [web('q', {}, 'team-x')], a2: [web('r', {}, 'team-y')] }, namespaces: { 'team-x': { team: 'x' }, 'team-y': { team: 'y' } }, want: { a1: ["node(s) didn't match pod anti-affinity rules"], a2: [] },
    },
    { name: 'an existing pod refuses the incoming one', pod: web('p'), nodes: zoned, bound: { a1: [pod('guard', { affinity: anti('topology.kubernetes.io/zone', { app: 'web' }) })] }, want: { a1: ["node(s) didn't satisfy existing pods anti-affinity rules"], a2: ["node(s) didn't satisfy existing pods anti-affinity rules"], b1: [] } },
    { name: 'affinity: only where a matching pod runs', pod: pod('p', { affinity: aff('topology.kubernetes.io/zone', { app: 'db' }) }), nodes: zoned, bound: { b1: [pod('db', { labels: { app: 'db' } })] }, want: { a1: ["node(s) didn't match pod affinity rules"], b1: [], nozone: ["node(s) didn't match pod affinity rules"] } },
    { name: 'affinity: the first of a self-affine group goes anywhere', pod: web('p', { affinity: aff('topology.kubernetes.io/zone', { app: 'web' }) }), nodes: zoned, want: { a1: [], b1: [], nozone: ["node(s) didn't match pod affinity rules"] } },
    { name: 'a nil label selector matches no pod', pod: web('p', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }] } } }), nodes: zoned, bound: { a1: [web('q')] }, want: { a1: [] } },
  ]);
});

const SPREAD = "node(s) didn't match pod topology spread constraints";
test('PodTopologySpread: DoNotSchedule constraints filter by maxSkew', () => {
  const zoned = [node('a1', { zone: 'a' }), node('b1', { zone: 'b' }), node('c1', { zone: 'c' }), node('nozone')];
  const constraint = (extra: object = {}) => [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...extra }];
  const web = (name: string) => pod(name, { labels: { app: 'web' } });
  run([
    { name: 'skew 1 allowed on the emptiest zone only', pod: pod('p', { labels: { app: 'web' }, topologySpreadConstraints: constraint() }), nodes: zoned, bound: { a1: [web('x')], b1: [web('y')] }, want: { a1: [SPREAD], b1: [SPREAD], c1: [], nozone: [`${SPREAD} (missing required label)`] } },
    { name: 'balanced: anywhere', pod: pod('p', { labels: { app: 'web' }, topologySpreadConstraints: constraint() }), nodes: zoned, bound: { a1: [web('x')], b1: [web('y')], c1: [web('z')] }, want: { a1: [], b1: [], c1: [] } },
    { name: 'a pod not matching its own selector adds nothing', pod: pod('p', { labels: { app: 'other' }, topologySpreadConstraints: constraint() }), nodes: zoned, bound: { a1: [web('x')] }, want: { a1: [] } },
    { name: 'ScheduleAnyway never filters', pod: pod('p', { labels: { app: 'web' }, topologySpreadConstraints: constraint({ whenUnsatisfiable: 'ScheduleAnyway' }) }), nodes: zoned, bound: { a1: [web('x'), web('x2')] }, want: { a1: [], nozone: [] } },
    { name: 'minDomains: too few domains count the minimum as 0', pod: pod('p', { labels: { app: 'web' }, topologySpreadConstraints: constraint({ minDomains: 5 }) }), nodes: zoned, bound: { a1: [web('x')], b1: [web('y')], c1: [web('z')] }, want: { a1: [SPREAD], c1: [SPREAD] } },
    {
      name: 'nodes the pod cannot use form no domain (nodeAffinityPolicy Honor)',
      pod: pod('p', { labels: { app: 'web' }, nodeSelector: { pool: 'x' }, topologySpreadConstraints: constraint() }),
      nodes: [node('a1', { zone: 'a', labels: { pool: 'x' } }), node('b1', { zone: 'b', labels: { pool: 'x' } }), node('c1', { zone: 'c' })],
      bound: { a1: [web('x')] }, want: { a1: [SPREAD], b1: [] },
    },
  ]);
});

test('filters run in kube order and the first failure is the reason', () => run([
  {
    name: 'tainted and full', pod: pod('p', { requests: { cpu: '8' } }),
    nodes: [node('m', { taints: [taint('node-role.kubernetes.io/master', 'NoSchedule')], cpu: '1' })],
    want: { m: ['node(s) had untolerated taint {node-role.kubernetes.io/master: }'] },
  },
  { name: 'cordoned and tainted', pod: pod('p'), nodes: [node('m', { unschedulable: true, taints: [taint('x', 'NoSchedule')] })], want: { m: [UNSCHEDULABLE] } },
]));

test('PodTopologySpread filter verdicts equal kube-scheduler\'s own single-constraint cases', () => {
  const zoned = (name: string, zone: string, key = 'zone') => ({ metadata: { name, labels: { [key]: zone, node: name } }, status: { allocatable: { pods: '110' } } }) as Node;
  const four = [zoned('node-a', 'zone1'), zoned('node-b', 'zone1'), zoned('node-x', 'zone2'), zoned('node-y', 'zone2')];
  const spreadPod = (maxSkew: number, key: string, selectorKey = 'foo', label = 'foo', extra: Partial<Pod['spec']> = {}): Pod => ({
    metadata: { name: 'p', namespace: 'default', labels: { [label]: '' } },
    spec: { containers: [{ name: 'c' }], topologySpreadConstraints: [{ maxSkew, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchExpressions: [{ key: selectorKey, operator: 'Exists' }] } }], ...extra },
  });
  const ok = undefined;
  const no = "node(s) didn't match pod topology spread constraints";
  const missing = `${no} (missing required label)`;
  const spread2103 = ['node-a:foo', 'node-a:foo', 'node-b:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo'];
  const cases: Array<{ name: string; pod: Pod; nodes: Node[]; pods: string[]; want: Record<string, string | undefined> }> = [
    { name: 'no existing pods', pod: spreadPod(1, 'zone'), nodes: four, pods: [], want: { 'node-a': ok, 'node-b': ok, 'node-x': ok, 'node-y': ok } },
    { name: "incoming pod doesn't match itself", pod: spreadPod(1, 'zone', 'bar'), nodes: four, pods: [], want: { 'node-a': ok, 'node-b': ok, 'node-x': ok, 'node-y': ok } },
    { name: 'other namespaces do not count', pod: spreadPod(1, 'zone'), nodes: four, pods: ['node-a:foo:ns1', 'node-a:foo:ns1', 'node-x:foo', 'node-y:foo'], want: { 'node-a': ok, 'node-b': ok, 'node-x': no, 'node-y': no } },
    { name: 'zones 3/3, all fit', pod: spreadPod(1, 'zone'), nodes: four, pods: ['node-a:foo', 'node-a:foo', 'node-b:foo', 'node-y:foo', 'node-y:foo', 'node-y:foo'], want: { 'node-a': ok, 'node-b': ok, 'node-x': ok, 'node-y': ok } },
    {
      name: "1/2 because node-b lacks 'zone'", pod: spreadPod(1, 'zone'), nodes: [four[0], zoned('node-b', 'zone1', 'zon'), four[2], four[3]],
      pods: ['node-a:foo', 'node-b:foo', 'node-x:foo', 'node-y:foo'], want: { 'node-a': ok, 'node-b': missing, 'node-x': no, 'node-y': no },
    },
    { name: "no node has 'rack'", pod: spreadPod(1, 'rack'), nodes: [four[0], four[2]], pods: [], want: { 'node-a': missing, 'node-x': missing } },
    { name: 'nodes 2/1/0/3, only node-x fits', pod: spreadPod(1, 'node'), nodes: four, pods: spread2103, want: { 'node-a': no, 'node-b': no, 'node-x': ok, 'node-y': no } },
    { name: 'nodes 2/1/0/3, maxSkew 2', pod: spreadPod(2, 'node'), nodes: four, pods: spread2103, want: { 'node-a': no, 'node-b': ok, 'node-x': ok, 'node-y': no } },
    { name: "nodes 2/1/0/3, pod doesn't match itself", pod: spreadPod(1, 'node', 'foo', 'bar'), nodes: four, pods: spread2103, want: { 'node-a': no, 'node-b': ok, 'node-x': ok, 'node-y': no } },
    {
      name: 'node affinity narrows the domains to node-a and node-y',
      pod: spreadPod(1, 'node', 'foo', 'foo', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'node', operator: 'In', values: ['node-a', 'node-y'] }] }] } } } }),
      nodes: four, pods: spread2103, want: { 'node-a': ok, 'node-y': no },
    },
    { name: 'terminating pods are excluded', pod: spreadPod(1, 'node'), nodes: [four[0], four[1]], pods: ['node-a:foo:terminating', 'node-b:foo'], want: { 'node-a': ok, 'node-b': no } },
  ];
  for (const c of cases) {
    const pods = existing(c.pods);
    const infos = c.nodes.map((n) => nodeInfo(n, pods.filter((p) => p.spec.nodeName === n.metadata.name)));
    const state = spreadFilterState(c.pod, infos);
    const got = Object.fromEntries(infos.filter((i) => i.name in c.want).map((i) => [i.name, spreadFilterReason(state, c.pod, i)]));
    assert.deepEqual(got, c.want, c.name);
  }
});
