// Runs a task graph: at most maxWorkers nodes at once, a node only once every node it depends
// on has succeeded, lowest-numbered ready node first. A failing node blocks only its
// dependents; independent branches keep going. The tasks of one node are handed to the
// worker function together, which applies them in order.
//
// Result: the errors of the failed nodes; when nothing failed but nodes were left undone
// (cancelled), one error "N incomplete task nodes, beginning with <task>" as OpenShift reports.
// `incomplete` counts the nodes with manifests that never ran (blocked or cancelled), always.
import type { Task, TaskGraph } from './task-graph.js';
import { taskString } from './task-graph.js';

export type NodeWorker = (tasks: Task[], signal: AbortSignal) => Promise<void>;

export interface RunResult {
  errors: Error[];
  succeeded: number;
  failed: number;
  /** Nodes with manifests that never ran. */
  incomplete: number;
  /** The first manifest of the first node that never ran. */
  firstIncomplete?: Task;
}

export async function runTaskGraph(g: TaskGraph, maxWorkers: number, worker: NodeWorker, signal?: AbortSignal): Promise<RunResult> {
  const n = g.nodes.length;
  const results: (true | Error | undefined)[] = new Array(n).fill(undefined);
  const started: boolean[] = new Array(n).fill(false);
  const predecessors = g.nodes.map((_, i) => (g.graph.predecessors(String(i)) ?? []).map(Number));
  const limit = Math.max(1, Math.floor(maxWorkers));
  const inflight = new Map<number, Promise<void>>();
  const abort = new AbortController();
  const onAbort = (): void => abort.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });

  const ready = (i: number): boolean => !started[i] && predecessors[i].every((p) => results[p] === true);
  const start = (i: number): void => {
    started[i] = true;
    const tasks = g.nodes[i].tasks;
    const run = tasks.length === 0 ? Promise.resolve() : Promise.resolve().then(() => worker(tasks, abort.signal));
    inflight.set(
      i,
      run.then(
        () => {
          results[i] = true;
        },
        (err: unknown) => {
          results[i] = err instanceof Error ? err : new Error(String(err));
        },
      ).finally(() => inflight.delete(i)),
    );
  };

  try {
    for (;;) {
      if (!abort.signal.aborted) {
        for (let i = 0; i < n && inflight.size < limit; i++) if (ready(i)) start(i);
      }
      if (inflight.size === 0) break;
      await Promise.race(inflight.values());
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }

  const errors = results.filter((r): r is Error => r instanceof Error);
  const undone = g.nodes.map((node, i) => ({ node, i })).filter(({ node, i }) => results[i] === undefined && node.tasks.length > 0);
  const result: RunResult = {
    errors,
    succeeded: results.filter((r, i) => r === true && g.nodes[i].tasks.length > 0).length,
    failed: errors.length,
    incomplete: undone.length,
    firstIncomplete: undone[0]?.node.tasks[0],
  };
  if (errors.length === 0 && result.firstIncomplete) {
    errors.push(new Error(`${undone.length} incomplete task nodes, beginning with ${taskString(result.firstIncomplete)}`));
  }
  return result;
}
