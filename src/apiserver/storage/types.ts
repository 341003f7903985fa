// The storage interface of the embedded API server: a revisioned key-value store of Kubernetes
// objects. One global, strictly increasing revision numbers every write; an object's
// resourceVersion is the revision of its last write. Two backends: SQLite in the data directory
// (sqlite.ts, the default) and etcd shared by several API servers (etcd.ts); reads are synchronous
// in both (etcd's are served by a watch cache, watch-cache.ts).
//
// Keys are `/<group or "core">/<resource>/<namespace or "">/<name>`, e.g.
// `/core/pods/default/web-1`, `/apps/deployments/default/web`, `/core/nodes//node-1`.
// A prefix such as `/core/pods/default/` selects a namespace, `/core/pods/` every pod. (The etcd
// backend keeps them at kube-apiserver's keys instead: etcd-layout.ts.)

import { BosunError } from '../../common/errors.js';
import type * as api from '../../api/index.js';

/** A Kubernetes object as stored: JSON-serialisable, of any kind, with `metadata` (and its name). */
export type KubeObject = api.Unstructured;

export interface StoredItem {
  key: string;
  /** The object, with metadata.resourceVersion set to String(revision). */
  object: KubeObject;
  /** Revision of the object's last write (its resourceVersion). */
  revision: number;
}

export interface ListOptions {
  /**
   * List as of this revision (a consistent snapshot). Omitted: the current revision.
   * A revision below the compacted revision fails with StorageError code 'Expired'.
   */
  atRevision?: number;
  /** Only keys strictly greater than this one (for paging). */
  startAfter?: string;
  /** At most this many items. */
  limit?: number;
  /** Applied before counting towards limit; items it rejects are skipped. */
  filter?: (object: KubeObject) => boolean;
  /**
   * The caller only reads the items: they may be the very objects other readers get (frozen where
   * the store shares them), which spares a store that keeps decoded objects from copying them.
   */
  shared?: boolean;
}

export interface ListResult {
  items: StoredItem[];
  /** The revision the list reflects (for paging: pin the next pages to it). */
  revision: number;
  /** The last key returned when more items remain, else undefined. */
  continueAfter?: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent {
  type: WatchEventType;
  key: string;
  /** The revision of this change. For DELETED, the deletion's revision. */
  revision: number;
  /** The object after the change; for DELETED, the last state with resourceVersion = the deletion's revision. */
  object: KubeObject;
  /** The object before the change (undefined for ADDED). */
  previous?: KubeObject;
}

export interface Watcher {
  /** Stops delivering events. Idempotent. */
  stop(): void;
}

export interface WriteOptions {
  /** Fail with 'Conflict' unless the key's current revision equals this. */
  expectedRevision?: number;
}

export type StorageErrorCode = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Expired' | 'Closed';

/** A storage failure; its reason is its code (the two are one value, read under either name). */
export class StorageError extends BosunError {
  declare readonly reason: StorageErrorCode;
  constructor(code: StorageErrorCode, message: string) {
    super(code, message);
  }

  get code(): StorageErrorCode {
    return this.reason;
  }
}

export interface Storage {
  /** The newest revision written (0 for an empty store). */
  currentRevision(): number;
  /** Revisions at or below this one are gone from the log; watches and lists there get 'Expired'. */
  compactedRevision(): number;

  get(key: string): StoredItem | undefined;
  list(prefix: string, options?: ListOptions): ListResult;
  /**
   * How many objects are stored under `prefix` now, without reading them (what
   * apiserver_storage_objects reports, and whether a directory holds anything at all).
   */
  count(prefix: string): number;

  /**
   * Writes are batched with other concurrent writes into one transaction (group commit) and
   * resolve only once durable. Each write sets metadata.resourceVersion on the stored object.
   */
  create(key: string, object: KubeObject): Promise<StoredItem>;
  update(key: string, object: KubeObject, options?: WriteOptions): Promise<StoredItem>;
  /** Returns the deleted object as stored, with resourceVersion = the deletion's revision. */
  delete(key: string, options?: WriteOptions): Promise<StoredItem>;

  /**
   * Calls `onEvent` for every change under `prefix` with revision > `afterRevision`, in revision
   * order, first replaying kept history, then live. Throws StorageError 'Expired' when
   * `afterRevision` is older than what the store still keeps.
   */
  watch(prefix: string, afterRevision: number, onEvent: (event: WatchEvent) => void): Watcher;

  /** Drops log entries so that only the newest `keep` revisions remain. */
  compact(keep: number): void;

  /** Flushes pending writes, stops watchers, closes the database. */
  close(): Promise<void>;

  /**
   * Whether the backing store answers now — kube-apiserver's `etcd-readiness` check, which
   * /readyz reports (a load balancer then stops sending new clients to a server whose etcd is
   * gone). Absent: a local store, always ready while the process runs.
   */
  ready?(): Promise<boolean>;
}
