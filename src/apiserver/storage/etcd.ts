// The etcd storage backend: the API server's objects in an etcd v3 cluster shared by several API
// servers, as kube-apiserver keeps them.
//
// Layout: kube-apiserver's (etcd-layout.ts): under the prefix (`/registry` by default), a
// namespace at `/registry/namespaces/<name>`, a secret at `/registry/secrets/<namespace>/<name>`,
// a custom resource at `/registry/<group>/<resource>/[<namespace>/]<name>`; the value the object
// as JSON without resourceVersion; an object's resourceVersion is its etcd mod revision. A store
// written in the layout before (`<prefix>` + the storage key) is moved on start (etcd-migration.ts).
//
// Writes are etcd transactions conditioned on the key's revision (create: the key does not exist;
// update/delete: its mod revision is the one expected, or it exists at all), so optimistic
// concurrency is decided by etcd, across every server. Reads are served by a watch cache
// (watch-cache.ts) fed only by one etcd watch on the prefix, started at the revision of an
// initial load: every server sees every server's writes the same way, and a write resolves only
// once its own server's cache has seen it, so the writer reads its own write. Another server
// shows it as soon as its watch delivers it (milliseconds): reads there are not linearizable, as
// kube-apiserver's reads from its watch cache are not. Etcd decides every write's conflicts.
//
// Compaction: each server periodically proposes one, but only the server that wins a transaction
// on `<prefix>/compact_rev_key` compacts etcd (kube-apiserver's scheme), so N servers do not
// compact N times. A server whose watch falls behind etcd's compaction reloads everything.
import type { Etcd3, IKeyValue, IWatchResponse } from 'etcd3';
import { logger } from '../../common/log.js';
import { etcdClient, prefixEnd, rangePages, type EtcdStorageOptions } from './etcd-client.js';
import { COMPACT_KEY, MARKER_KEY, etcdPath, isBookkeeping, legacyStorageKey, storageKeyOf } from './etcd-layout.js';
import { moveToKubeLayout } from './etcd-migration.js';
import { WatchCache, withRevision } from './watch-cache.js';
import { StorageError, type KubeObject, type ListOptions, type ListResult, type Storage, type StoredItem, type WatchEvent, type Watcher, type WriteOptions } from './types.js';

export { etcdClient, type EtcdStorageOptions } from './etcd-client.js';

const log = logger('etcd-storage');
const RECONNECT_MS = 200;

// Progress requests make etcd tell the watch how far it has got when no key under the prefix
// changes; the cache's revision, and so bookmarks, keep up with the cluster. An answer is not
// taken at its word, though: etcd before 3.4.25 and 3.5.8 answers a progress request with its
// current revision even while the watch still has events of lower revisions to send (a watcher
// behind a slow stream; etcd-io/etcd#15220), and a cache moved to that revision would skip those
// events for good (one key left stale on one server: every write to it refused as a conflict).
// An answer ahead of the cache writes the marker key instead, and the marker's event, which comes
// after every earlier event on the stream, moves the cache on.
const PROGRESS_MS = 5_000;

/** An object as etcd keeps it: JSON without resourceVersion, which is the key's mod revision. */
export function encode(object: KubeObject): Buffer {
  const { resourceVersion: _omitted, ...metadata } = object.metadata;
  return Buffer.from(JSON.stringify({ ...object, metadata }));
}

export class EtcdStorage implements Storage {
  private readonly client: Etcd3;
  private readonly cache: WatchCache;
  private readonly prefix: string;
  private readonly callTimeoutMs: number;
  private readonly cacheWaitMs: number;
  private stream?: Awaited<ReturnType<Etcd3['watchClient']['watch']>>;
  private progressTimer?: NodeJS.Timeout;
  private reconnectTimer?: NodeJS.Timeout;
  private closed = false;
  /** The compaction key's mod revision as this server last saw it (kube's compaction scheme). */
  private compactSeen = 0;
  /** The compaction in flight, which close() lets finish. */
  private compacting: Promise<void> = Promise.resolve();
  /** Whether a marker write for a progress answer is in flight (one at a time). */
  private markerPending = false;
  /** Breaks the current watch and follows again, reloading everything with `reload` (set by follow()). */
  private rewatch?: (reason: string, reload: boolean) => void;
  /** Told how long each etcd request took (`etcd_request_duration_seconds`); set by the server. */
  requestObserver?: (operation: string, key: string, seconds: number) => void;

