// Task-graph construction for the three modes: ordering, parallelism, Job barriers, unparseable
// file names, the rotating Reconciling order and the DOT rendering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTaskGraph, taskBuckets, taskGraphToDot, taskString, workersFor, type GraphMode, type TaskGraph } from '../../src/cvo/task-graph.js';
import { manifest } from './helpers.js';

/** Buckets as strings: each node is its files joined by "+", nodes of a bucket joined by " | ". */
function shape(files: string[], mode: GraphMode, attempt = 0, jobs: string[] = []): string[] {
  const ms = files.map((f) => manifest(f, jobs.includes(f) ? 'Job' : 'ConfigMap'));
  return taskBuckets(ms, mode, { attempt }).map((b) => b.map((n) => n.tasks.map((t) => t.manifest.file.replace(/\.yaml$/, '')).join('+')).join(' | '));
}

function edges(g: TaskGraph): string[] {
  return g.graph.edges().map((e) => `${e.v}->${e.w}`).sort();
}

const cases: { name: string; files: string[]; jobs?: string[]; mode: GraphMode; attempt?: number; want: string[] }[] = [
  {
    name: 'Updating: levels in order, components of a level in parallel, files of a component serial',
    files: ['0000_10_a_1.yaml', '0000_10_a_2.yaml', '0000_10_b_1.yaml', '0000_20_c_1.yaml'],
    mode: 'Updating',
    want: ['0000_10_a_1+0000_10_a_2 | 0000_10_b_1', '0000_20_c_1'],
  },
  {
    name: 'Updating: multi-part component names (hyphens) group by the shortest match, as OpenShift',
    files: ['0000_50_cluster-version_00_a.yaml', '0000_50_cluster-version_01_b.yaml', '0000_50_olm_00_c.yaml'],
    mode: 'Updating',
    want: ['0000_50_cluster-version_00_a+0000_50_cluster-version_01_b | 0000_50_olm_00_c'],
  },
  {
    name: 'Updating: a Job is a barrier splitting its level',
    files: ['0000_10_a_1.yaml', '0000_10_a_2.yaml', '0000_10_a_3.yaml', '0000_10_b_1.yaml'],
    jobs: ['0000_10_a_2.yaml'],
    mode: 'Updating',
    want: ['0000_10_a_1', '0000_10_a_2', '0000_10_a_3 | 0000_10_b_1'],
  },
  {
    name: 'Updating: an unparseable name is a serial level of its own at its place in name order',
    files: ['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_10_c.yaml', '0000_10_d_1.yaml', '0000_10_e_1.yaml'],
    mode: 'Updating',
    want: ['0000_10_a_1 | 0000_10_b_1', '0000_10_c', '0000_10_d_1 | 0000_10_e_1'],
  },
  {
    name: 'Initializing: every component chunk of every level in parallel',
    files: ['0000_10_a_1.yaml', '0000_10_a_2.yaml', '0000_10_b_1.yaml', '0000_20_c_1.yaml', '0000_30_a_1.yaml'],
    mode: 'Initializing',
    want: ['0000_10_a_1+0000_10_a_2 | 0000_10_b_1 | 0000_20_c_1 | 0000_30_a_1'],
  },
  {
    name: 'Initializing: Jobs still split the flattened graph',
    files: ['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_20_job_1.yaml', '0000_30_c_1.yaml', '0000_30_d_1.yaml'],
    jobs: ['0000_20_job_1.yaml'],
    mode: 'Initializing',
    want: ['0000_10_a_1 | 0000_10_b_1', '0000_20_job_1', '0000_30_c_1 | 0000_30_d_1'],
  },
  {
    name: 'Initializing: unparseable names gather in one serial node',
    files: ['0000_10_a_1.yaml', '0000_10_b.yaml', '0000_20_c_1.yaml', 'zz-extra.yaml'],
    mode: 'Initializing',
    want: ['0000_10_a_1 | 0000_20_c_1 | 0000_10_b+zz-extra'],
  },
  {
    name: 'Reconciling attempt 0: flattened in payload order',
    files: ['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'],
    mode: 'Reconciling',
    attempt: 0,
    want: ['0000_10_a_1 | 0000_20_b_1 | 0000_30_c_1'],
  },
  {
    name: 'Reconciling attempt 1: rotated by one',
    files: ['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'],
    mode: 'Reconciling',
    attempt: 1,
    want: ['0000_20_b_1 | 0000_30_c_1 | 0000_10_a_1'],
  },
  {
    name: 'Reconciling attempt 3 of 3 nodes: back to the start',
    files: ['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'],
    mode: 'Reconciling',
    attempt: 3,
    want: ['0000_10_a_1 | 0000_20_b_1 | 0000_30_c_1'],
  },
];

