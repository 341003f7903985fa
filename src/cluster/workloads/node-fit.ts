// Whether a pod may run on a node by the rules a DaemonSet controller checks before it makes a pod
// for the node (kube's component-helpers): the pod's nodeSelector, its required node affinity
// (label expressions, and matchFields on metadata.name), and the node's taints against its
// tolerations. Pure.
import type { Obj } from '../../kube/index.js';

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** kube's Toleration.ToleratesTaint. */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if ((toleration.operator ?? 'Equal') === 'Exists') return true;
  return Boolean(toleration.key) && (toleration.value ?? '') === (taint.value ?? '');
}

/** The first taint passing `filter` that no toleration tolerates. */
export function untoleratedTaint(taints: Taint[] | undefined, tolerations: Toleration[] | undefined, filter: (t: Taint) => boolean): Taint | undefined {
  return (taints ?? []).filter(filter).find((taint) => !(tolerations ?? []).some((t) => tolerates(t, taint)));
}

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

function requirementMatches(r: Requirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const [have, bound] = [Number.parseInt(value, 10), Number.parseInt(values[0], 10)];
      if (!Number.isFinite(have) || !Number.isFinite(bound)) return false;
      return r.operator === 'Gt' ? have > bound : have < bound;
    }
    default:
      return false;
  }
}

/** A NodeSelectorTerm: all its label expressions and field requirements hold (an empty term matches nothing). */
export function termMatches(term: Obj, node: Obj): boolean {
  const expressions: Requirement[] = term.matchExpressions ?? [];
  const fields: Requirement[] = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  return (
    expressions.every((r) => requirementMatches(r, Object.hasOwn(labels, r.key) ? labels[r.key] : undefined)) &&
    fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.metadata?.name))
  );
}

/** The pod's nodeSelector and required node affinity (any term) admit the node. */
export function nodeAffinityMatches(podSpec: Obj, node: Obj): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries((podSpec.nodeSelector ?? {}) as Record<string, string>)) if (labels[k] !== v) return false;
  const required = podSpec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((term: Obj) => termMatches(term, node));
}