  constructor(private readonly options: EtcdStorageOptions) {
    if (options.endpoints.length === 0) throw new Error('no etcd endpoints');
    this.prefix = (options.prefix ?? '/registry').replace(/\/+$/, '');
    this.callTimeoutMs = options.callTimeoutMs ?? 3_000;
    this.cacheWaitMs = options.cacheWaitMs ?? 10_000;
    this.cache = new WatchCache({ maxEvents: options.maxEvents });
    this.client = etcdClient(options, this.callTimeoutMs);
  }

  private readiness?: { at: number; ready: Promise<boolean> };

  /** A read of etcd within the call timeout, at most once a second (health checks come often). */
  ready(): Promise<boolean> {
    const now = Date.now();
    if (this.readiness && now - this.readiness.at < 1_000) return this.readiness.ready;
    const ready = this.client.kv.range({ key: this.etcdKey(COMPACT_KEY) }).then(() => true, () => false);
    this.readiness = { at: now, ready };
    return ready;
  }

  /** The etcd key of a storage key, or of a bookkeeping key. */
  private etcdKey(key: string): Buffer {
    return Buffer.from(this.prefix + (isBookkeeping(key) ? key : etcdPath(key)));
  }

  /** An etcd key without the prefix. */
  private pathOf(etcdKey: Buffer): string {
    return etcdKey.toString().slice(this.prefix.length);
  }

  /**
   * The storage key of an object's etcd key, in either layout (history from before a move
   * still holds the old keys); undefined for a key that is neither (not the API server's).
   */
  private storageKey(etcdKey: Buffer): string | undefined {
    const path = this.pathOf(etcdKey);
    return storageKeyOf(path) ?? legacyStorageKey(path);
  }

  private decode(kv: IKeyValue, key: string, revision = Number(kv.mod_revision)): StoredItem {
    const object = JSON.parse(kv.value.toString()) as KubeObject;
    return { key, object: withRevision(object, revision), revision: Number(kv.mod_revision) };
  }

  /** Moves a store written in the old layout, loads every object under the prefix and starts following changes from there. */
  async start(): Promise<void> {
    await moveToKubeLayout(this.client, this.prefix, { pageSize: this.options.loadPageSize ?? 1000, timeoutMs: 10 * this.callTimeoutMs });
    await this.load(true);
    this.progressTimer = setInterval(() => this.stream?.write({ progress_request: {} }), this.options.progressIntervalMs ?? PROGRESS_MS);
    this.progressTimer.unref();
  }

  /**
   * Loads the prefix as of etcd's last compaction and replays every change since through the
   * watch, so that this server's cache keeps the same history etcd does (watches and paged lists
   * from before this server started still work); resolves once the cache has caught up.
   */
  private async load(withHistory: boolean): Promise<void> {
    const compactKey = this.etcdKey(COMPACT_KEY);
    this.compactSeen = Number((await this.client.kv.range({ key: compactKey })).kvs[0]?.mod_revision ?? 0);
    let items: StoredItem[];
    let revision = 0;
    try {
      if (!withHistory) throw new Error('a reload starts from now');
      revision = await this.etcdCompactedRevision();
      // Revision 1 is etcd's empty beginning; a range at revision 0 would mean "now".
      items = (await this.rangeAll(Math.max(revision, 1))).items;
    } catch {
      // A reload, or compacted further meanwhile: start from now, without history.
      ({ items, revision } = await this.rangeAll(0));
    }
    const now = Number((await this.client.kv.range({ key: compactKey })).header.revision);
    this.cache.reset(items, revision);
    await this.follow(Math.max(revision, 1));
    await this.caughtUp(now);
  }

  /** Every object under the prefix as of `revision` (0: now), read in pages (loadPageSize keys). */
  private async rangeAll(revision: number): Promise<{ items: StoredItem[]; revision: number }> {
    const items = new Map<string, StoredItem>();
    for await (const page of rangePages(this.client, Buffer.from(this.prefix + '/'), revision, this.options.loadPageSize ?? 1000, 10 * this.callTimeoutMs)) {
      revision = page.revision;
      for (const kv of page.kvs) {
        const key = this.objectKey(kv.key);
        // Both layouts at once only mid-move, which is one transaction per object: the newer wins.
        if (key !== undefined && (items.get(key)?.revision ?? 0) < Number(kv.mod_revision)) items.set(key, this.decode(kv, key));
      }
    }
    return { items: [...items.values()], revision };
  }

  /** The storage key of an object's etcd key; undefined for bookkeeping and foreign keys. */
  private objectKey(etcdKey: Buffer): string | undefined {
    if (isBookkeeping(this.pathOf(etcdKey))) return undefined;
    const key = this.storageKey(etcdKey);
    if (key === undefined) log.debug({ key: etcdKey.toString() }, 'ignoring an etcd key that holds no object of this server');
    return key;
  }