for (const c of cases) {
  test(`task graph buckets — ${c.name}`, () => {
    assert.deepEqual(shape(c.files, c.mode, c.attempt, c.jobs), c.want);
  });
}

test('Updating graph: every node of a level depends on every node of the previous one', () => {
  const g = buildTaskGraph(['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_20_c_1.yaml'].map((f) => manifest(f)), 'Updating');
  assert.equal(g.nodes.length, 3);
  assert.deepEqual(edges(g), ['0->2', '1->2']);
});

test('Updating graph: two wide levels meet at a spacer node (N+M edges, not N×M)', () => {
  const files = ['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_10_c_1.yaml', '0000_20_d_1.yaml', '0000_20_e_1.yaml', '0000_20_f_1.yaml'];
  const g = buildTaskGraph(files.map((f) => manifest(f)), 'Updating');
  assert.equal(g.nodes.length, 7);
  assert.deepEqual(g.nodes[3].tasks, []);
  assert.deepEqual(edges(g), ['0->3', '1->3', '2->3', '3->4', '3->5', '3->6']);
});

test('Initializing graph has no edges without Jobs', () => {
  const g = buildTaskGraph(['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'].map((f) => manifest(f)), 'Initializing');
  assert.equal(g.graph.edgeCount(), 0);
  assert.equal(g.nodes.length, 3);
});

test('tasks are numbered in payload order and named as the CVO names them', () => {
  const ms = [manifest('0000_10_a_1.yaml', 'Namespace', 'ns1'), manifest('0000_10_a_2.yaml', 'ConfigMap', 'cm', { metadata: { name: 'cm', namespace: 'ns1' } })];
  const g = buildTaskGraph(ms, 'Updating');
  assert.deepEqual(g.nodes[0].tasks.map(taskString), ['namespace "ns1" (1 of 2)', 'configmap "ns1/cm" (2 of 2)']);
});

test('an empty payload gives an empty graph', () => {
  const g = buildTaskGraph([], 'Updating');
  assert.equal(g.nodes.length, 0);
});

test('DOT output names levels and components and lists the edges', () => {
  const g = buildTaskGraph(['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_20_c_1.yaml'].map((f) => manifest(f)), 'Updating');
  const dot = taskGraphToDot(g);
  assert.match(dot, /^digraph tasks \{/);
  assert.match(dot, /0 \[ label="10-a, 1 manifest" shape="box" \];/);
  assert.match(dot, /2 \[ label="20-c, 1 manifest" shape="box" \];/);
  assert.match(dot, /0 -> 2;\n {2}1 -> 2;\n\}\n$/);
  assert.match(taskGraphToDot(g, { perManifest: true }), /label="20-c, 1 manifest\\nconfigmap \\"0000-20-c-1\\" \(3 of 3\)"/);
});

test('worker counts per mode follow the sync worker: all nodes, 2, 16', () => {
  const files = ['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'].map((f) => manifest(f));
  assert.equal(workersFor('Initializing', buildTaskGraph(files, 'Initializing')), 3);
  assert.equal(workersFor('Reconciling', buildTaskGraph(files, 'Reconciling')), 2);
  assert.equal(workersFor('Updating', buildTaskGraph(files, 'Updating')), 16);
});
