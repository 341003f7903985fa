// Which nodes a pod's nodeSelector and required node affinity allow (component-helpers'
// nodeaffinity.RequiredNodeAffinity): every nodeSelector label must match, and at least one
// nodeSelectorTerm; within a term every matchExpression (on labels) and matchField (on
// metadata.name) must hold. A term with neither matches no node; a requirement that cannot be
// parsed (Gt with a non-integer, In without values) makes its term match nothing, as kube ignores
// such terms rather than failing the pod. Preferred terms add their weight to a node's score.
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from './types.js';

const INTEGER = /^[+-]?\d+$/;

function requirementHolds(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      if (values.length === 0) return false;
      return value !== undefined && values.includes(value);
    case 'NotIn':
      if (values.length === 0) return false;
      return value === undefined || !values.includes(value);
    case 'Exists':
      return values.length === 0 && value !== undefined;
    case 'DoesNotExist':
      return values.length === 0 && value === undefined;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !INTEGER.test(values[0]) || value === undefined || !INTEGER.test(value)) return false;
      const [have, bound] = [BigInt(value), BigInt(values[0])];
      return r.operator === 'Gt' ? have > bound : have < bound;
    }
    default:
      return false;
  }
}

function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  if (!expressions.every((r) => requirementHolds(r, Object.hasOwn(labels, r.key) ? labels[r.key] : undefined))) return false;
  // metadata.name is the only node field a selector may name, with exactly one value.
  return fields.every((r) => r.key === 'metadata.name' && (r.values ?? []).length === 1 && requirementHolds(r, node.metadata.name));
}

/** Whether a node selector (a PersistentVolume's required node affinity) allows the node: one of its terms matches. */
export function matchesNodeSelector(selector: { nodeSelectorTerms?: NodeSelectorTerm[] | null } | null | undefined, node: Node): boolean {
  return !selector || (selector.nodeSelectorTerms ?? []).some((term) => termMatches(term, node));
}

/** Whether the node satisfies the pod's nodeSelector and required node affinity. */
export function matchesRequiredNodeAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [key, value] of Object.entries(pod.spec.nodeSelector ?? {})) if (labels[key] !== value) return false;
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((term) => termMatches(term, node));
}

/**
 * The node names the required terms pin the pod to through `metadata.name In` (as a DaemonSet's
 * pods are pinned), or undefined when some term leaves every node possible. Kube's NodeAffinity
 * PreFilter narrows the nodes it filters to these; an empty set means the terms contradict.
 */
export function pinnedNodeNames(pod: Pod): Set<string> | undefined {
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const union = new Set<string>();
  for (const term of terms) {
    let names: Set<string> | undefined;
    for (const r of term.matchFields ?? []) {
      if (r.key !== 'metadata.name' || r.operator !== 'In') continue;
      const these = new Set(r.values ?? []);
      names = names ? new Set([...names].filter((n) => these.has(n))) : these;
    }
    if (!names) return undefined; // this term allows every node (terms are ORed)
    for (const n of names) union.add(n);
  }
  return union;
}

/**
 * The sum of the weights of the pod's preferred node-affinity terms the node matches (kube's
 * NodeAffinity score, before normalisation). Terms with weight 0 or no requirements count for
 * nothing.
 */
export function preferredNodeAffinityScore(pod: Pod, node: Node): number {
  let score = 0;
  for (const { weight, preference } of pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
    if (weight && preference && termMatches(preference, node)) score += weight;
  }
  return score;
}
