// Pod topology spread (kube's PodTopologySpread plugin). A constraint counts the pods matching its
// selector in the pod's namespace per domain (the value of `topologyKey` on the nodes):
//   - DoNotSchedule is a filter: placing the pod must not make its domain exceed the global
//     minimum by more than maxSkew (the minimum counts as 0 while fewer than minDomains domains
//     exist); nodes without the key are refused;
//   - ScheduleAnyway is a score: fewer matching pods in the node's domain scores higher.
// Only nodes that pass the pod's nodeSelector/affinity (nodeAffinityPolicy Honor, the default)
// and, with nodeTaintsPolicy Honor, whose taints it tolerates, form domains. Pods being deleted do
// not count. A pod with no constraints of its own gets the system defaults (hostname maxSkew 3,
// zone maxSkew 5, ScheduleAnyway) over the selector of the Services and controllers it belongs to.
import { fromLabelSelectorObject, matchesLabels, type LabelSelector, type MetaLabelSelector } from '../../apiserver/selectors.js';
import { matchesRequiredNodeAffinity } from './node-affinity.js';
import type { NodeInfo } from './resources.js';
import { firstUntoleratedTaint } from './taints.js';
import { HOSTNAME_LABEL, type Pod, type TopologySpreadConstraint, ZONE_LABEL } from './types.js';

export const ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_NODE_LABEL_NOT_MATCH = `${ERR_CONSTRAINTS_NOT_MATCH} (missing required label)`;

export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = [
  { topologyKey: HOSTNAME_LABEL, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: ZONE_LABEL, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
];

interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: LabelSelector;
  minDomains: number;
  honorAffinity: boolean;
  honorTaints: boolean;
}

function compile(pod: Pod, raw: TopologySpreadConstraint, selector?: LabelSelector): Constraint {
  let compiled = selector ?? fromLabelSelectorObject(raw.labelSelector);
  // matchLabelKeys: the pod's own values for those keys narrow the selector (e.g. pod-template-hash).
  const labels = pod.metadata.labels ?? {};
  const extra = (raw.matchLabelKeys ?? []).filter((k) => Object.hasOwn(labels, k)).map((key) => ({ key, operator: 'In' as const, values: [labels[key]] }));
  // (Merged into a missing selector, which selects nothing, they are the whole selector, as in kube.)
  if (extra.length > 0 && !selector) compiled = raw.labelSelector ? [...extra, ...compiled] : extra;
  return {
    maxSkew: raw.maxSkew,
    topologyKey: raw.topologyKey,
    selector: compiled,
    minDomains: raw.minDomains ?? 1,
    honorAffinity: (raw.nodeAffinityPolicy ?? 'Honor') === 'Honor',
    honorTaints: raw.nodeTaintsPolicy === 'Honor',
  };
}

/**
 * The pod's constraints for one kind of action. Without constraints of its own, the system
 * defaults apply (ScheduleAnyway only) when `defaultSelector` — the merged selectors of the
 * Services, ReplicaSets, StatefulSets and ReplicationControllers selecting the pod — is not empty.
 */
export function spreadConstraints(pod: Pod, action: 'DoNotSchedule' | 'ScheduleAnyway', defaultSelector?: MetaLabelSelector): Constraint[] {
  const own = pod.spec.topologySpreadConstraints ?? [];
  if (own.length > 0) return own.filter((c) => c.whenUnsatisfiable === action).map((c) => compile(pod, c));
  if (action !== 'ScheduleAnyway' || !defaultSelector) return [];
  const selector = fromLabelSelectorObject(defaultSelector);
  if (selector.length === 0) return [];
  return SYSTEM_DEFAULT_CONSTRAINTS.map((c) => compile(pod, c, selector));
}

function nodeIncluded(c: Constraint, pod: Pod, info: NodeInfo): boolean {
  if (c.honorAffinity && !matchesRequiredNodeAffinity(pod, info.node)) return false;
  if (c.honorTaints && firstUntoleratedTaint(info.node.spec?.taints, pod.spec.tolerations)) return false;
  return true;
}

function countMatching(pods: readonly Pod[], selector: LabelSelector, namespace: string): number {
  return pods.filter((p) => !p.metadata.deletionTimestamp && (p.metadata.namespace ?? 'default') === namespace && matchesLabels(selector, p.metadata.labels)).length;
}

const hasAllKeys = (labels: Record<string, string>, constraints: readonly Constraint[]) => constraints.every((c) => Object.hasOwn(labels, c.topologyKey));

export interface SpreadFilterState {
  constraints: Constraint[];
  /** Per constraint: matching pods per domain value. */
  counts: Array<Map<string, number>>;
}

export function spreadFilterState(pod: Pod, nodes: readonly NodeInfo[]): SpreadFilterState {
  const constraints = spreadConstraints(pod, 'DoNotSchedule');
  const counts = constraints.map(() => new Map<string, number>());
  const namespace = pod.metadata.namespace ?? 'default';
  for (const info of nodes) {
    if (!hasAllKeys(info.labels, constraints)) continue;
    constraints.forEach((c, i) => {
      if (!nodeIncluded(c, pod, info)) return;
      const value = info.labels[c.topologyKey];
      counts[i].set(value, (counts[i].get(value) ?? 0) + countMatching(info.pods, c.selector, namespace));
    });
  }
  return { constraints, counts };
}

