// The watch cache of a remote store (etcd.ts): the newest value of every key plus a window of
// recent events, fed only by the store's own change stream, from which the API server reads
// synchronously — gets, lists as of a revision inside the window, and watches that replay the
// window and then follow live events. Kubernetes' API servers keep the same cache ("cacher") in
// front of etcd; here it is the only read path, which is what makes every server deliver every
// other server's writes: nothing reaches a watcher except through the store's stream.
//
// Pure: no I/O. The shell applies events in revision order and says when its stream has
// progressed without events (progress notifications), or when it had to reload everything.
import { StorageError, type KubeObject, type ListOptions, type ListResult, type StoredItem, type WatchEvent, type Watcher } from './types.js';

interface WatchEntry {
  prefix: string;
  after: number;
  onEvent: (event: WatchEvent) => void;
  stopped: boolean;
}

export interface WatchCacheOptions {
  /** Most events kept for replays and snapshots; older ones are dropped as if compacted. */
  maxEvents?: number;
}

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A prefix the directory index answers: one ending with '/' past its first character ('/a/', '/a/b/'; not the root '/'). */
const isDirectory = (prefix: string): boolean => prefix.length > 1 && prefix.endsWith('/');

export class WatchCache {
  private readonly items = new Map<string, StoredItem>();
  /**
   * The keys under each directory ('/registry/', '/registry/configmaps/', …, every ancestor of a
   * key): a list of a directory reads its own keys, not the whole cache — every write asks whether
   * admission webhooks are configured, which is a list of their directory.
   */
  private readonly dirs = new Map<string, Set<string>>();
  /** Events with revision > compacted, in revision order. */
  private events: WatchEvent[] = [];
  private readonly watchers = new Set<WatchEntry>();
  private readonly waiters: Array<{ revision: number; resolve: () => void }> = [];
  private readonly maxEvents: number;
  private revision = 0;
  private compacted = 0;

  constructor(options: WatchCacheOptions = {}) {
    this.maxEvents = options.maxEvents ?? 50_000;
  }

