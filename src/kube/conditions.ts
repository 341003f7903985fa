// Status conditions as Kubernetes API conventions define them: one per type; lastTransitionTime
// moves only when the status changes (a new reason or message alone keeps it), so "since when"
// stays true; observedGeneration when the caller tracks it.

import { rfc3339 } from '../common/time.js';
import type * as api from '../api/index.js';
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition (src/api), with whatever else a kind's own conditions carry. */
export interface Condition extends api.Condition {
  [extra: string]: unknown;
}

export function findCondition<C extends Condition>(conditions: readonly C[] | undefined, type: string): C | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

export function isFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'False';
}

/**
 * The conditions with `update` set: added if absent, else replaced, keeping lastTransitionTime
 * unless the status changed. The input is not modified; order is kept (new types go last).
 */
export function setCondition(conditions: readonly Condition[] | undefined, update: Condition, now: Date = new Date()): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === update.type);
  const existing = index >= 0 ? list[index] : undefined;
  const lastTransitionTime = existing && existing.status === update.status && existing.lastTransitionTime ? existing.lastTransitionTime : (update.lastTransitionTime ?? rfc3339(now));
  const next: Condition = { ...update, lastTransitionTime };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** True when the two condition lists say the same thing (times aside). */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const strip = (list: readonly Condition[] | undefined) =>
    JSON.stringify([...(list ?? [])].map(({ lastTransitionTime: _t, ...rest }) => rest).sort((x, y) => x.type.localeCompare(y.type)));
  return strip(a) === strip(b);
}