/** The reason the node would break a DoNotSchedule constraint, or undefined. */
export function spreadFilterReason(state: SpreadFilterState, pod: Pod, info: NodeInfo): string | undefined {
  for (const [i, c] of state.constraints.entries()) {
    if (!Object.hasOwn(info.labels, c.topologyKey)) return ERR_NODE_LABEL_NOT_MATCH;
    const domains = state.counts[i];
    const minMatch = domains.size < c.minDomains ? 0 : Math.min(...domains.values());
    const self = matchesLabels(c.selector, pod.metadata.labels) ? 1 : 0;
    const skew = (domains.get(info.labels[c.topologyKey]) ?? 0) + self - minMatch;
    if (skew > c.maxSkew) return ERR_CONSTRAINTS_NOT_MATCH;
  }
  return undefined;
}

/**
 * Raw spread scores for the feasible nodes (lower = fewer matching pods = better), before
 * normalisation; undefined for a node that is ignored (lacks a topology key). Empty when the pod
 * has no ScheduleAnyway constraints.
 */
export function spreadScores(pod: Pod, feasible: readonly NodeInfo[], all: readonly NodeInfo[], defaultSelector?: MetaLabelSelector): Map<string, number | undefined> {
  const scores = new Map<string, number | undefined>();
  const constraints = spreadConstraints(pod, 'ScheduleAnyway', defaultSelector);
  if (constraints.length === 0) return scores;
  const namespace = pod.metadata.namespace ?? 'default';
  // With the system defaults a node without a zone still spreads by hostname.
  const requireAll = (pod.spec.topologySpreadConstraints ?? []).length > 0;
  const ignored = new Set(feasible.filter((n) => requireAll && !hasAllKeys(n.labels, constraints)).map((n) => n.name));
  const domainCounts = constraints.map(() => new Map<string, number>());
  const domainSizes = constraints.map(() => 0);
  for (const info of feasible) {
    if (ignored.has(info.name)) continue;
    constraints.forEach((c, i) => {
      if (c.topologyKey === HOSTNAME_LABEL || !Object.hasOwn(info.labels, c.topologyKey)) return;
      if (!domainCounts[i].has(info.labels[c.topologyKey])) {
        domainCounts[i].set(info.labels[c.topologyKey], 0);
        domainSizes[i]++;
      }
    });
  }
  // Count over every node (not only the feasible ones), in the domains the feasible nodes span.
  for (const info of all) {
    if (requireAll && !hasAllKeys(info.labels, constraints)) continue;
    constraints.forEach((c, i) => {
      if (!nodeIncluded(c, pod, info)) return;
      const value = info.labels[c.topologyKey];
      if (value === undefined || !domainCounts[i].has(value)) return;
      domainCounts[i].set(value, domainCounts[i].get(value)! + countMatching(info.pods, c.selector, namespace));
    });
  }
  const weights = constraints.map((c, i) => Math.log((c.topologyKey === HOSTNAME_LABEL ? feasible.length - ignored.size : domainSizes[i]) + 2));
  for (const info of feasible) {
    if (ignored.has(info.name)) {
      scores.set(info.name, undefined);
      continue;
    }
    let score = 0;
    constraints.forEach((c, i) => {
      const value = info.labels[c.topologyKey];
      if (value === undefined) return;
      const count = c.topologyKey === HOSTNAME_LABEL ? countMatching(info.pods, c.selector, namespace) : domainCounts[i].get(value) ?? 0;
      score += count * weights[i] + (c.maxSkew - 1);
    });
    scores.set(info.name, Math.round(score));
  }
  return scores;
}

interface ServiceLike {
  metadata: { namespace?: string };
  spec?: { selector?: Record<string, string> | null } | null;
}

/**
 * The selector system default spreading counts with (kube's helper.DefaultSelector): the merged
 * selectors of the pod's namespace's Services that select it, plus the selector of its controller
 * (a ReplicaSet or StatefulSet, passed as `ownerSelector`). Undefined when nothing selects the pod.
 */
export function defaultSpreadSelector(pod: Pod, services: readonly ServiceLike[], ownerSelector?: MetaLabelSelector | null): MetaLabelSelector | undefined {
  const labels = pod.metadata.labels ?? {};
  const namespace = pod.metadata.namespace ?? 'default';
  const matchLabels: Record<string, string> = {};
  for (const service of services) {
    const selector = service.spec?.selector;
    if ((service.metadata.namespace ?? 'default') !== namespace || !selector || Object.keys(selector).length === 0) continue;
    if (Object.entries(selector).every(([k, v]) => labels[k] === v)) Object.assign(matchLabels, selector);
  }
  const matchExpressions = [
    ...Object.entries(ownerSelector?.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'In', values: [value] })),
    ...(ownerSelector?.matchExpressions ?? []).map((e) => ({ key: e.key, operator: e.operator, values: e.values ?? [] })),
  ];
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0) return undefined;
  return { matchLabels, matchExpressions };
}