  currentRevision(): number {
    return this.revision;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  get(key: string): StoredItem | undefined {
    return this.items.get(key);
  }

  /**
   * Replaces the whole state with `items` as of `revision` (a fresh load). Watchers stay: each
   * gets the difference between what it saw and the new state as events at `revision`, so that it
   * ends up consistent without ever having seen the changes it missed one by one.
   */
  reset(items: StoredItem[], revision: number): void {
    const next = new Map(items.map((i) => [i.key, i]));
    const diff: WatchEvent[] = [];
    for (const [key, old] of this.items) {
      if (!next.has(key)) {
        diff.push({ type: 'DELETED', key, revision, object: { ...old.object, metadata: { ...old.object.metadata, resourceVersion: String(revision) } }, previous: old.object });
      }
    }
    for (const item of items) {
      const old = this.items.get(item.key);
      if (!old) diff.push({ type: 'ADDED', key: item.key, revision, object: item.object });
      else if (old.revision !== item.revision) diff.push({ type: 'MODIFIED', key: item.key, revision, object: item.object, previous: old.object });
    }
    this.items.clear();
    this.dirs.clear();
    for (const [key, item] of next) {
      this.items.set(key, item);
      this.index(key);
    }
    this.events = [];
    // Nothing older than the load can be replayed or listed any more.
    this.compacted = Math.max(this.compacted, revision);
    this.revision = Math.max(this.revision, revision);
    for (const event of diff.sort(byKey)) this.dispatch(event);
    this.release();
  }

  /** Applies one change from the stream; events at or below the current revision are ignored. */
  apply(event: WatchEvent): void {
    if (event.revision <= this.revision) return;
    if (event.type === 'DELETED') {
      if (this.items.delete(event.key)) this.unindex(event.key);
    } else {
      if (!this.items.has(event.key)) this.index(event.key);
      this.items.set(event.key, { key: event.key, object: event.object, revision: event.revision });
    }
    this.events.push(event);
    if (this.events.length > this.maxEvents) this.compact(this.events[this.events.length - this.maxEvents].revision - 1);
    this.revision = event.revision;
    this.dispatch(event);
  }

  /** The stream has seen everything up to `revision` (a progress notification or an empty write). */
  progress(revision: number): void {
    if (revision <= this.revision) return;
    this.revision = revision;
    this.release();
  }

  /** Calls after `apply`/`progress` of a batch: wakes writers waiting for their revision. */
  release(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i].revision <= this.revision) this.waiters.splice(i, 1)[0].resolve();
    }
  }

  /** Resolves once the cache has reached `revision` (a writer waits to read its own write). */
  reached(revision: number): Promise<void> {
    if (revision <= this.revision) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ revision, resolve }));
  }

  /** Adds a new key to the sets of its directories. */
  private index(key: string): void {
    for (let i = key.indexOf('/', 1); i >= 0; i = key.indexOf('/', i + 1)) {
      const dir = key.slice(0, i + 1);
      let keys = this.dirs.get(dir);
      if (!keys) this.dirs.set(dir, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string): void {
    for (let i = key.indexOf('/', 1); i >= 0; i = key.indexOf('/', i + 1)) {
      const dir = key.slice(0, i + 1);
      const keys = this.dirs.get(dir);
      keys?.delete(key);
      if (keys?.size === 0) this.dirs.delete(dir);
    }
  }

  /** How many keys are under `prefix` now (a directory's from its index, no object read). */
  count(prefix: string): number {
    if (isDirectory(prefix)) return this.dirs.get(prefix)?.size ?? 0;
    let n = 0;
    for (const key of this.items.keys()) if (key.startsWith(prefix) && key > prefix) n++;
    return n;
  }

  list(prefix: string, options: ListOptions = {}): ListResult {
    const at = options.atRevision ?? this.revision;
    if (options.atRevision !== undefined && at < this.compacted && at < this.revision) {
      throw new StorageError('Expired', `the revision ${at} has been compacted (oldest kept: ${this.compacted + 1})`);
    }
    const after = options.startAfter && options.startAfter > prefix ? options.startAfter : prefix;
    const inRange = (key: string) => key.startsWith(prefix) && key > after;
    const snapshot = new Map<string, StoredItem>();
    if (isDirectory(prefix)) {
      for (const key of this.dirs.get(prefix) ?? []) if (key > after) snapshot.set(key, this.items.get(key)!);
    } else {
      for (const [key, item] of this.items) if (inRange(key)) snapshot.set(key, item);
    }
    if (at < this.revision) {
      // The first event after `at` for a key tells what it held at `at`: its previous value.
      const seen = new Set<string>();
      for (const event of this.events) {
        if (event.revision <= at || seen.has(event.key) || !inRange(event.key)) continue;
        seen.add(event.key);
        if (event.type === 'ADDED' || !event.previous) snapshot.delete(event.key);
        else snapshot.set(event.key, { key: event.key, object: event.previous, revision: Number(event.previous.metadata.resourceVersion) });
      }
    }
    const sorted = [...snapshot.values()].sort(byKey);
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const items: StoredItem[] = [];
    let continueAfter: string | undefined;
    for (const item of sorted) {
      if (options.filter && !options.filter(item.object)) continue;
      if (items.length >= limit) {
        continueAfter = items[items.length - 1].key;
        break;
      }
      items.push(item);
    }
    return { items, revision: at, continueAfter };
  }

  watch(prefix: string, afterRevision: number, onEvent: (event: WatchEvent) => void): Watcher {
    if (afterRevision < this.compacted && afterRevision < this.revision) {
      throw new StorageError('Expired', `too old resource version: ${afterRevision} (${this.compacted})`);
    }
    const entry: WatchEntry = { prefix, after: afterRevision, onEvent, stopped: false };
    for (const event of this.events) if (event.revision > afterRevision && event.key.startsWith(prefix)) onEvent(event);
    this.watchers.add(entry);
    return {
      stop: () => {
        entry.stopped = true;
        this.watchers.delete(entry);
      },
    };
  }

  /** Drops events at or below `target` (they can no longer be replayed or listed at). */
  compact(target: number): void {
    if (target <= this.compacted) return;
    const firstKept = this.events.findIndex((e) => e.revision > target);
    this.events = firstKept < 0 ? [] : this.events.slice(firstKept);
    this.compacted = target;
  }

  /** Stops every watcher and every waiting writer (the store is closing). */
  close(): void {
    for (const watcher of this.watchers) watcher.stopped = true;
    this.watchers.clear();
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  private dispatch(event: WatchEvent): void {
    for (const watcher of this.watchers) {
      if (watcher.stopped || event.revision <= watcher.after || !event.key.startsWith(watcher.prefix)) continue;
      try {
        watcher.onEvent(event);
      } catch {
        // A watcher's own failure must not break delivery to the others.
      }
    }
  }
}

/** The object as stored with its resourceVersion set to `revision`. */
export function withRevision(object: KubeObject, revision: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } };
}
