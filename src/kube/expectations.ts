// Expectations: what a controller wrote that its informer has not shown yet. A controller acts on
// its cache; right after a write the cache still holds the object as it was, and a sync in that
// window would act on stale state (target a node twice, create a second pod). Two forms, as
// Kubernetes controllers use them:
//   - WriteExpectations: objects this controller updated, by key, with the resourceVersions the
//     cache may still show; overlay() gives the cached list with each such object replaced by the
//     written one until the cache moves past it (or the object is gone).
//   - CountExpectations (kube-controller-manager's ControllerExpectations): creations and
//     deletions expected per owner key; a controller waits until they are observed, or until
//     they expire (a watch event lost), before it counts again.
import type * as api from '../api/index.js';
import { type Clock, realClock } from './clock.js';
import { keyOf } from './informer.js';

export class WriteExpectations<T extends api.KubeObject = api.Unstructured> {
  private readonly pending = new Map<string, { stale: Set<string>; written: T }>();

  /** `before` (as the cache has it) was written and became `after`. */
  expect(before: T, after: T): void {
    const key = keyOf(before);
    const stale = this.pending.get(key)?.stale ?? new Set<string>();
    stale.add(String(before.metadata?.resourceVersion ?? ''));
    this.pending.set(key, { stale, written: after });
  }

  /** The cached objects as this controller knows them to be; forgets what the cache caught up with. */
  overlay(cached: readonly T[]): T[] {
    const present = new Set(cached.map(keyOf));
    for (const key of this.pending.keys()) if (!present.has(key)) this.pending.delete(key);
    return cached.map((object) => {
      const key = keyOf(object);
      const expected = this.pending.get(key);
      if (!expected) return object;
      if (expected.stale.has(String(object.metadata?.resourceVersion ?? ''))) return expected.written;
      this.pending.delete(key);
      return object;
    });
  }

  /** Writes not yet seen in the cache. */
  get size(): number {
    return this.pending.size;
  }
}

/** Expected creations and deletions per key, satisfied when observed or after `ttlMs` (default 5 minutes, as Kubernetes). */
export class CountExpectations {
  private readonly expected = new Map<string, { adds: number; deletes: number; at: number }>();

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly clock: Clock = realClock,
  ) {}

  /** Expects `adds` creations and `deletes` deletions for `key` (replacing what was expected). */
  expect(key: string, adds: number, deletes: number): void {
    this.expected.set(key, { adds, deletes, at: this.clock.now() });
  }

  creationObserved(key: string): void {
    const e = this.expected.get(key);
    if (e) e.adds--;
  }

  deletionObserved(key: string): void {
    const e = this.expected.get(key);
    if (e) e.deletes--;
  }

  /** A creation or deletion that will not happen after all (the write failed). */
  lowerExpectations(key: string, adds: number, deletes: number): void {
    const e = this.expected.get(key);
    if (e) {
      e.adds -= adds;
      e.deletes -= deletes;
    }
  }

  /** True when the controller may act on its cache for `key`: nothing outstanding, or expired. */
  satisfied(key: string): boolean {
    const e = this.expected.get(key);
    if (!e) return true;
    return (e.adds <= 0 && e.deletes <= 0) || this.clock.now() - e.at > this.ttlMs;
  }

  forget(key: string): void {
    this.expected.delete(key);
  }
}
