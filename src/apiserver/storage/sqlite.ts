// The SQLite storage backend: a latest-value table beside a revision log, one global revision,
// group commit, and an in-memory ring of recent events that serves watches.
//
// Tables:
//   kv(key PRIMARY KEY, revision, create_revision)          every live key and its value's revision
//   log(revision PRIMARY KEY, key, type, value, prev_revision)  every write's value, and the
//                                                             revision of the value it replaced;
//                                                             compaction keeps each live key's
//                                                             newest row, which kv points at
//   meta(name PRIMARY KEY, value)                           compacted revision
//
// A value is written once, into the log, and kv names its revision: a create or an update writes
// one value and one small kv entry. (A copy of the value in kv, an index of kv's keys and
// revisions for the listings that read no values, and an index of the log by key made each commit
// about twice as dear: bench:apiserver's creates spent a third of the event loop in their commits,
// and what a commit costs is mostly the pages it writes and fsyncs.) The value a key had at an
// older revision is found through prev_revision: the first row after that revision names it.
// Stores written with the earlier layout are converted when opened (migrateKvValues).
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a COMMIT returns only after
// the WAL has been fsynced; a write's promise resolves only after its batch has committed. A
// SIGKILL can therefore lose only writes nobody was told about.
//
// Read caches: this object is the store's only writer (its revision counter lives in memory, so a
// second writer on the file was never possible), which lets it keep two small caches exactly equal
// to the table, updated by flush() right after each commit: the rows of keys read lately (a
// namespace is read on every create in it), and the rows of small unlimited lists by prefix (the
// webhook configurations every write reads). Both hold rows, not objects: every read still parses
// its own copy, as before. A third cache holds decoded objects, frozen, for the lists whose
// caller only reads (ListOptions.shared: the API server's list handler): a paged list of 10,000
// Nodes (`kubectl get nodes`) would otherwise read and parse every object again for every page
// and every listing, as kube-apiserver does not either (it lists from its watch cache). Each
// entry is valid only for the revision it was decoded at; a write drops its key's entry.
//
// The ring of recent events keeps each event as the JSON text the log holds (the same string
// the row cache keeps for the key), not as decoded objects: a replay decodes its events again,
// and a live watcher gets the decoded event as the write happens. At 1,000 Lease renewals a
// second, decoded events (the object and the one it replaced) outlived the young generation and
// were copied twice by each scavenge, then promoted: a third of what each scavenge promoted, and
// scavenges of 10–20 ms were the tail of every request. An event's previous object is likewise
// decoded only when something reads it (a watch filter, the Service allocator).
//
// Group commit: writes queue up and are flushed together on the next turn of the event loop (or
// when a batch is full) in one transaction, so concurrent writers share one fsync. Each queued
// operation is checked in order against the state the previous ones left, and a failing operation
// fails only its own promise.
import Database from 'better-sqlite3';
import { ensurePrivateStore } from '../../common/private-files.js';
import { dirname } from 'node:path';
import { logger } from '../../common/log.js';
import { startCheckpointer, type Checkpointer, type CheckpointResult } from './sqlite-checkpointer.js';
import {
  StorageError,
  type KubeObject,
  type ListOptions,
  type ListResult,
  type Storage,
  type StoredItem,
  type WatchEvent,
  type Watcher,
  type WriteOptions,
} from './types.js';

const log = logger('sqlite');

/** A log of this many frames (4 MB of 4 KB pages, SQLite's own automatic checkpoint) is started over even while writes go on. */
const WAL_RESTART_FRAMES = 1000;

export interface SqliteStorageOptions {
  /** How many recent events are kept in memory for watches (default 10,000). */
  ringSize?: number;
  /** Most operations in one transaction (default 1,000). */
  maxBatch?: number;
  /** Checkpoint the WAL on a thread of its own instead of inside commits (default true; sqlite-checkpointer.ts). */
  checkpointThread?: boolean;
}

