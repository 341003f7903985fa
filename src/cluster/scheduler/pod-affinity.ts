// Required inter-pod affinity and anti-affinity (kube's InterPodAffinity filter). A term selects
// pods by label selector within a set of namespaces (its `namespaces` and `namespaceSelector`; the
// owning pod's namespace when both are empty) and applies per topology domain: the nodes sharing
// the value of `topologyKey`. For the pod being scheduled:
//   - affinity: every term must find a matching pod in the node's domain — except that the first
//     pod of a group that matches its own terms may go anywhere with the topology labels;
//   - anti-affinity: no term may find a matching pod in the node's domain;
//   - symmetry: no existing pod's anti-affinity term may match the incoming pod in that domain.
// Domains are counted once per pod (the PreFilter), then each node is a lookup.
//
// Scoring (kube's InterPodAffinity score) sums, per domain, the weights of the preferred terms
// that hold there: the pod's preferred affinity (+weight) and anti-affinity (−weight) against the
// pods in the domain, and the domain's pods' terms against the pod — their preferred affinity
// (+weight), preferred anti-affinity (−weight) and required affinity (+1, kube's
// hardPodAffinityWeight); nodes are then scaled between the lowest (0) and highest (100) sum.
import { fromLabelSelectorObject, matchesLabels, type LabelSelector } from '../../apiserver/selectors.js';
import type { NodeInfo } from './resources.js';
import type { Pod, PodAffinityRules, PodAffinityTerm } from './types.js';

export const ERR_AFFINITY = "node(s) didn't match pod affinity rules";
export const ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";
export const ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";

interface Term {
  topologyKey: string;
  selector: LabelSelector;
  namespaces: Set<string>;
  namespaceSelector?: LabelSelector;
}

type NamespaceLabels = ReadonlyMap<string, Record<string, string>> | undefined;

function compileTerm(owner: Pod, term: PodAffinityTerm): Term {
  const namespaces = new Set(term.namespaces ?? []);
  const namespaceSelector = term.namespaceSelector ? fromLabelSelectorObject(term.namespaceSelector) : undefined;
  if (namespaces.size === 0 && !namespaceSelector) namespaces.add(owner.metadata.namespace ?? 'default');
  return { topologyKey: term.topologyKey, selector: fromLabelSelectorObject(term.labelSelector), namespaces, namespaceSelector };
}

function termMatchesPod(term: Term, pod: Pod, namespaceLabels: NamespaceLabels): boolean {
  const ns = pod.metadata.namespace ?? 'default';
  const inNamespace = term.namespaces.has(ns) || (term.namespaceSelector !== undefined && matchesLabels(term.namespaceSelector, namespaceLabels?.get(ns) ?? {}));
  return inNamespace && matchesLabels(term.selector, pod.metadata.labels);
}

const required = (terms: PodAffinityTerm[] | null | undefined) => terms ?? [];
const pairKey = (key: string, value: string) => `${key}\u0000${value}`;

export interface PodAffinityState {
  affinityTerms: Term[];
  antiAffinityTerms: Term[];
  /** Domains (key, value) holding pods that every/any term matches. */
  affinityCounts: Map<string, number>;
  antiAffinityCounts: Map<string, number>;
  existingAntiAffinityCounts: Map<string, number>;
  matchesOwnAffinity: boolean;
}

export function podAffinityState(pod: Pod, nodes: readonly NodeInfo[], namespaceLabels: NamespaceLabels): PodAffinityState {
  const affinityTerms = required(pod.spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution).map((t) => compileTerm(pod, t));
  const antiAffinityTerms = required(pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).map((t) => compileTerm(pod, t));
  const affinityCounts = new Map<string, number>();
  const antiAffinityCounts = new Map<string, number>();
  const existingAntiAffinityCounts = new Map<string, number>();
  const bump = (counts: Map<string, number>, key: string, value: string) => counts.set(pairKey(key, value), (counts.get(pairKey(key, value)) ?? 0) + 1);
  for (const info of nodes) {
    for (const existing of info.pods) {
      // An existing pod's anti-affinity against the incoming pod.
      for (const raw of required(existing.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution)) {
        const term = compileTerm(existing, raw);
        const value = info.labels[term.topologyKey];
        if (value !== undefined && termMatchesPod(term, pod, namespaceLabels)) bump(existingAntiAffinityCounts, term.topologyKey, value);
      }
      // The incoming pod's affinity needs every term to match the same existing pod.
      if (affinityTerms.length > 0 && affinityTerms.every((t) => termMatchesPod(t, existing, namespaceLabels))) {
        for (const t of affinityTerms) if (info.labels[t.topologyKey] !== undefined) bump(affinityCounts, t.topologyKey, info.labels[t.topologyKey]);
      }
      for (const t of antiAffinityTerms) {
        if (info.labels[t.topologyKey] !== undefined && termMatchesPod(t, existing, namespaceLabels)) bump(antiAffinityCounts, t.topologyKey, info.labels[t.topologyKey]);
      }
    }
  }
  const matchesOwnAffinity = affinityTerms.every((t) => termMatchesPod(t, pod, namespaceLabels));
  return { affinityTerms, antiAffinityTerms, affinityCounts, antiAffinityCounts, existingAntiAffinityCounts, matchesOwnAffinity };
}

