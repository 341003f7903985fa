// Which pods a scaled-down controller deletes first, in kube's order (ActivePodsWithRanks, with
// PodDeletionCost and LogarithmicScaleDown as they are on by default):
//   1. unscheduled before scheduled;
//   2. Pending before Unknown before Running;
//   3. not ready before ready;
//   4. lower pod-deletion-cost before higher;
//   5. pods sharing their node with more related pods first (spreads what stays);
//   6. both ready: ready more recently first (in log2 buckets of readiness age, then by uid);
//   7. more container restarts first;
//   8. created more recently first (log2 buckets of age, then by uid).
// Pure: the caller passes the clock's now.
import type * as api from '../../api/index.js';
import { isReady, readySince } from './pods.js';
import { POD_DELETION_COST } from './resources.js';

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function deletionCost(pod: api.Pod): number {
  const n = Number.parseInt(pod.metadata?.annotations?.[POD_DELETION_COST] ?? '', 10);
  return Number.isFinite(n) ? n : 0;
}

function maxRestarts(pod: api.Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((s) => Number(s.restartCount ?? 0)));
}

function created(pod: api.Pod): number | undefined {
  const t = Date.parse(pod.metadata?.creationTimestamp ?? '');
  return Number.isNaN(t) ? undefined : t;
}

/** log2 of the age in nanoseconds, as kube buckets ages (-1 for no age). */
function ageBucket(t: number, now: number): number {
  const ns = (now - t) * 1e6;
  return ns > 0 ? Math.floor(Math.log2(ns)) : -1;
}

/**
 * Negative when `a` goes before `b`: the more recent time first, a missing time first of all;
 * times in the same log2 age bucket fall back to uid order.
 */
function newerFirst(a: number | undefined, b: number | undefined, uidA: string, uidB: string, now: number): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  const diff = ageBucket(a, now) - ageBucket(b, now);
  if (diff !== 0) return diff;
  return uidA < uidB ? -1 : uidA > uidB ? 1 : 0;
}

/** Compares two pods for deletion (negative: `a` is deleted first); `rank` counts co-located related pods. */
export function deletionOrder(a: api.Pod, b: api.Pod, rank: (pod: api.Pod) => number, now: number): number {
  const scheduledA = Boolean(a.spec?.nodeName);
  const scheduledB = Boolean(b.spec?.nodeName);
  if (scheduledA !== scheduledB) return scheduledA ? 1 : -1;
  const phaseA = PHASE_ORDER[a.status?.phase ?? ''] ?? 0;
  const phaseB = PHASE_ORDER[b.status?.phase ?? ''] ?? 0;
  if (phaseA !== phaseB) return phaseA - phaseB;
  if (isReady(a) !== isReady(b)) return isReady(a) ? 1 : -1;
  if (deletionCost(a) !== deletionCost(b)) return deletionCost(a) - deletionCost(b);
  if (rank(a) !== rank(b)) return rank(b) - rank(a);
  const uidA = String(a.metadata?.uid ?? '');
  const uidB = String(b.metadata?.uid ?? '');
  if (isReady(a) && isReady(b)) {
    const byReady = newerFirst(readySince(a), readySince(b), uidA, uidB, now);
    if (byReady !== 0) return byReady;
  }
  if (maxRestarts(a) !== maxRestarts(b)) return maxRestarts(b) - maxRestarts(a);
  return newerFirst(created(a), created(b), uidA, uidB, now);
}

/**
 * The `count` pods to delete from `pods`. `related` are the active pods of the controller and its
 * siblings (a Deployment's other ReplicaSets), whose placement ranks pods on crowded nodes first.
 */
export function podsToDelete(pods: api.Pod[], related: api.Pod[], count: number, now: number): api.Pod[] {
  if (count >= pods.length) return [...pods];
  const onNode = new Map<string, number>();
  for (const pod of related) {
    const node = pod.spec?.nodeName;
    if (node) onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  const rank = (pod: api.Pod) => (pod.spec?.nodeName ? (onNode.get(pod.spec.nodeName) ?? 0) : 0);
  return [...pods].sort((a, b) => deletionOrder(a, b, rank, now)).slice(0, count);
}
