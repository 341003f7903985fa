// The CVO's task graph: how a payload's manifests are ordered and parallelised when applied.
// Pure construction from the manifests in payload order, following OpenShift's
// pkg/payload/task_graph.go:
//   - one task per manifest; every batch/v1 Job splits the sequence and becomes its own node, a
//     barrier: everything before it finishes before it starts, everything after waits for it;
//   - Updating: consecutive files of one run level form a level, levels strictly ordered; within
//     a level each component's files form one node (serial), components in parallel. A file whose
//     name does not follow 0000_<level>_<component>_ is a level of its own (a serial barrier at
//     its place in name order), exactly as OpenShift's ByNumberAndComponent does;
//   - Initializing: the same component nodes, flattened into one parallel bucket per Job-free
//     segment. Files with unparseable names go into one serial node of their own (OpenShift
//     means the same with its "FIXME" node, but can crash on them);
//   - Reconciling: as Initializing, with the node order of each bucket rotated by the attempt
//     number so that a stuck node does not always go first.
// Buckets follow each other: every node of bucket k depends on every node of bucket k-1; when
// both sides have several nodes an empty spacer node joins them (N+M edges instead of N×M).
import { Graph } from '@dagrejs/graphlib';
import { describeManifest, parseManifestName, type Manifest } from './payload/manifest.js';

export type GraphMode = 'Updating' | 'Initializing' | 'Reconciling';
export const graphModes: readonly GraphMode[] = ['Updating', 'Initializing', 'Reconciling'];

export interface Task {
  /** 1-based position in the payload. */
  index: number;
  total: number;
  manifest: Manifest;
}

export interface TaskNode {
  /** Applied in this order by one worker; empty for a spacer node. */
  tasks: Task[];
  runLevel?: number;
  component?: string;
}

/** Nodes are numbered by position in `nodes`; the graph's node ids are those numbers as strings. */
export interface TaskGraph {
  nodes: TaskNode[];
  graph: Graph<unknown, TaskNode, unknown>;
}

export interface TaskGraphOptions {
  /** Reconciling only: rotates each bucket's node order by this many places. */
  attempt?: number;
}

/** `kind "ns/name" (i of n)`, as the CVO names a task in messages. */
export function taskString(t: Task): string {
  return `${describeManifest(t.manifest)} (${t.index} of ${t.total})`;
}

export function isJob(m: Manifest): boolean {
  return m.gvk.group === 'batch' && m.gvk.version === 'v1' && m.gvk.kind === 'Job';
}

function splitOnJobs(tasks: Task[]): Task[][] {
  const segments: Task[][] = [];
  let current: Task[] = [];
  for (const t of tasks) {
    if (isJob(t.manifest)) {
      if (current.length > 0) segments.push(current);
      segments.push([t]);
      current = [];
    } else current.push(t);
  }
  if (current.length > 0) segments.push(current);
  return segments;
}

/** Consecutive tasks of one level and component, each run (or unparseable task) tagged with its place. */
function componentRuns(tasks: Task[]): { node: TaskNode; parsed: boolean }[] {
  const runs: { node: TaskNode; parsed: boolean }[] = [];
  for (const t of tasks) {
    const name = parseManifestName(t.manifest.file);
    const last = runs.at(-1);
    if (name && last?.parsed && last.node.runLevel === name.runLevel && last.node.component === name.component) last.node.tasks.push(t);
    else runs.push({ node: { tasks: [t], ...(name && { runLevel: name.runLevel, component: name.component }) }, parsed: name !== undefined });
  }
  return runs;
}

function byNumberAndComponent(tasks: Task[]): TaskNode[][] {
  const buckets: TaskNode[][] = [];
  let lastLevel: number | undefined;
  for (const { node, parsed } of componentRuns(tasks)) {
    if (parsed && lastLevel === node.runLevel) buckets.at(-1)!.push(node);
    else buckets.push([node]);
    lastLevel = parsed ? node.runLevel : undefined;
  }
  return buckets;
}