  /**
   * The revision etcd last compacted at (0 if never). etcd says it only to a watch that starts
   * below it; so when revision 1 is gone, a watch from revision 1 is answered with it.
   */
  private async etcdCompactedRevision(): Promise<number> {
    const key = this.etcdKey(COMPACT_KEY);
    try {
      await this.client.kv.range({ key, revision: 1 });
      return 0;
    } catch {
      // compacted: ask a watch
    }
    const stream = await this.client.watchClient.watch();
    try {
      return await new Promise<number>((resolve, reject) => {
        stream.on('data', (response: IWatchResponse) => {
          if (Number(response.compact_revision) > 0) resolve(Number(response.compact_revision));
        });
        stream.on('error', reject);
        setTimeout(() => reject(new Error('etcd did not say where it compacted')), this.callTimeoutMs).unref();
        stream.write({ create_request: { key, start_revision: '1' } });
      });
    } finally {
      stream.end();
    }
  }

  /** Waits until the watch has delivered everything up to `revision`. */
  private async caughtUp(revision: number): Promise<void> {
    if (!(await this.cacheReaches(revision, this.cacheWaitMs))) throw new Error(`the etcd watch did not catch up with revision ${revision}`);
  }

  /** Whether the cache reaches `revision` within `ms`. */
  private async cacheReaches(revision: number, ms: number): Promise<boolean> {
    if (this.cache.currentRevision() >= revision) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.cache.reached(revision), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    return this.cache.currentRevision() >= revision;
  }

  /** Writes the marker key: its event comes after every earlier event on the stream (see PROGRESS_MS). */
  private putMarker(revision: number): Promise<unknown> {
    return this.client.kv.put({ key: this.etcdKey(MARKER_KEY), value: Buffer.from(String(revision)) });
  }

  /**
   * Opens the watch stream from `revision` + 1; on any break, reopens it from where it got to.
   *
   * A watch that starts in the past first replays history, and until it has, etcd's progress
   * answers may run ahead of the events still to come (etcd 3.4 answers a stream's progress
   * request whatever its watchers' state). So a replaying watch trusts no progress answer until
   * it has seen its own write of a marker key, made once the watch exists: every event before
   * the marker has then been delivered.
   */
  private async follow(revision: number, attempt = 0): Promise<void> {
    const start = Buffer.from(this.prefix + '/');
    const stream = await this.client.watchClient.watch();
    if (this.closed) {
      stream.end();
      return;
    }
    this.stream = stream;
    let broken = false;
    let synced = false;
    let delivered = false;
    const reconnect = (reason: string, reload = false) => {
      if (broken || this.closed) return;
      broken = true;
      if (this.stream === stream) this.stream = undefined;
      try {
        stream.end();
      } catch {
        // already gone
      }
      // A stream that broke before it delivered anything counts as one more failed attempt.
      this.resume(reason, reload, delivered ? 1 : attempt + 1);
    };
    this.rewatch = reconnect;
    stream.on('data', (response: IWatchResponse) => {
      if (broken) return;
      delivered = true;
      if (Number(response.compact_revision) > 0) {
        // The events this server missed are gone: reload, and tell watchers the difference.
        return reconnect(`the watch fell behind etcd's compaction at ${response.compact_revision}`, true);
      }
      if (response.canceled) return reconnect(`watch canceled: ${response.cancel_reason}`);
      if (response.created) {
        // Nothing to replay: the cache is already as of the watch's start.
        if (Number(response.header.revision) <= revision) {
          synced = true;
          this.cache.progress(Number(response.header.revision));
          this.cache.release();
        } else this.putMarker(revision).catch((e: Error) => reconnect(e.message));
        return;
      }
      if (response.events.length === 0) {
        if (synced) this.confirmProgress(Number(response.header.revision));
      } else if (this.onEvents(response)) synced = true;
      this.cache.release();
    });
    stream.on('error', (e: Error) => reconnect(e.message));
    stream.on('end', () => reconnect('stream ended'));
    stream.write({
      create_request: { key: start, range_end: prefixEnd(start), start_revision: String(revision + 1), prev_kv: true, progress_notify: true, fragment: true },
    });
  }

  /**
   * Follows etcd again from where the cache got to, after `RECONNECT_MS`, until it works; with
   * `reload`, first loads everything again (the events missed are gone: watchers get the difference).
   */
  private resume(reason: string, reload: boolean, attempt = 1): void {
    if (this.closed) return;
    // The first break is worth a warning; the retries until a live member answers are not.
    (attempt === 1 ? log.warn.bind(log) : log.debug.bind(log))({ reason, revision: this.cache.currentRevision(), reload, attempt }, 'etcd watch broke; following again');
    this.reconnectTimer = setTimeout(() => {
      (reload ? this.load(false) : this.follow(this.cache.currentRevision(), attempt)).catch((e: Error) => this.resume(e.message, reload, attempt + 1));
    }, RECONNECT_MS);
  }

