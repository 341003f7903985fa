// Ranking the nodes that passed the filters, as kube-scheduler's default profile does with the
// plugins it weighs: each plugin scores every feasible node 0–100, the scores are summed with the
// plugin's weight, and the highest total wins.
//   - PodTopologySpread (weight 2): fewer matching pods in the node's domains is better;
//   - TaintToleration (weight 3): fewer PreferNoSchedule taints the pod does not tolerate;
//   - NodeAffinity (weight 2): the weights of the preferred node-affinity terms the node matches;
//   - InterPodAffinity (weight 2): preferred pod affinity and anti-affinity, both ways;
//   - NodeResourcesFit, LeastAllocated (weight 1): more cpu and memory left after placing the pod;
//   - NodeResourcesBalancedAllocation (weight 1): cpu and memory equally used after placing it.
// Integer arithmetic truncates as Go's does, so scores equal kube's. Where kube picks at random
// among equal totals, this picks the node whose name sorts first, so a run can be reproduced.
// Not scored: ImageLocality (nodes here report no images).
import type { MetaLabelSelector } from '../../apiserver/selectors.js';
import type { CycleState } from './filters.js';
import { preferredNodeAffinityScore } from './node-affinity.js';
import { podAffinityScores } from './pod-affinity.js';
import { type NodeInfo, podRequests } from './resources.js';
import { intolerablePreferNoScheduleTaints } from './taints.js';
import { spreadScores } from './topology-spread.js';

export const MAX_NODE_SCORE = 100;
export const SCORE_WEIGHTS = { PodTopologySpread: 2, TaintToleration: 3, NodeAffinity: 2, InterPodAffinity: 2, NodeResourcesFit: 1, NodeResourcesBalancedAllocation: 1 } as const;
type Plugin = keyof typeof SCORE_WEIGHTS;

export interface NodeScore {
  name: string;
  total: number;
  plugins: Record<Plugin, number>;
}

const div = (a: number, b: number) => Math.trunc(a / b);

function leastRequested(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return div((capacity - requested) * MAX_NODE_SCORE, capacity);
}

/** LeastAllocated over cpu and memory (weight 1 each), with the non-zero defaults for pods without requests. */
export function leastAllocatedScore(state: CycleState, info: NodeInfo): number {
  const pod = podRequests(state.pod, true);
  const pairs: Array<[number, number]> = [
    [info.nonZeroRequested.milliCPU + pod.milliCPU, info.allocatable.milliCPU],
    [info.nonZeroRequested.memory + pod.memory, info.allocatable.memory],
  ];
  let score = 0;
  let weights = 0;
  for (const [requested, allocatable] of pairs) {
    if (allocatable === 0) continue;
    score += leastRequested(requested, allocatable);
    weights += 1;
  }
  return weights === 0 ? 0 : div(score, weights);
}

/**
 * BalancedAllocation: 100 × (1 − the standard deviation of the cpu and memory fractions the node
 * would have in use), by the pod's actual requests; a pod requesting neither scores 0 everywhere
 * (kube skips the plugin for best-effort pods so they do not pile onto one node).
 */
export function balancedAllocationScore(state: CycleState, info: NodeInfo): number {
  const pod = state.requests;
  if (pod.milliCPU === 0 && pod.memory === 0) return 0;
  const fractions: number[] = [];
  for (const [requested, allocatable] of [[info.requested.milliCPU + pod.milliCPU, info.allocatable.milliCPU], [info.requested.memory + pod.memory, info.allocatable.memory]]) {
    if (allocatable !== 0) fractions.push(Math.min(1, requested / allocatable));
  }
  const deviation = fractions.length === 2 ? Math.abs((fractions[0] - fractions[1]) / 2) : 0;
  return Math.trunc((1 - deviation) * MAX_NODE_SCORE);
}

/** Kube's DefaultNormalizeScore: scale to 0–100 by the highest; reversed, fewer is better. */
export function normalize(raw: readonly number[], reverse: boolean): number[] {
  const highest = Math.max(0, ...raw);
  if (highest === 0) return raw.map(() => (reverse ? MAX_NODE_SCORE : 0));
  return raw.map((s) => {
    const scaled = div(MAX_NODE_SCORE * s, highest);
    return reverse ? MAX_NODE_SCORE - scaled : scaled;
  });
}

/** PodTopologySpread's NormalizeScore: max+min−score over max; ignored nodes score 0. */
export function normalizeSpread(raw: ReadonlyArray<number | undefined>): number[] {
  const valid = raw.filter((s): s is number => s !== undefined);
  if (valid.length === 0) return raw.map(() => 0);
  const [lowest, highest] = [Math.min(...valid), Math.max(0, ...valid)];
  return raw.map((s) => (s === undefined ? 0 : highest === 0 ? MAX_NODE_SCORE : div(MAX_NODE_SCORE * (highest + lowest - s), highest)));
}

export function scoreNodes(state: CycleState, feasible: readonly NodeInfo[], all: readonly NodeInfo[], defaultSpreadSelector?: MetaLabelSelector, namespaceLabels?: ReadonlyMap<string, Record<string, string>>): NodeScore[] {
  const spreadRaw = spreadScores(state.pod, feasible, all, defaultSpreadSelector);
  // A pod without ScheduleAnyway constraints (and no defaults) skips the plugin: 0 for every node.
  const spread = spreadRaw.size === 0 ? feasible.map(() => 0) : normalizeSpread(feasible.map((n) => spreadRaw.get(n.name)));
  const taints = normalize(feasible.map((n) => intolerablePreferNoScheduleTaints(n.node.spec?.taints, state.pod.spec.tolerations)), true);
  const affinity = normalize(feasible.map((n) => preferredNodeAffinityScore(state.pod, n.node)), false);
  const podAffinity = podAffinityScores(state.pod, feasible, all, namespaceLabels);
  return feasible.map((info, i) => {
    const plugins = { PodTopologySpread: spread[i], TaintToleration: taints[i], NodeAffinity: affinity[i], InterPodAffinity: podAffinity[i], NodeResourcesFit: leastAllocatedScore(state, info), NodeResourcesBalancedAllocation: balancedAllocationScore(state, info) };
    const total = (Object.keys(plugins) as Plugin[]).reduce((sum, p) => sum + plugins[p] * SCORE_WEIGHTS[p], 0);
    return { name: info.name, total, plugins };
  });
}

/** The best node: highest total, then the name that sorts first. */
export function selectHost(scores: readonly NodeScore[]): string | undefined {
  let best: NodeScore | undefined;
  for (const s of scores) if (!best || s.total > best.total || (s.total === best.total && s.name < best.name)) best = s;
  return best?.name;
}
