// Graceful deletion, as kube-apiserver's rest.BeforeDelete decides it for kinds whose strategy
// gives a grace period (Pods): the first deletion request of an object with a grace period sets
// metadata.deletionTimestamp to now + the period and deletionGracePeriodSeconds to the period,
// and the object stays (its kubelet stops it and then deletes it with grace 0); a later request
// may only shorten the period (moving the timestamp by the difference); one that does not is
// pending and changes nothing; a period of 0 deletes at once (or leaves the object to its
// finalizers). Pure: the object's metadata, the requested period and the clock in, a step out.
import { rfc3339 } from '../../common/time.js';

import type * as api from '../../api/index.js';

export type GracefulStep =
  /** Already terminating with no longer a grace period than asked for: nothing changes. */
  | { kind: 'pending' }
  /** Deletion starts or its grace period shortens: the metadata to store (a period of 0 finishes it). */
  | { kind: 'graceful'; deletionTimestamp: string; deletionGracePeriodSeconds: number; first: boolean }
  /** No grace period: deleted at once, or held by its finalizers. */
  | { kind: 'immediate' };

/** kube's rule for a requested period: negative values count as 1 s. */
export function normalisedPeriod(requested: number | undefined): number | undefined {
  return requested !== undefined && requested < 0 ? 1 : requested;
}

/**
 * The step a deletion request takes. `period` is the kind's grace period for a first request
 * (kube's CheckGracefulDelete), given the requested one.
 */
export function gracefulStep(meta: Pick<api.ObjectMeta, 'deletionTimestamp' | 'deletionGracePeriodSeconds'>, requested: number | undefined, period: (requested: number | undefined) => number, now: number): GracefulStep {
  const asked = normalisedPeriod(requested);
  if (meta.deletionTimestamp) {
    const existing = meta.deletionGracePeriodSeconds;
    // Marked without a grace period (by finalizers, or an earlier immediate deletion that did not finish).
    if (!existing || existing <= 0) return { kind: 'immediate' };
    if (asked === undefined || asked >= existing) return { kind: 'pending' };
    const started = Date.parse(meta.deletionTimestamp) - existing * 1000;
    return { kind: 'graceful', deletionTimestamp: rfc3339(new Date(started + asked * 1000)), deletionGracePeriodSeconds: asked, first: false };
  }
  const seconds = Math.max(0, normalisedPeriod(period(asked)) ?? 0);
  if (seconds === 0) return { kind: 'immediate' };
  return { kind: 'graceful', deletionTimestamp: rfc3339(new Date(now + seconds * 1000)), deletionGracePeriodSeconds: seconds, first: true };
}