export interface StorageStats {
  /** Write transactions committed since open. */
  transactions: number;
  /** Write operations committed since open. */
  writes: number;
  /** Rows read from SQLite by key (a get, or a write's check of the current row) because the row cache did not have them. */
  rowReads: number;
}

type Op =
  | { type: 'create'; key: string; object: KubeObject; resolve: (i: StoredItem) => void; reject: (e: Error) => void }
  | { type: 'update'; key: string; object: KubeObject; options: WriteOptions; resolve: (i: StoredItem) => void; reject: (e: Error) => void }
  | { type: 'delete'; key: string; options: WriteOptions; resolve: (i: StoredItem) => void; reject: (e: Error) => void };

interface Row {
  key: string;
  value: string;
  revision: number;
}

interface WatchEntry {
  prefix: string;
  onEvent: (event: WatchEvent) => void;
  stopped: boolean;
}

/**
 * Most rows the row cache keeps, and most JSON text (characters) they hold together: the least
 * recently read is dropped first when either is passed. 32,768 rows hold the Leases and Nodes of
 * 10,000 kubelets (each renewal a read and a write of one of them, round-robin: a smaller cache
 * missed every time); the text bound keeps large objects (ConfigMaps of up to 1 MB) from making it
 * gigabytes. One-byte strings: about a byte of heap a character.
 */
const ROW_CACHE_SIZE = 32_768;
const ROW_CACHE_CHARS = 32 * 1024 * 1024;
/** Most prefixes the list cache keeps, and most rows of one list it keeps. */
const LIST_CACHE_SIZE = 64;
const LIST_CACHE_ROWS = 16;
/** Most revisions one compaction step covers. */
const COMPACT_STEP = 500;
/** The pause after a compaction step, in multiples of the step's own duration. */
const COMPACT_PAUSE = 4;
/** Most JSON text (characters) the decoded-object cache stands for; ~2 bytes of heap each. */
const OBJECT_CACHE_CHARS = 64 * 1024 * 1024;

function withRevision(object: KubeObject, revision: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } };
}

function parse(row: Row): StoredItem {
  return { key: row.key, object: JSON.parse(row.value) as KubeObject, revision: row.revision };
}

/**
 * Marks an object as shared: it and its metadata are frozen (freezing all of it costs more than
 * parsing it), which catches a reader that sets a field, and tells serializers that it stands for
 * one revision and may be memoized (printing/tables.ts).
 */
function share(object: KubeObject): KubeObject {
  Object.freeze(object.metadata);
  return Object.freeze(object);
}

/** An event as the ring keeps it (and as a log row holds it): its object as JSON text, and the revision of the value it replaced. */
interface RingEntry {
  type: WatchEvent['type'];
  key: string;
  revision: number;
  value: string;
  prevRevision: number | null;
}

/** Most entries past ringSize before the ring drops its oldest (in one move rather than one per write). */
const RING_SLACK = 1_024;

/**
 * An event whose previous object is decoded from its JSON text (`previousJson`, or what a function
 * finds) when first read: most events reach no reader of it.
 */
function eventWithPrevious(type: WatchEvent['type'], key: string, revision: number, object: KubeObject, previousJson: string | (() => string | undefined)): WatchEvent {
  let previous: KubeObject | undefined;
  let decoded = false;
  const event = { type, key, revision, object } as WatchEvent;
  Object.defineProperty(event, 'previous', {
    enumerable: true,
    get: () => {
      if (!decoded) {
        const json = typeof previousJson === 'string' ? previousJson : previousJson();
        previous = json === undefined ? undefined : (JSON.parse(json) as KubeObject);
        decoded = true;
      }
      return previous;
    },
  });
  return event;
}

/** A decoded object shared by readers, at the revision it was read at. */
interface SharedEntry {
  item: StoredItem;
  chars: number;
}

/** The smallest string greater than every string starting with `prefix` (for range scans). */
function prefixEnd(prefix: string): string {
  return prefix + '\uffff';
}