function flattenByNumberAndComponent(tasks: Task[]): TaskNode[][] {
  const runs = componentRuns(tasks);
  const nodes = runs.filter((r) => r.parsed).map((r) => r.node);
  const unparsed = runs.filter((r) => !r.parsed).flatMap((r) => r.node.tasks);
  if (unparsed.length > 0) nodes.push({ tasks: unparsed });
  return [nodes];
}

function rotate<T>(list: T[], by: number): T[] {
  if (list.length === 0) return list;
  const shift = ((by % list.length) + list.length) % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

/** The buckets (levels of parallel nodes, in order) for the manifests in the given mode. */
export function taskBuckets(manifests: Manifest[], mode: GraphMode, options: TaskGraphOptions = {}): TaskNode[][] {
  const tasks = manifests.map((manifest, i) => ({ index: i + 1, total: manifests.length, manifest }));
  const buckets: TaskNode[][] = [];
  for (const segment of splitOnJobs(tasks)) {
    if (segment.length === 1 && isJob(segment[0].manifest)) {
      const name = parseManifestName(segment[0].manifest.file);
      buckets.push([{ tasks: segment, ...(name && { runLevel: name.runLevel, component: name.component }) }]);
    } else if (mode === 'Updating') buckets.push(...byNumberAndComponent(segment));
    else buckets.push(...flattenByNumberAndComponent(segment).map((b) => (mode === 'Reconciling' ? rotate(b, options.attempt ?? 0) : b)));
  }
  return buckets;
}

/** Builds the task graph for the manifests (payload order) in the given mode. */
export function buildTaskGraph(manifests: Manifest[], mode: GraphMode, options: TaskGraphOptions = {}): TaskGraph {
  const nodes: TaskNode[] = [];
  const graph = new Graph<unknown, TaskNode, unknown>({ directed: true });
  const add = (node: TaskNode): string => {
    const id = String(nodes.length);
    nodes.push(node);
    graph.setNode(id, node);
    return id;
  };
  let previous: string[] = [];
  for (const bucket of taskBuckets(manifests, mode, options)) {
    if (previous.length > 1 && bucket.length > 1) {
      const spacer = add({ tasks: [] });
      for (const p of previous) graph.setEdge(p, spacer);
      previous = [spacer];
    }
    const ids = bucket.map(add);
    for (const p of previous) for (const id of ids) graph.setEdge(p, id);
    previous = ids;
  }
  return { nodes, graph };
}

/**
 * How many workers the CVO runs a graph with, as OpenShift's sync worker does: Initializing as
 * many as there are nodes (everything at once), Reconciling 2 (gentle on the API server),
 * Updating up to 16.
 */
export function workersFor(mode: GraphMode, g: TaskGraph): number {
  if (mode === 'Initializing') return Math.max(1, g.nodes.length);
  return mode === 'Reconciling' ? 2 : 16;
}

/** A short label for a node: `NN-component, N manifests`, as OpenShift's graph rendering. */
export function nodeLabel(node: TaskNode): string {
  if (node.tasks.length === 0) return '';
  const count = `${node.tasks.length} manifest${node.tasks.length === 1 ? '' : 's'}`;
  return node.component !== undefined ? `${String(node.runLevel).padStart(2, '0')}-${node.component}, ${count}` : count;
}

/** The graph in Graphviz DOT; with perManifest, each node lists its manifests. */
export function taskGraphToDot(g: TaskGraph, options: { perManifest?: boolean } = {}): string {
  const escape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  const lines = ['digraph tasks {', '  labelloc=t;', '  rankdir=TB;'];
  g.nodes.forEach((node, i) => {
    if (node.tasks.length === 0) {
      lines.push(`  ${i} [ label="" shape="point" ];`);
      return;
    }
    const parts = [nodeLabel(node), ...(options.perManifest ? node.tasks.map(taskString) : [])];
    lines.push(`  ${i} [ label="${parts.map(escape).join('\\n')}" shape="box" ];`);
  });
  for (const e of g.graph.edges().sort((a, b) => Number(a.v) - Number(b.v) || Number(a.w) - Number(b.w))) lines.push(`  ${e.v} -> ${e.w};`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