  /**
   * A progress answer at `revision`: when it is ahead of the cache, the marker key is written, and
   * its event moves the cache on once every event before it has come (see PROGRESS_MS).
   */
  private confirmProgress(revision: number): void {
    if (revision <= this.cache.currentRevision() || this.markerPending || this.closed) return;
    this.markerPending = true;
    this.putMarker(revision)
      .catch((e: Error) => log.debug({ err: e, revision }, 'the progress marker was not written; the next progress answer tries again'))
      .finally(() => { this.markerPending = false; });
  }

  /** Applies a response's events to the cache; true when the marker key was among them. */
  private onEvents(response: IWatchResponse): boolean {
    let marker = false;
    for (const event of response.events) {
      const path = this.pathOf(event.kv.key);
      const revision = Number(event.kv.mod_revision);
      if (path === MARKER_KEY) {
        marker = true;
        this.cache.progress(revision);
        continue;
      }
      const key = this.objectKey(event.kv.key);
      if (key === undefined) continue;
      const cached = this.cache.get(key);
      const previous = event.prev_kv ? this.decode(event.prev_kv, key).object : cached?.object;
      if (event.type === 'Delete') {
        if (!previous) continue; // a delete of a key this server never had (prev_kv compacted away)
        // The old key's half of a move (etcd-migration.ts): the object lives on at its new key, put at this revision.
        if (cached?.revision === revision) continue;
        this.cache.apply({ type: 'DELETED', key, revision, object: withRevision(previous, revision), previous });
      } else {
        // A move's new key is a first version, but of an object the cache holds: MODIFIED.
        const object = this.decode(event.kv, key).object;
        this.cache.apply({ type: previous ? 'MODIFIED' : 'ADDED', key, revision, object, previous });
      }
    }
    return marker;
  }

  currentRevision(): number {
    return this.cache.currentRevision();
  }

  compactedRevision(): number {
    return this.cache.compactedRevision();
  }

  get(key: string): StoredItem | undefined {
    this.assertOpen();
    return this.cache.get(key);
  }

  count(prefix: string): number {
    this.assertOpen();
    return this.cache.count(prefix);
  }

  list(prefix: string, options?: ListOptions): ListResult {
    this.assertOpen();
    return this.cache.list(prefix, options);
  }

  watch(prefix: string, afterRevision: number, onEvent: (event: WatchEvent) => void): Watcher {
    this.assertOpen();
    return this.cache.watch(prefix, afterRevision, onEvent);
  }

