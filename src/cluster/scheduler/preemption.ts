// Preemption, pure: what kube-scheduler's DefaultPreemption PostFilter decides for a pod no node
// fits (pkg/scheduler/framework/preemption, plugins/defaultpreemption). A pod may preempt unless
// its preemptionPolicy is Never, or lower-priority pods on its nominated node are still
// terminating (it waits for them). The candidate nodes are those a filter refused for a reason
// removing pods could cure (resources, host ports, spreading, anti-affinity); on each, every pod of
// lower priority is taken away and, if the pod then fits, the pods are given back most important
// first (higher priority, then older) — those whose PodDisruptionBudget allows no disruption
// first — as long as it still fits: the rest are the victims. The node chosen has the fewest
// budget violations, then the lowest highest victim priority, the lowest sum of victim priorities,
// the fewest victims, and the most recently started most important victims. When no node works,
// the reason is kube's: "preemption: 0/N nodes are available: …" with "No preemption victims found
// for incoming pod", "Preemption is not helpful for scheduling" or the filter's own reason.
import { matchesLabels, type LabelSelector } from '../../common/label-selectors.js';
import { filterNode, preFilter } from './filters.js';
import { fitErrorMessage } from './schedule.js';
import { type NodeInfo, nodeInfo } from './resources.js';
import type { ClusterSnapshot, Pod } from './types.js';

/** The filters whose failure taking pods away can cure (kube: Unschedulable, not UnschedulableAndUnresolvable). */
export const RESOLVABLE_BY_PREEMPTION: ReadonlySet<string> = new Set(['NodePorts', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity']);

export const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_VICTIMS = 'No preemption victims found for incoming pod';

/** A PodDisruptionBudget as preemption reads it: whom it covers, and how many may go now. */
export interface DisruptionBudget {
  namespace: string;
  selector: LabelSelector;
  disruptionsAllowed: number;
}

export interface Preemption {
  node: string;
  victims: Pod[];
  pdbViolations: number;
}

export const priorityOf = (pod: Pod) => pod.spec.priority ?? 0;
const startOf = (pod: Pod) => Date.parse(pod.status?.startTime ?? pod.metadata.creationTimestamp ?? '') || 0;
/** kube's MoreImportantPod: higher priority, then the one that started first. */
const moreImportantFirst = (a: Pod, b: Pod) => priorityOf(b) - priorityOf(a) || startOf(a) - startOf(b);

/** Why the pod may not preempt now (kube's PodEligibleToPreemptOthers), or undefined. */
export function notEligible(pod: Pod, snapshot: ClusterSnapshot): string | undefined {
  if (pod.spec.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
  const nominated = pod.status?.nominatedNodeName;
  if (nominated) {
    const terminating = (snapshot.podsByNode.get(nominated) ?? []).some((p) => priorityOf(p) < priorityOf(pod) && p.metadata.deletionTimestamp);
    if (terminating) return 'not eligible due to a terminating pod on the nominated node.';
  }
  return undefined;
}

/** The victims on one node (kube's SelectVictimsOnNode), or the reason there are none. */
function victimsOn(pod: Pod, snapshot: ClusterSnapshot, infos: readonly NodeInfo[], at: number, budgets: readonly DisruptionBudget[]): { victims: Pod[]; pdbViolations: number } | { reason: string } {
  const info = infos[at];
  const lower = info.pods.filter((p) => priorityOf(p) < priorityOf(pod));
  if (lower.length === 0) return { reason: NO_VICTIMS };
  const fitsWith = (pods: readonly Pod[]) => {
    const trial = [...infos];
    trial[at] = nodeInfo(info.node, pods);
    return filterNode(preFilter(pod, trial, snapshot.namespaceLabels, snapshot.storage), trial[at]);
  };
  const kept = info.pods.filter((p) => !lower.includes(p));
  const failure = fitsWith(kept);
  if (failure) return { reason: failure.reasons[0] };
  // The budgets each victim would break, in importance order (kube's filterPodsWithPDBViolation).
  const allowed = budgets.map((b) => b.disruptionsAllowed);
  const violating: Pod[] = [];
  const other: Pod[] = [];
  for (const p of [...lower].sort(moreImportantFirst)) {
    let breaks = false;
    budgets.forEach((b, i) => {
      if (b.namespace !== p.metadata.namespace || b.selector.length === 0 || !matchesLabels(b.selector, p.metadata.labels)) return;
      if (allowed[i] <= 0) breaks = true;
      else allowed[i]--;
    });
    (breaks ? violating : other).push(p);
  }
  const victims: Pod[] = [];
  let pdbViolations = 0;
  const reprieve = (p: Pod, breaks: boolean) => {
    if (!fitsWith([...kept, p])) kept.push(p);
    else {
      victims.push(p);
      if (breaks) pdbViolations++;
    }
  };
  for (const p of violating) reprieve(p, true);
  for (const p of other) reprieve(p, false);
  return { victims, pdbViolations };
}

/** The best of several candidates (kube's pickOneNodeForPreemption). */
function pickOne(candidates: Preemption[]): Preemption {
  const highest = (c: Preemption) => Math.max(...c.victims.map(priorityOf));
  // Sums shifted so that negative priorities still count as "more" than none (kube adds MaxInt32 + 1).
  const sum = (c: Preemption) => c.victims.reduce((s, p) => s + priorityOf(p) + 2 ** 31, 0);
  const earliestOfHighest = (c: Preemption) => Math.min(...c.victims.filter((p) => priorityOf(p) === highest(c)).map(startOf));
  const rules: Array<(c: Preemption) => number> = [(c) => c.pdbViolations, highest, sum, (c) => c.victims.length, (c) => -earliestOfHighest(c)];
  let best = candidates;
  for (const rule of rules) {
    const least = Math.min(...best.map(rule));
    best = best.filter((c) => rule(c) === least);
    if (best.length === 1) break;
  }
  return best[0];
}

/**
 * Where `pod` could run by preempting, and whom (kube's Evaluator.Preempt, without its API calls);
 * or the message kube appends to the pod's FailedScheduling event.
 */
export function findPreemption(pod: Pod, snapshot: ClusterSnapshot, infos: readonly NodeInfo[], budgets: readonly DisruptionBudget[] = []): { preemption: Preemption } | { message: string; keepNomination?: true } {
  const ineligible = notEligible(pod, snapshot);
  // Not now: a pod waiting for its victims keeps its nominated node.
  if (ineligible) return { message: `preemption: ${ineligible}`, keepNomination: true };
  const state = preFilter(pod, infos, snapshot.namespaceLabels, snapshot.storage);
  const reasons = new Map<string, string[]>();
  const candidates: Preemption[] = [];
  infos.forEach((info, at) => {
    const failure = filterNode(state, info);
    if (!failure || !RESOLVABLE_BY_PREEMPTION.has(failure.plugin)) {
      reasons.set(info.name, [NOT_HELPFUL]);
      return;
    }
    const found = victimsOn(pod, snapshot, infos, at, budgets);
    if ('reason' in found) reasons.set(info.name, [found.reason]);
    else candidates.push({ node: info.name, ...found });
  });
  if (candidates.length === 0) return { message: `preemption: ${fitErrorMessage(infos.length, reasons)}` };
  return { preemption: pickOne(candidates) };
}
