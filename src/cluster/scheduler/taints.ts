// Taints and tolerations as the API defines them (core/v1 Toleration.ToleratesTaint): an empty
// effect tolerates every effect, an empty key with operator Exists tolerates every taint, and the
// default operator is Equal. The scheduler's filter looks at NoSchedule and NoExecute taints;
// PreferNoSchedule only lowers a node's score.
import type { Taint, Toleration } from './types.js';

export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function toleratesTaintWith(tolerations: readonly Toleration[] | null | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

const filtersOn = (taint: Taint) => taint.effect === 'NoSchedule' || taint.effect === 'NoExecute';

/** The first NoSchedule/NoExecute taint of the node that no toleration tolerates. */
export function firstUntoleratedTaint(taints: readonly Taint[] | null | undefined, tolerations: readonly Toleration[] | null | undefined): Taint | undefined {
  return (taints ?? []).find((taint) => filtersOn(taint) && !toleratesTaintWith(tolerations, taint));
}

/** How many PreferNoSchedule taints the pod does not tolerate (its tolerations with effect "" or PreferNoSchedule count). */
export function intolerablePreferNoScheduleTaints(taints: readonly Taint[] | null | undefined, tolerations: readonly Toleration[] | null | undefined): number {
  const preferring = (tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
  return (taints ?? []).filter((taint) => taint.effect === 'PreferNoSchedule' && !toleratesTaintWith(preferring, taint)).length;
}