  async create(key: string, object: KubeObject): Promise<StoredItem> {
    this.assertOpen();
    const k = this.etcdKey(key);
    const startedAt = this.requestObserver ? process.hrtime.bigint() : 0n;
    const response = await this.client.kv.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value: encode(object) } }],
    });
    this.observe('create', key, startedAt);
    if (!response.succeeded) throw new StorageError('AlreadyExists', `${key} already exists`);
    const revision = Number(response.header.revision);
    return this.written({ key, object: withRevision(object, revision), revision });
  }

  async update(key: string, object: KubeObject, options: WriteOptions = {}): Promise<StoredItem> {
    this.assertOpen();
    const k = this.etcdKey(key);
    const startedAt = this.requestObserver ? process.hrtime.bigint() : 0n;
    const response = await this.client.kv.txn({
      compare: [this.condition(k, options)],
      success: [{ request_put: { key: k, value: encode(object) } }],
      failure: [{ request_range: { key: k } }],
    });
    this.observe('update', key, startedAt);
    if (!response.succeeded) throw await this.refusal(key, response.responses[0]?.response_range.kvs[0], Number(response.header.revision), options);
    const revision = Number(response.header.revision);
    return this.written({ key, object: withRevision(object, revision), revision });
  }

  async delete(key: string, options: WriteOptions = {}): Promise<StoredItem> {
    this.assertOpen();
    const k = this.etcdKey(key);
    const startedAt = this.requestObserver ? process.hrtime.bigint() : 0n;
    const response = await this.client.kv.txn({
      compare: [this.condition(k, options)],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    this.observe('delete', key, startedAt);
    if (!response.succeeded) throw await this.refusal(key, response.responses[0]?.response_range.kvs[0], Number(response.header.revision), options);
    const revision = Number(response.header.revision);
    const previous = response.responses[0]?.response_delete_range.prev_kvs[0];
    if (!previous) throw new StorageError('NotFound', `${key} not found`);
    return this.written({ key, object: this.decode(previous, key, revision).object, revision });
  }

  private observe(operation: string, key: string, startedAt: bigint): void {
    if (this.requestObserver) this.requestObserver(operation, key, Number(process.hrtime.bigint() - startedAt) / 1e9);
  }

  /** The condition of an update or delete: at the expected revision, or existing at all. */
  private condition(key: Buffer, options: WriteOptions) {
    return options.expectedRevision !== undefined
      ? { key, target: 'Mod' as const, result: 'Equal' as const, mod_revision: options.expectedRevision }
      : { key, target: 'Create' as const, result: 'Greater' as const, create_revision: 0 };
  }

  private async refusal(key: string, current: IKeyValue | undefined, asOf: number, options: WriteOptions): Promise<StorageError> {
    await this.checkCached(key, current, asOf);
    if (!current) return new StorageError('NotFound', `${key} not found`);
    return new StorageError('Conflict', `${key} is at revision ${current.mod_revision}, not ${options.expectedRevision}`);
  }

  /**
   * After a write etcd refused at `asOf` (its revision then): etcd's copy of the key (`current`,
   * undefined when absent) against the cache's, once the cache has seen everything up to `asOf`
   * (waited for a second at most; behind longer, nothing is judged). A cached copy older than
   * etcd's, or one etcd no longer has, means the cache missed an event (however that came about),
   * and every write to the key would be refused for good — kube-apiserver reads etcd again on a
   * conflict. So the cache is reloaded, its watchers told the difference, and the writer's next
   * try reads what etcd holds.
   */
  private async checkCached(key: string, current: IKeyValue | undefined, asOf: number): Promise<void> {
    if (!(await this.cacheReaches(asOf, 1_000))) return;
    const cached = this.cache.get(key);
    if (!cached) return; // absent here but not in etcd: deleted since, or never seen — not judged
    const missed = current ? cached.revision < Number(current.mod_revision) : cached.revision <= asOf;
    if (!missed) return;
    log.error({ key, cached: cached.revision, etcd: current ? Number(current.mod_revision) : null, asOf }, 'the watch cache missed a change of this key: reloading it from etcd');
    this.rewatch?.(`the watch cache missed a change of ${key}`, true);
  }

  /** Resolves a write once this server's cache shows it (or after cacheWaitMs: it is durable anyway). */
  private async written(item: StoredItem): Promise<StoredItem> {
    if (!(await this.cacheReaches(item.revision, this.cacheWaitMs))) {
      log.warn({ key: item.key, revision: item.revision, cached: this.cache.currentRevision() }, 'the watch cache is behind a write');
    }
    return item;
  }

  compact(keep: number): void {
    this.assertOpen();
    const target = this.cache.currentRevision() - Math.max(keep, 1);
    if (target <= this.cache.compactedRevision()) return;
    this.cache.compact(target);
    this.compacting = this.compactEtcd(target).catch((e: Error) => log.warn({ err: e, target }, 'etcd compaction failed'));
  }

  /**
   * Compacts etcd at `target` unless another server compacted since this one last looked: the
   * transaction on the compaction key lets exactly one of several servers win each round.
   */
  private async compactEtcd(target: number): Promise<void> {
    const key = this.etcdKey(COMPACT_KEY);
    const response = await this.client.kv.txn({
      compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: this.compactSeen }],
      success: [{ request_put: { key, value: Buffer.from(String(target)) } }],
      failure: [{ request_range: { key } }],
    });
    if (!response.succeeded) {
      this.compactSeen = Number(response.responses[0]?.response_range.kvs[0]?.mod_revision ?? 0);
      return;
    }
    this.compactSeen = Number(response.header.revision);
    await this.client.kv.compact({ revision: target, physical: false });
    log.debug({ target }, 'etcd compacted');
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('Closed', 'storage is closed');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.progressTimer);
    clearTimeout(this.reconnectTimer);
    this.stream?.end();
    this.cache.close();
    await this.compacting;
    this.client.close();
  }
}

/** Connects to etcd, loads the prefix into the watch cache and follows it. */
export async function openEtcdStorage(options: EtcdStorageOptions): Promise<EtcdStorage> {
  const storage = new EtcdStorage(options);
  try {
    await storage.start();
  } catch (e) {
    await storage.close();
    throw new Error(`cannot reach etcd at ${options.endpoints.join(',')}: ${(e as Error).message}`, { cause: e });
  }
  return storage;
}