export class SqliteStorage implements Storage {
  private readonly db: Database.Database;
  private readonly ring: RingEntry[] = [];
  private readonly ringSize: number;
  private readonly maxBatch: number;
  private readonly watchers = new Set<WatchEntry>();
  private queue: Op[] = [];
  private flushScheduled = false;
  private revision: number;
  private compacted: number;
  private closed = false;
  private readonly counters: StorageStats = { transactions: 0, writes: 0, rowReads: 0 };
  private readonly stmt;
  /** Rows of keys read lately, equal to the table (see the header). */
  private readonly rowCache = new Map<string, Row>();
  private rowCacheChars = 0;
  /** Rows of small unlimited lists by prefix, equal to the table (see the header). */
  private readonly listCache = new Map<string, Row[]>();
  /** Counts by prefix, equal to the table: every write asks whether webhooks are configured. */
  private readonly countCache = new Map<string, number>();
  /** Decoded, frozen objects for shared lists, by key (see the header). */
  private readonly objectCache = new Map<string, SharedEntry>();
  private objectCacheChars = 0;
  /** Where the compaction under way stops, and whether its next step is scheduled. */
  private compactTarget = 0;
  private compactScheduled = false;
  private readonly checkpointer?: Checkpointer;

  constructor(path: string, options: SqliteStorageOptions = {}) {
    // Every Secret is in here: created 0600 in a 0700 directory, or tightened (private-files.ts).
    ensurePrivateStore(path, dirname(path));
    this.ringSize = options.ringSize ?? 10_000;
    this.maxBatch = options.maxBatch ?? 1_000;
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    if (options.checkpointThread !== false && path !== ':memory:') {
      this.checkpointer = startCheckpointer(
        path,
        () => {
          if (!this.closed) this.db.pragma('wal_autocheckpoint = 0');
        },
        (message) => {
          if (this.closed) return;
          log.warn({ err: message }, 'the WAL checkpoint thread failed; checkpointing inside commits again');
          this.db.pragma('wal_autocheckpoint = 1000');
        },
        (result) => this.finishCheckpoint(result),
      );
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, revision INTEGER NOT NULL, create_revision INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS log (revision INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, prev_revision INTEGER);
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
    migrateKvValues(this.db);
    this.stmt = {
      get: this.db.prepare<[string], Row>('SELECT kv.key AS key, log.value AS value, kv.revision AS revision FROM kv JOIN log ON log.revision = kv.revision WHERE kv.key = ?'),
      list: this.db.prepare<[string, string], Row>(
        'SELECT kv.key AS key, log.value AS value, kv.revision AS revision FROM kv JOIN log ON log.revision = kv.revision WHERE kv.key > ? AND kv.key < ? ORDER BY kv.key',
      ),
      // kv holds no values: counting and listing keys read only its own narrow rows.
      count: this.db.prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM kv WHERE key > ? AND key < ?'),
      listKeys: this.db.prepare<[string, string], { key: string; revision: number }>('SELECT key, revision FROM kv WHERE key > ? AND key < ? ORDER BY key'),
      insertKv: this.db.prepare('INSERT INTO kv (key, revision, create_revision) VALUES (?, ?, ?)'),
      updateKv: this.db.prepare('UPDATE kv SET revision = ? WHERE key = ?'),
      deleteKv: this.db.prepare('DELETE FROM kv WHERE key = ?'),
      insertLog: this.db.prepare('INSERT INTO log (revision, key, type, value, prev_revision) VALUES (?, ?, ?, ?, ?)'),
      changesSince: this.db.prepare<[number, string, string], { key: string; prev_revision: number | null }>(
        'SELECT key, prev_revision FROM log WHERE revision > ? AND key > ? AND key < ? ORDER BY revision',
      ),
      logAfter: this.db.prepare<[number, string, string], { revision: number; key: string; type: string; value: string; prev_revision: number | null }>(
        'SELECT revision, key, type, value, prev_revision FROM log WHERE revision > ? AND key > ? AND key < ? ORDER BY revision',
      ),
      logAt: this.db.prepare<[number], { value: string }>('SELECT value FROM log WHERE revision = ?'),
      maxRev: this.db.prepare<[], { r: number | null }>('SELECT MAX(revision) AS r FROM log'),
      meta: this.db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
      setMeta: this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value'),
      // Compaction drops every log row at or below the target revision except the newest one per
      // key (which snapshots between the target and now still need), and that one too when it is a
      // deletion. Each row names the revision it replaced (prev_revision), so it looks only at the
      // rows written since the last compaction: the rows they replaced go, then their deletions.
      // (Reading every kept row for its key's newest revision took ~0.5 s a minute at 1,000
      // writes/s, all of it a stall of the event loop.)
      compactReplaced: this.db.prepare(
        'DELETE FROM log WHERE revision IN (SELECT prev_revision FROM log WHERE revision > @from AND revision <= @target AND prev_revision IS NOT NULL)',
      ),
      compactDeleted: this.db.prepare(`DELETE FROM log WHERE revision > @from AND revision <= @target AND type = 'DELETED'`),
    };
    const compacted = this.stmt.meta.get('compacted')?.value ?? 0;
    const maxRevision = this.stmt.maxRev.get()?.r ?? 0;
    const storedRevision = this.stmt.meta.get('revision')?.value ?? 0;
    this.compacted = compacted;
    this.revision = Math.max(maxRevision, storedRevision, compacted);
  }

  currentRevision(): number {
    return this.revision;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  stats(): StorageStats {
    return { ...this.counters };
  }

  /** Who checkpoints the WAL now: the checkpoint thread, or each commit past 1,000 pages (SQLite's default). */
  walCheckpoints(): 'thread' | 'commits' {
    this.assertOpen();
    return this.db.pragma('wal_autocheckpoint', { simple: true }) === 0 ? 'thread' : 'commits';
  }

  /**
   * After a checkpoint of the thread's over a log of WAL_RESTART_FRAMES or more: copies what was
   * committed while it ran, here between two commits, so that the next commit starts the log over
   * (sqlite-checkpointer.ts says why). A smaller log waits for a pause in the writes to start over.
   */
  private finishCheckpoint(result: CheckpointResult): void {
    if (this.closed || result.log < WAL_RESTART_FRAMES) return;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      // The thread's next checkpoint and report try again.
      log.debug({ err: (error as Error).message }, 'finishing a WAL checkpoint failed');
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('Closed', 'storage is closed');
  }

  get(key: string): StoredItem | undefined {
    this.assertOpen();
    const row = this.rowCache.get(key) ?? this.readRow(key);
    if (!row) return undefined;
    // Read again or read now, it becomes the most recent: a hot key (a namespace) outlives a stream of cold ones.
    this.cacheRow(key, row);
    return parse(row);
  }

  /** A key's row from SQLite (kv joined with its log entry), counted. */
  private readRow(key: string): Row | undefined {
    this.counters.rowReads += 1;
    return this.stmt.get.get(key);
  }

  /** Puts (or replaces) a row in the row cache as the most recent, dropping the least recent past either bound. */
  private cacheRow(key: string, row: Row): void {
    this.uncacheRow(key);
    if (row.value.length > ROW_CACHE_CHARS / 4) return; // one object would push out a quarter of the rest
    this.rowCache.set(key, row);
    this.rowCacheChars += row.value.length;
    while (this.rowCache.size > ROW_CACHE_SIZE || this.rowCacheChars > ROW_CACHE_CHARS) this.uncacheRow(this.rowCache.keys().next().value!);
  }

  private uncacheRow(key: string): void {
    const row = this.rowCache.get(key);
    if (!row) return;
    this.rowCache.delete(key);
    this.rowCacheChars -= row.value.length;
  }

  count(prefix: string): number {
    this.assertOpen();
    const cached = this.countCache.get(prefix) ?? this.listCache.get(prefix)?.length;
    if (cached !== undefined) return cached;
    const n = this.stmt.count.get(prefix, prefixEnd(prefix))?.n ?? 0;
    if (this.countCache.size >= LIST_CACHE_SIZE) this.countCache.delete(this.countCache.keys().next().value!);
    this.countCache.set(prefix, n);
    return n;
  }

  list(prefix: string, options: ListOptions = {}): ListResult {
    this.assertOpen();
    const plain = options.atRevision === undefined && options.startAfter === undefined && !options.limit && !options.filter;
    const cached = plain ? this.listCache.get(prefix) : undefined;
    if (cached) return { items: cached.map(parse), revision: this.revision };
    const at = options.atRevision ?? this.revision;
    if (options.atRevision !== undefined) {
      if (at <= this.compacted && at < this.revision) {
        throw new StorageError('Expired', `the revision ${at} has been compacted (oldest kept: ${this.compacted + 1})`);
      }
    }
    const start = options.startAfter && options.startAfter > prefix ? options.startAfter : prefix;
    const end = prefixEnd(prefix);
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const filter = options.filter;
    const items: StoredItem[] = [];

    // Keys written after the snapshot revision are reconstructed from the log: the first write
    // after it names the value it replaced, which is the key's value at the snapshot (none when the
    // key did not exist then). Compaction has kept that row: it was replaced after the snapshot,
    // which is newer than the compacted revision.
    const changed = new Set<string>();
    const historical: Row[] = [];
    if (at < this.revision) {
      for (const row of this.stmt.changesSince.iterate(at, start, end)) {
        if (changed.has(row.key)) continue;
        changed.add(row.key);
        const value = row.prev_revision === null ? undefined : this.stmt.logAt.get(row.prev_revision)?.value;
        if (value !== undefined) historical.push({ key: row.key, value, revision: row.prev_revision! });
      }
    }
    historical.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

    let h = 0;
    let continueAfter: string | undefined;
    const take = (row: Row | StoredItem): boolean => {
      const item = 'value' in row ? parse(row) : row;
      if (options.shared) share(item.object);
      if (filter && !filter(item.object)) return true;
      if (items.length >= limit) {
        continueAfter = items[items.length - 1].key;
        return false;
      }
      items.push(item);
      return true;
    };
    let done = false;
    // Without a limit every row is read anyway: all() fetches them in one call, much cheaper than
    // an iterator for the many small lists (an empty list of webhook configurations on each write).
    // A shared list reads keys and revisions only (kv alone, without touching the values), and a
    // value only when its decoded object is not cached at that revision.
    const rows: Iterable<{ key: string; revision: number; value?: string }> = options.shared
      ? this.stmt.listKeys.iterate(start, end)
      : limit === Infinity
        ? this.stmt.list.all(start, end)
        : this.stmt.list.iterate(start, end);
    for (const row of rows) {
      while (h < historical.length && historical[h].key < row.key) {
        if (!take(historical[h++])) {
          done = true;
          break;
        }
      }
      if (done) break;
      if (changed.has(row.key)) continue;
      if (!take(options.shared ? this.sharedItem(row.key, row.revision) : (row as Row))) {
        done = true;
        break;
      }
    }
    while (!done && h < historical.length) {
      if (!take(historical[h++])) done = true;
    }
    if (plain && Array.isArray(rows) && rows.length <= LIST_CACHE_ROWS) {
      if (this.listCache.size >= LIST_CACHE_SIZE) this.listCache.delete(this.listCache.keys().next().value!);
      this.listCache.set(prefix, rows as Row[]);
    }
    return { items, revision: at, continueAfter };
  }

  /** The frozen object of `key` at `revision` (its newest value), decoded once per revision. */
  private sharedItem(key: string, revision: number): StoredItem {
    const cached = this.objectCache.get(key);
    if (cached && cached.item.revision === revision) {
      // Least recently listed goes first.
      this.objectCache.delete(key);
      this.objectCache.set(key, cached);
      return cached.item;
    }
    const row = this.stmt.get.get(key)!;
    const item: StoredItem = { key, object: share(JSON.parse(row.value) as KubeObject), revision: row.revision };
    this.dropShared(key);
    this.objectCache.set(key, { item, chars: row.value.length });
    this.objectCacheChars += row.value.length;
    for (const [oldest, entry] of this.objectCache) {
      if (this.objectCacheChars <= OBJECT_CACHE_CHARS) break;
      this.objectCache.delete(oldest);
      this.objectCacheChars -= entry.chars;
    }
    return item;
  }

  private dropShared(key: string): void {
    const entry = this.objectCache.get(key);
    if (!entry) return;
    this.objectCache.delete(key);
    this.objectCacheChars -= entry.chars;
  }

  create(key: string, object: KubeObject): Promise<StoredItem> {
    return this.enqueue((resolve, reject) => ({ type: 'create', key, object, resolve, reject }));
  }

  update(key: string, object: KubeObject, options: WriteOptions = {}): Promise<StoredItem> {
    return this.enqueue((resolve, reject) => ({ type: 'update', key, object, options, resolve, reject }));
  }

  delete(key: string, options: WriteOptions = {}): Promise<StoredItem> {
    return this.enqueue((resolve, reject) => ({ type: 'delete', key, options, resolve, reject }));
  }

  private enqueue(make: (resolve: (i: StoredItem) => void, reject: (e: Error) => void) => Op): Promise<StoredItem> {
    if (this.closed) return Promise.reject(new StorageError('Closed', 'storage is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push(make(resolve, reject));
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every queued write in one transaction, then settles promises and notifies watchers. */
  private flush(): void {
    this.flushScheduled = false;
    const ops = this.queue;
    if (ops.length === 0) return;
    this.queue = [];
    const outcomes: Array<{ op: Op; item?: StoredItem; event?: WatchEvent; entry?: RingEntry; error?: Error }> = [];
    /** What the batch leaves in the table: each key's row, or null when deleted. */
    const written = new Map<string, Row | null>();
    let revision = this.revision;
    const run = this.db.transaction(() => {
      for (const op of ops) {
        // The key's row as the batch has left it, else as the cache has it (a write's row was nearly
        // always just read by its get), else from the table.
        const current = written.has(op.key) ? (written.get(op.key) ?? undefined) : (this.rowCache.get(op.key) ?? this.readRow(op.key));
        const expected = op.type === 'create' ? undefined : op.options.expectedRevision;
        if (op.type === 'create') {
          if (current) {
            outcomes.push({ op, error: new StorageError('AlreadyExists', `${op.key} already exists`) });
            continue;
          }
        } else if (!current) {
          outcomes.push({ op, error: new StorageError('NotFound', `${op.key} not found`) });
          continue;
        } else if (expected !== undefined && expected !== current.revision) {
          outcomes.push({ op, error: new StorageError('Conflict', `${op.key} is at revision ${current.revision}, not ${expected}`) });
          continue;
        }
        revision += 1;
        if (op.type === 'delete') {
          const previous = JSON.parse(current!.value) as KubeObject;
          const object = withRevision(previous, revision);
          const value = JSON.stringify(object);
          this.stmt.deleteKv.run(op.key);
          written.set(op.key, null);
          this.stmt.insertLog.run(revision, op.key, 'DELETED', value, current!.revision);
          outcomes.push({
            op,
            item: { key: op.key, object, revision },
            event: { type: 'DELETED', key: op.key, revision, object, previous },
            entry: { type: 'DELETED', key: op.key, revision, value, prevRevision: current!.revision },
          });
        } else {
          const object = withRevision(op.object, revision);
          const value = JSON.stringify(object);
          const type = op.type === 'create' ? 'ADDED' : 'MODIFIED';
          if (op.type === 'create') this.stmt.insertKv.run(op.key, revision, revision);
          else this.stmt.updateKv.run(revision, op.key);
          written.set(op.key, { key: op.key, value, revision });
          this.stmt.insertLog.run(revision, op.key, type, value, current?.revision ?? null);
          outcomes.push({
            op,
            item: { key: op.key, object, revision },
            event: current ? eventWithPrevious(type, op.key, revision, object, current.value) : { type, key: op.key, revision, object },
            entry: { type, key: op.key, revision, value, prevRevision: current?.revision ?? null },
          });
        }
      }
    });
    try {
      run();
    } catch (error) {
      for (const op of ops) op.reject(error as Error);
      return;
    }
    // Committed: the caches follow the table before anything else can read.
    for (const [key, row] of written) {
      if (this.rowCache.has(key)) {
        if (row) this.cacheRow(key, row);
        else this.uncacheRow(key);
      }
      for (const prefix of this.listCache.keys()) if (key.startsWith(prefix)) this.listCache.delete(prefix);
      for (const prefix of this.countCache.keys()) if (key.startsWith(prefix)) this.countCache.delete(prefix);
      this.dropShared(key);
    }
    this.revision = revision;
    this.counters.transactions += 1;
    for (const outcome of outcomes) {
      if (outcome.error) {
        outcome.op.reject(outcome.error);
        continue;
      }
      this.counters.writes += 1;
      this.ring.push(outcome.entry!);
      this.dispatch(outcome.event!);
      outcome.op.resolve(outcome.item!);
    }
    if (this.ring.length > this.ringSize + Math.min(RING_SLACK, this.ringSize)) this.ring.splice(0, this.ring.length - this.ringSize);
  }

  /** An event of the ring or the log decoded again, for a replay; its previous object from the ring when still there, else the log. */
  private replayedEvent(entry: RingEntry): WatchEvent {
    const object = JSON.parse(entry.value) as KubeObject;
    if (entry.prevRevision === null) return { type: entry.type, key: entry.key, revision: entry.revision, object };
    const prevRevision = entry.prevRevision;
    return eventWithPrevious(entry.type, entry.key, entry.revision, object, () => this.ringValueAt(prevRevision) ?? this.stmt.logAt.get(prevRevision)?.value);
  }

  /** The value written at `revision`, when the ring still holds it (binary search: the ring is in revision order). */
  private ringValueAt(revision: number): string | undefined {
    let low = 0;
    let high = this.ring.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = this.ring[mid].revision;
      if (at === revision) return this.ring[mid].value;
      if (at < revision) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }

  private dispatch(event: WatchEvent): void {
    for (const watcher of this.watchers) {
      if (watcher.stopped || !event.key.startsWith(watcher.prefix)) continue;
      try {
        watcher.onEvent(event);
      } catch {
        // A watcher's own failure must not break delivery to the others.
      }
    }
  }

  watch(prefix: string, afterRevision: number, onEvent: (event: WatchEvent) => void): Watcher {
    this.assertOpen();
    if (afterRevision < this.compacted && afterRevision < this.revision) {
      throw new StorageError('Expired', `too old resource version: ${afterRevision} (${this.compacted})`);
    }
    const entry: WatchEntry = { prefix, onEvent, stopped: false };
    // Replay what happened after afterRevision: from the ring when it reaches back far enough,
    // otherwise from the log.
    const oldestInRing = this.ring.length > 0 ? this.ring[0].revision : this.revision + 1;
    if (afterRevision < this.revision) {
      if (afterRevision + 1 >= oldestInRing) {
        for (const entry of this.ring) {
          if (entry.revision > afterRevision && entry.key.startsWith(prefix)) onEvent(this.replayedEvent(entry));
        }
      } else {
        for (const row of this.stmt.logAfter.iterate(afterRevision, prefix, prefixEnd(prefix))) {
          onEvent(this.replayedEvent({ type: row.type as WatchEvent['type'], key: row.key, revision: row.revision, value: row.value, prevRevision: row.prev_revision }));
        }
      }
    }
    this.watchers.add(entry);
    return {
      stop: () => {
        entry.stopped = true;
        this.watchers.delete(entry);
      },
    };
  }

  /**
   * Compacts in steps of COMPACT_STEP revisions, one transaction each: the first at once, the rest
   * later, each after a pause of COMPACT_PAUSE times the step's own duration, so that compaction
   * takes at most a fifth of the event loop while it lasts. (A minute of 1,000 writes/s is ~100
   * steps of 10–15 ms: back to back, one per turn of the loop, they held it ~90% busy for 1.5 s,
   * and the server then answered fewer requests than came — bench:nodes' clients queued for up to
   * 0.9 s behind it. Paced, the same steps take ~7 s of every 60.)
   */
  compact(keep: number): void {
    this.assertOpen();
    const target = this.revision - Math.max(keep, 1);
    if (target <= this.compacted) return;
    this.compactTarget = Math.max(this.compactTarget, target);
    if (!this.compactScheduled) this.compactStep();
  }

  private compactStep(): void {
    this.compactScheduled = false;
    if (this.closed) return;
    const from = this.compacted;
    const target = Math.min(this.compactTarget, from + COMPACT_STEP);
    if (target <= from) return;
    const started = performance.now();
    // Without an fsync of its own (one to five milliseconds here, up to fifty on a busy disk, all
    // of it a blocked event loop, and a step is taken 120 times a minute at 1,000 writes/s): the
    // next write's commit makes it durable with that write, and a step lost in a crash is only
    // done again (the compacted revision is written in the same transaction).
    this.db.pragma('synchronous = NORMAL');
    try {
      this.db.transaction(() => {
        this.stmt.compactReplaced.run({ from, target });
        this.stmt.compactDeleted.run({ from, target });
        this.stmt.setMeta.run('compacted', target);
        this.stmt.setMeta.run('revision', this.revision);
      })();
    } finally {
      this.db.pragma('synchronous = FULL');
    }
    this.compacted = target;
    const firstKept = this.ring.findIndex((e) => e.revision > target);
    if (firstKept > 0) this.ring.splice(0, firstKept);
    else if (firstKept < 0) this.ring.length = 0;
    if (target < this.compactTarget) {
      this.compactScheduled = true;
      setTimeout(() => this.compactStep(), (performance.now() - started) * COMPACT_PAUSE).unref();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    for (const watcher of this.watchers) watcher.stopped = true;
    this.watchers.clear();
    await this.checkpointer?.stop();
    this.db.close();
  }
}

/** Whether the store is of the earlier layout, kv holding each key's value (migrateKvValues; the migration to etcd reads either). */
export function kvHoldsValues(db: Database.Database): boolean {
  return db.prepare<[], { name: string }>('PRAGMA table_info(kv)').all().some((c) => c.name === 'value');
}

/**
 * Converts a store written when kv held each key's value beside the same value in the log (and
 * indexes of kv's keys and revisions and of the log's keys) to kv without values, in one
 * transaction: a value the log no longer has at kv's revision (none should be missing) is put
 * back into the log first, so that nothing is lost.
 */
function migrateKvValues(db: Database.Database): void {
  if (!kvHoldsValues(db)) return;
  db.transaction(() => {
    const restored = db
      .prepare(
        `INSERT INTO log (revision, key, type, value, prev_revision)
         SELECT kv.revision, kv.key, CASE WHEN kv.revision = kv.create_revision THEN 'ADDED' ELSE 'MODIFIED' END, kv.value, NULL
         FROM kv LEFT JOIN log ON log.revision = kv.revision WHERE log.revision IS NULL`,
      )
      .run().changes;
    db.exec(`
      DROP INDEX IF EXISTS log_key;
      CREATE TABLE kv_keys (key TEXT PRIMARY KEY, revision INTEGER NOT NULL, create_revision INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO kv_keys (key, revision, create_revision) SELECT key, revision, create_revision FROM kv;
      DROP INDEX IF EXISTS kv_revision;
      DROP TABLE kv;
      ALTER TABLE kv_keys RENAME TO kv;
    `);
    log.info({ restored }, 'converted the store to keep each value once (in the log)');
  })();
}

export function openSqliteStorage(path: string, options: SqliteStorageOptions = {}): SqliteStorage {
  return new SqliteStorage(path, options);
}