/** The reason the node fails the pod's inter-pod (anti-)affinity, or undefined when it passes. */
export function podAffinityReason(state: PodAffinityState, info: NodeInfo): string | undefined {
  let podsExist = true;
  for (const t of state.affinityTerms) {
    const value = info.labels[t.topologyKey];
    if (value === undefined) return ERR_AFFINITY;
    if ((state.affinityCounts.get(pairKey(t.topologyKey, value)) ?? 0) <= 0) podsExist = false;
  }
  if (!podsExist && !(state.affinityCounts.size === 0 && state.matchesOwnAffinity)) return ERR_AFFINITY;
  for (const t of state.antiAffinityTerms) {
    const value = info.labels[t.topologyKey];
    if (value !== undefined && (state.antiAffinityCounts.get(pairKey(t.topologyKey, value)) ?? 0) > 0) return ERR_ANTI_AFFINITY;
  }
  for (const [key, value] of Object.entries(info.labels)) {
    if ((state.existingAntiAffinityCounts.get(pairKey(key, value)) ?? 0) > 0) return ERR_EXISTING_ANTI_AFFINITY;
  }
  return undefined;
}

/** kube-scheduler's default hardPodAffinityWeight: an existing pod's required affinity, as a preference. */
export const HARD_POD_AFFINITY_WEIGHT = 1;

const preferred = (rules: PodAffinityRules | null | undefined) => rules?.preferredDuringSchedulingIgnoredDuringExecution ?? [];

/** InterPodAffinity scores (0–100) for the feasible nodes; all 0 when no preference applies. */
export function podAffinityScores(pod: Pod, feasible: readonly NodeInfo[], all: readonly NodeInfo[], namespaceLabels: NamespaceLabels): number[] {
  const weighted = (owner: Pod, rules: PodAffinityRules | null | undefined, sign: number) =>
    preferred(rules).map((w) => ({ term: compileTerm(owner, w.podAffinityTerm), weight: sign * w.weight }));
  const ownTerms = [...weighted(pod, pod.spec.affinity?.podAffinity, 1), ...weighted(pod, pod.spec.affinity?.podAntiAffinity, -1)];
  const domains = new Map<string, number>();
  const credit = (term: Term, info: NodeInfo, weight: number) => {
    const value = info.labels[term.topologyKey];
    if (value !== undefined) domains.set(pairKey(term.topologyKey, value), (domains.get(pairKey(term.topologyKey, value)) ?? 0) + weight);
  };
  for (const info of all) {
    for (const existing of info.pods) {
      for (const { term, weight } of ownTerms) if (termMatchesPod(term, existing, namespaceLabels)) credit(term, info, weight);
      const theirs = [
        ...required(existing.spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution).map((t) => ({ term: compileTerm(existing, t), weight: HARD_POD_AFFINITY_WEIGHT })),
        ...weighted(existing, existing.spec.affinity?.podAffinity, 1),
        ...weighted(existing, existing.spec.affinity?.podAntiAffinity, -1),
      ];
      for (const { term, weight } of theirs) if (termMatchesPod(term, pod, namespaceLabels)) credit(term, info, weight);
    }
  }
  if (domains.size === 0) return feasible.map(() => 0);
  const raw = feasible.map((info) => Object.entries(info.labels).reduce((sum, [key, value]) => sum + (domains.get(pairKey(key, value)) ?? 0), 0));
  const [lowest, highest] = [Math.min(...raw), Math.max(...raw)];
  return raw.map((s) => (highest > lowest ? Math.trunc((100 * (s - lowest)) / (highest - lowest)) : 0));
}
