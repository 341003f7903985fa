// Expectations, as kube-controller-manager's ControllerExpectations: what a controller has asked
// the API server to create and delete and not yet seen come back through its informer. While any
// are outstanding the controller does not manage replicas again, so a slow informer never makes it
// create twice (or delete a pod it already deleted). Observations come from the informer's
// events; an expectation older than its TTL counts as met, so a lost event cannot wedge a
// controller forever. Deletions are tracked by pod, as kube's UIDTrackingControllerExpectations do
// (the toolkit's CountExpectations count them): a pod seen first marked for deletion and then gone
// is one deletion, not two.
import { type Clock, realClock } from '../../kube/index.js';

/** As kube: five minutes. */
export const EXPECTATIONS_TTL_MS = 5 * 60_000;

interface Expectation {
  creations: number;
  deletions: Set<string>;
  setAt: number;
}

export class Expectations {
  private readonly entries = new Map<string, Expectation>();

  constructor(
    private readonly clock: Clock = realClock,
    private readonly ttlMs = EXPECTATIONS_TTL_MS,
  ) {}

  /** True when nothing is outstanding for the controller `key` (or what was, expired). */
  satisfied(key: string): boolean {
    const e = this.entries.get(key);
    if (!e) return true;
    if (e.creations <= 0 && e.deletions.size === 0) return true;
    return this.clock.now() - e.setAt > this.ttlMs;
  }

  /** Records what is about to be asked for: `creations` pods, and the deletion of `deletions` (namespace/name). */
  expect(key: string, creations: number, deletions: string[] = []): void {
    this.entries.set(key, { creations, deletions: new Set(deletions), setAt: this.clock.now() });
  }

  /** A creation came back (or failed, so will never come back). */
  creationObserved(key: string): void {
    const e = this.entries.get(key);
    if (e) e.creations--;
  }

  /** A pod's deletion came back (or failed). */
  deletionObserved(key: string, podKey: string): void {
    this.entries.get(key)?.deletions.delete(podKey);
  }

  /** The controller is gone: nothing is expected of it any more. */
  forget(key: string): void {
    this.entries.delete(key);
  }
}
