// The storage interface on both backends — SQLite, and etcd (a real single-member etcd this file
// starts) — with the same tests: revisions, optimistic concurrency, snapshots for paging, watches,
// compaction, restarts; and, SQLite only, group commit and durability under SIGKILL. Revisions
// are asserted relative to where each test starts (etcd's revision is the cluster's, shared by
// every prefix).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { openSqliteStorage, SqliteStorage } from '../../src/apiserver/storage/sqlite.js';
import { openEtcdStorage } from '../../src/apiserver/storage/etcd.js';
import { StorageError, type Storage, type WatchEvent } from '../../src/apiserver/storage/types.js';
import { skipWithoutEtcd, startTestEtcd, type TestEtcd } from '../helpers/etcd.js';
import { eventually } from '../helpers/eventually.js';

function tempDb(): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-storage-'));
  return { path: join(dir, 'state.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const dataV = (object: object) => ((object as { data?: unknown }).data as Record<string, string> | undefined)?.v;
const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof StorageError && e.code === code);
}

/** One store per test: `open` gives it, `reopen` opens the same data again, `cleanup` removes it. */
interface Opened {
  s: Storage;
  reopen(): Promise<Storage>;
  cleanup(): void;
}

let etcd: TestEtcd | undefined;
let prefixes = 0;
before(async () => {
  if (!skipWithoutEtcd) etcd = await startTestEtcd({ members: 1 });
});
after(async () => {
  await etcd?.stop();
});

const backends: Array<{ name: string; skip: string | false; open(smallRing?: boolean): Promise<Opened> }> = [
  {
    name: 'sqlite',
    skip: false,
    async open(smallRing) {
      const { path, cleanup } = tempDb();
      return { s: openSqliteStorage(path, smallRing ? { ringSize: 5 } : {}), reopen: async () => openSqliteStorage(path), cleanup };
    },
  },
  {
    name: 'etcd',
    skip: skipWithoutEtcd,
    async open() {
      const options = { endpoints: etcd!.cluster.client.endpoints, prefix: `/storage-test-${++prefixes}` };
      return { s: await openEtcdStorage(options), reopen: () => openEtcdStorage(options), cleanup: () => undefined };
    },
  },
];

for (const backend of backends) {
  test(`${backend.name}: create, get, update, delete with revisions and resourceVersions`, { skip: backend.skip }, async () => {
    const { s, cleanup } = await backend.open();
    const base = s.currentRevision();
    try {
      assert.equal(s.currentRevision(), base);
      const a = await s.create('/core/configmaps/default/a', cm('a'));
      assert.equal(a.revision, base + 1);
      assert.equal(a.object.metadata.resourceVersion, String(base + 1));
      await rejectsWith(s.create('/core/configmaps/default/a', cm('a')), 'AlreadyExists');
      await s.create('/core/configmaps/other/b', cm('b'));
      await s.create('/core/configmapsx/default/c', cm('c'));
      // Counts without reading: a directory, a namespace in it, a key's own prefix, nothing.
      assert.deepEqual(['/core/configmaps/', '/core/configmaps/default/', '/core/configmaps', '/core/secrets/'].map((p) => s.count(p)), [2, 1, 3, 0]);
      await s.delete('/core/configmaps/other/b');
      await s.delete('/core/configmapsx/default/c');
      assert.equal(s.count('/core/configmaps/'), 1);
      const u = await s.update('/core/configmaps/default/a', cm('a', { x: '1' }), { expectedRevision: base + 1 });
      assert.equal(u.revision, base + 6);
      await rejectsWith(s.update('/core/configmaps/default/a', cm('a', { x: '2' }), { expectedRevision: base + 1 }), 'Conflict');
      await rejectsWith(s.update('/core/configmaps/default/missing', cm('missing')), 'NotFound');
      assert.deepEqual(s.get('/core/configmaps/default/a')?.object, { ...cm('a', { x: '1' }), metadata: { name: 'a', namespace: 'default', resourceVersion: String(base + 6) } });
      const d = await s.delete('/core/configmaps/default/a');
      assert.equal(d.revision, base + 7);
      assert.equal(d.object.metadata.resourceVersion, String(base + 7));
      assert.equal(s.count('/core/configmaps/'), 0);
      assert.equal(s.get('/core/configmaps/default/a'), undefined);
      await rejectsWith(s.delete('/core/configmaps/default/a'), 'NotFound');
    } finally {
      await s.close();
      cleanup();
    }
  });

  test(`${backend.name}: concurrent writes are group-committed, and a failing op fails only itself`, { skip: backend.skip }, async () => {
    const { s, cleanup } = await backend.open();
    try {
      const stats = () => (s instanceof SqliteStorage ? s.stats().transactions : 0);
      const before = stats();
      const results = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) => s.create(`/core/configmaps/default/c${i % 150}`, cm(`c${i % 150}`))),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 150);
      assert.equal(results.filter((r) => r.status === 'rejected').length, 50);
      // SQLite only: the writes share transactions (etcd batches in its own raft log).
      assert.ok(stats() - before <= 3, `200 writes took ${stats() - before} transactions`);
      assert.equal(s.list('/core/configmaps/').items.length, 150);
    } finally {
      await s.close();
      cleanup();
    }
  });

  test(`${backend.name}: paged lists see a consistent snapshot while writes continue`, { skip: backend.skip }, async () => {
    const { s, cleanup } = await backend.open();
    try {
      for (let i = 0; i < 30; i++) await s.create(`/core/configmaps/default/k${String(i).padStart(2, '0')}`, cm(`k${i}`, { v: 'old' }));
      const first = s.list('/core/configmaps/default/', { limit: 10 });
      assert.equal(first.items.length, 10);
      assert.equal(first.continueAfter, '/core/configmaps/default/k09');
      // Change the world after the first page: modify, delete, add.
      await s.update('/core/configmaps/default/k15', cm('k15', { v: 'newer' }));
      await s.update('/core/configmaps/default/k15', cm('k15', { v: 'new' }));
      await s.delete('/core/configmaps/default/k20');
      await s.delete('/core/configmaps/default/k21');
      await s.create('/core/configmaps/default/k21', cm('k21', { v: 'again' }));
      await s.create('/core/configmaps/default/k25a', cm('k25a'));
      const rest = s.list('/core/configmaps/default/', { atRevision: first.revision, startAfter: first.continueAfter });
      assert.equal(rest.items.length, 20);
      assert.deepEqual(rest.items.find((i) => i.key.endsWith('k15'))?.object.data, { v: 'old' });
      assert.ok(rest.items.some((i) => i.key.endsWith('k20')));
      assert.deepEqual(rest.items.find((i) => i.key.endsWith('k21'))?.object.data, { v: 'old' });
      assert.ok(!rest.items.some((i) => i.key.endsWith('k25a')));
      assert.equal(rest.continueAfter, undefined);
      const now = s.list('/core/configmaps/default/');
      assert.equal(now.items.length, 30);
      const filtered = s.list('/core/configmaps/default/', { filter: (o) => (o.data as Record<string, string>).v === 'new' });
      assert.deepEqual(filtered.items.map((i) => i.key), ['/core/configmaps/default/k15']);
    } finally {
      await s.close();
      cleanup();
    }
  });

  test(`${backend.name}: watches replay history, deliver live events in order, and expire after compaction`, { skip: backend.skip }, async () => {
    const { s, cleanup } = await backend.open(true);
    const base = s.currentRevision();
    try {
      for (let i = 0; i < 10; i++) await s.create(`/core/configmaps/default/w${i}`, cm(`w${i}`));
      await s.create('/core/secrets/default/other', cm('other'));
      const seen: WatchEvent[] = [];
      // SQLite: revision 2 is older than the ring (size 5), replayed from the log.
      const w = s.watch('/core/configmaps/', base + 2, (e) => seen.push(e));
      assert.deepEqual(seen.map((e) => e.revision), [3, 4, 5, 6, 7, 8, 9, 10].map((r) => base + r));
      await s.update('/core/configmaps/default/w0', cm('w0', { a: 'b' }));
      await s.delete('/core/configmaps/default/w1');
      assert.deepEqual(seen.slice(-2).map((e) => [e.type, e.revision]), [['MODIFIED', base + 12], ['DELETED', base + 13]]);
      assert.equal(seen.at(-1)!.object.metadata.resourceVersion, String(base + 13));
      w.stop();
      await s.create('/core/configmaps/default/after', cm('after'));
      assert.equal(seen.length, 10);
      s.compact(3);
      assert.equal(s.compactedRevision(), base + 11);
      assert.throws(() => s.watch('/core/configmaps/', base + 5, () => {}), (e: unknown) => e instanceof StorageError && e.code === 'Expired');
      assert.throws(() => s.list('/core/configmaps/', { atRevision: base + 5 }), (e: unknown) => e instanceof StorageError && e.code === 'Expired');
      const late: WatchEvent[] = [];
      s.watch('/core/configmaps/', base + 12, (e) => late.push(e)).stop();
      assert.deepEqual(late.map((e) => e.revision), [base + 13, base + 14]);
      // A snapshot between the compaction point and now still sees keys last written before it.
      assert.equal(s.list('/core/configmaps/', { atRevision: base + 12 }).items.length, 10);
    } finally {
      await s.close();
      cleanup();
    }
  });

  test(`${backend.name}: events carry the object each replaced, live and replayed (from the ring and from the log)`, { skip: backend.skip }, async () => {
    const { s, cleanup } = await backend.open(true);
    const base = s.currentRevision();
    try {
      const live: WatchEvent[] = [];
      const w = s.watch('/core/configmaps/', base, (e) => live.push(e));
      await s.create('/core/configmaps/default/e', cm('e', { v: '1' }));
      await s.update('/core/configmaps/default/e', cm('e', { v: '2' }));
      await s.delete('/core/configmaps/default/e');
      w.stop();
      const shape = (events: WatchEvent[]) => events.map((e) => [e.type, e.revision - base, e.object.data, e.previous?.data, e.previous?.metadata.resourceVersion]);
      const expected = [
        ['ADDED', 1, { v: '1' }, undefined, undefined],
        ['MODIFIED', 2, { v: '2' }, { v: '1' }, String(base + 1)],
        ['DELETED', 3, { v: '2' }, { v: '2' }, String(base + 2)],
      ];
      assert.deepEqual(shape(live), expected);
      const replayed: WatchEvent[] = [];
      s.watch('/core/configmaps/', base, (e) => replayed.push(e)).stop();
      assert.deepEqual(shape(replayed), expected, 'replayed from the ring');
      assert.deepEqual({ ...replayed[1] }.previous?.data, { v: '1' }, 'a copy of the event carries its previous object');
      // Enough other writes that the ring (size 5) no longer reaches back: replayed from the log.
      for (let i = 0; i < 12; i++) await s.create(`/core/secrets/default/s${i}`, cm(`s${i}`));
      const fromLog: WatchEvent[] = [];
      s.watch('/core/configmaps/', base, (e) => fromLog.push(e)).stop();
      assert.deepEqual(shape(fromLog), expected, 'replayed from the log');
    } finally {
      await s.close();
      cleanup();
    }
  });

  test(`${backend.name}: data and revisions survive a restart; closed storage refuses calls`, { skip: backend.skip }, async () => {
    const opened = await backend.open();
    let s = opened.s;
    const base = s.currentRevision();
    await s.create('/core/configmaps/default/p', cm('p'));
    await s.update('/core/configmaps/default/p', cm('p', { k: 'v' }));
    await s.close();
    await rejectsWith(s.create('/core/configmaps/default/q', cm('q')), 'Closed');
    s = await opened.reopen();
    try {
      // etcd counts one more write: the marker a reopened store's replaying watch writes (etcd.ts).
      const marker = backend.name === 'etcd' ? 1 : 0;
      assert.equal(s.currentRevision(), base + 2 + marker);
      assert.deepEqual(s.get('/core/configmaps/default/p')?.object.data, { k: 'v' });
      assert.equal(s.get('/core/configmaps/default/p')?.revision, base + 2);
      const seen: number[] = [];
      s.watch('/core/configmaps/', base, (e) => seen.push(e.revision)).stop();
      assert.deepEqual(seen, [base + 1, base + 2]);
      assert.equal((await s.create('/core/configmaps/default/q', cm('q'))).revision, base + 3 + marker);
    } finally {
      await s.close();
      opened.cleanup();
    }
  });
}

test('sqlite: reads served from its caches follow every write, and each read is its own copy', async () => {
  const { path, cleanup } = tempDb();
  const s = openSqliteStorage(path);
  try {
    await s.create('/core/namespaces//ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } });
    // A hot key: read, changed, read again, deleted, read again.
    assert.equal(s.get('/core/namespaces//ns')?.object.metadata.name, 'ns');
    const copy = s.get('/core/namespaces//ns')!;
    copy.object.metadata.labels = { mutated: 'by the caller' };
    assert.equal(s.get('/core/namespaces//ns')?.object.metadata.labels, undefined, 'a caller changing its copy changes no later read');
    const updated = await s.update('/core/namespaces//ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { a: 'b' } } });
    assert.deepEqual(s.get('/core/namespaces//ns')?.object.metadata.labels, { a: 'b' });
    assert.equal(s.get('/core/namespaces//ns')?.revision, updated.revision);
    await s.delete('/core/namespaces//ns');
    assert.equal(s.get('/core/namespaces//ns'), undefined);
    // A small list: empty, then each write under its prefix shows, and one elsewhere does not disturb it.
    const prefix = '/admissionregistration.k8s.io/validatingwebhookconfigurations/';
    assert.equal(s.list(prefix).items.length, 0);
    await s.create(`${prefix}/a`, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'a' } });
    assert.deepEqual(s.list(prefix).items.map((i) => i.object.metadata.name), ['a']);
    await s.create('/core/configmaps/default/x', cm('x'));
    const listed = s.list(prefix);
    assert.deepEqual(listed.items.map((i) => i.object.metadata.name), ['a']);
    assert.equal(listed.revision, s.currentRevision(), 'a cached list is as of the current revision');
    listed.items[0].object.metadata.name = 'changed by the caller';
    await s.update(`${prefix}/a`, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'a', labels: { v: '2' } } });
    assert.deepEqual(s.list(prefix).items.map((i) => [i.object.metadata.name, i.object.metadata.labels]), [['a', { v: '2' }]]);
    await s.delete(`${prefix}/a`);
    assert.equal(s.list(prefix).items.length, 0);
  } finally {
    await s.close();
    cleanup();
  }
});

test('sqlite: a write checks the row its get just read without reading it again, the batch its own earlier writes; large rows stay out of the cache', async () => {
  const { path, cleanup } = tempDb();
  const s = openSqliteStorage(path) as SqliteStorage;
  try {
    const reads = () => s.stats().rowReads;
    await s.create('/core/configmaps/default/a', cm('a', { v: '1' }));
    const before = reads();
    const a = s.get('/core/configmaps/default/a')!;
    assert.equal(reads(), before + 1, 'the first get reads the row');
    // An update of what was just read: the commit's check of the current revision uses the cached row.
    const updated = await s.update('/core/configmaps/default/a', cm('a', { v: '2' }), { expectedRevision: a.revision });
    assert.equal(reads(), before + 1, 'the update read no row');
    assert.equal(dataV(s.get('/core/configmaps/default/a')!.object), '2');
    // A stale revision is still refused from the cached row, and the row is the new one.
    await rejectsWith(s.update('/core/configmaps/default/a', cm('a', { v: '3' }), { expectedRevision: a.revision }), 'Conflict');
    assert.equal(s.get('/core/configmaps/default/a')!.revision, updated.revision);
    // Writes of one key in one batch: each sees the one before it (created, updated, deleted, created again).
    const batch = await Promise.allSettled([
      s.create('/core/configmaps/default/b', cm('b', { v: '1' })),
      s.create('/core/configmaps/default/b', cm('b', { v: 'twice' })),
      s.update('/core/configmaps/default/b', cm('b', { v: '2' })),
      s.delete('/core/configmaps/default/b'),
      s.update('/core/configmaps/default/b', cm('b', { v: 'gone' })),
      s.create('/core/configmaps/default/b', cm('b', { v: '3' })),
    ]);
    assert.deepEqual(batch.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as StorageError).code)), ['ok', 'AlreadyExists', 'ok', 'ok', 'NotFound', 'ok']);
    assert.equal(dataV(s.get('/core/configmaps/default/b')!.object), '3');
    // A row over a quarter of the cache's text bound (8 Mi characters) is read from SQLite each time.
    await s.create('/core/configmaps/default/big', cm('big', { v: 'x'.repeat(9 * 1024 * 1024) }));
    const beforeBig = reads();
    assert.equal(dataV(s.get('/core/configmaps/default/big')!.object)?.length, 9 * 1024 * 1024);
    assert.equal(dataV(s.get('/core/configmaps/default/big')!.object)?.length, 9 * 1024 * 1024);
    assert.equal(reads(), beforeBig + 2, 'the large row was not cached');
    // After a restart the table, not a cache, answers: every write above is there.
    await s.close();
    const again = openSqliteStorage(path);
    try {
      assert.equal(dataV(again.get('/core/configmaps/default/a')!.object), '2');
      assert.equal(dataV(again.get('/core/configmaps/default/b')!.object), '3');
    } finally {
      await again.close();
    }
  } finally {
    await s.close();
    cleanup();
  }
});

test('sqlite: a store written when kv held the values opens converted, with every object, revision and history kept', async () => {
  const { path, cleanup } = tempDb();
  try {
    // The earlier layout, as an API server of that version left it: values in kv and in the log.
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec(`
      CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, revision INTEGER NOT NULL, create_revision INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE log (revision INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, prev_revision INTEGER);
      CREATE INDEX log_key ON log (key, revision);
      CREATE INDEX kv_revision ON kv (key, revision);
      CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
    const value = (name: string, rv: number, v: string) => JSON.stringify({ ...cm(name, { v }), metadata: { name, namespace: 'default', resourceVersion: String(rv) } });
    const insertLog = old.prepare('INSERT INTO log VALUES (?, ?, ?, ?, ?)');
    insertLog.run(1, '/core/configmaps/default/a', 'ADDED', value('a', 1, '1'), null);
    insertLog.run(2, '/core/configmaps/default/b', 'ADDED', value('b', 2, '1'), null);
    insertLog.run(3, '/core/configmaps/default/a', 'MODIFIED', value('a', 3, '2'), 1);
    const insertKv = old.prepare('INSERT INTO kv VALUES (?, ?, ?, ?)');
    insertKv.run('/core/configmaps/default/a', value('a', 3, '2'), 3, 1);
    insertKv.run('/core/configmaps/default/b', value('b', 2, '1'), 2, 2);
    // A live value the log lacks (none should): it must not be lost.
    insertKv.run('/core/configmaps/default/c', value('c', 4, '1'), 4, 4);
    old.prepare("INSERT INTO meta VALUES ('revision', 4)").run();
    old.close();

    let s = openSqliteStorage(path);
    try {
      assert.equal(s.currentRevision(), 4);
      assert.deepEqual(s.list('/core/configmaps/').items.map((i) => [i.key, i.revision, dataV(i.object)]), [
        ['/core/configmaps/default/a', 3, '2'],
        ['/core/configmaps/default/b', 2, '1'],
        ['/core/configmaps/default/c', 4, '1'],
      ]);
      assert.equal(s.count('/core/configmaps/'), 3);
      // History is kept: a list at revision 2 sees a's first value.
      assert.equal(dataV(s.list('/core/configmaps/', { atRevision: 2 }).items.find((i) => i.key.endsWith('/a'))!.object), '1');
      // And the store goes on: an update with a's revision, a conflict with an older one.
      const updated = await s.update('/core/configmaps/default/a', cm('a', { v: '3' }), { expectedRevision: 3 });
      assert.equal(updated.revision, 5);
      await rejectsWith(s.update('/core/configmaps/default/b', cm('b'), { expectedRevision: 1 }), 'Conflict');
    } finally {
      await s.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      assert.deepEqual(check.prepare('PRAGMA table_info(kv)').all().map((c) => (c as { name: string }).name), ['key', 'revision', 'create_revision']);
      assert.equal((check.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN ('kv_revision', 'log_key')").get() as { n: number }).n, 0);
    } finally {
      check.close();
    }
    // Opened again, nothing is converted twice and everything is there.
    s = openSqliteStorage(path);
    try {
      assert.deepEqual(s.list('/core/configmaps/').items.map((i) => [i.key, i.revision]), [
        ['/core/configmaps/default/a', 5],
        ['/core/configmaps/default/b', 2],
        ['/core/configmaps/default/c', 4],
      ]);
      assert.equal(dataV(s.get('/core/configmaps/default/a')!.object), '3');
    } finally {
      await s.close();
    }
  } finally {
    cleanup();
  }
});

test('every acknowledged write survives SIGKILL', async () => {
  const { path, cleanup } = tempDb();
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('./fixtures/storage-writer.ts', import.meta.url).pathname, path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await new Promise((r) => child.stdout.once('data', r));
    await new Promise((r) => setTimeout(r, 200 + Math.floor(Math.random() * 800)));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
    const acknowledged = out.split('\n').filter((l) => l.startsWith('ack '));
    assert.ok(acknowledged.length > 10, `only ${acknowledged.length} writes acknowledged before the kill`);
    const s = openSqliteStorage(path);
    try {
      for (const line of acknowledged) {
        const [, key, value] = line.split(' ');
        const item = s.get(key);
        assert.ok(item, `acknowledged ${key} is missing`);
        assert.ok(Number((item.object.data as Record<string, string>).n) >= Number(value), `${key} lost its acknowledged value ${value}`);
      }
    } finally {
      await s.close();
    }
  } finally {
    cleanup();
  }
});

test('etcd: of two stores on one prefix one compacts etcd per round; a store loads in pages and follows the cluster revision for bookmarks', { skip: skipWithoutEtcd }, async () => {
  const options = { endpoints: etcd!.cluster.client.endpoints, prefix: `/storage-test-${++prefixes}`, progressIntervalMs: 100 };
  const [s1, s2] = [await openEtcdStorage(options), await openEtcdStorage(options)];
  const other = await openEtcdStorage({ ...options, prefix: `/storage-test-${++prefixes}` });
  const raw = etcd!.cluster.connect();
  try {
    for (let i = 0; i < 10; i++) await s1.create(`/core/configmaps/default/c${i}`, cm(`c${i}`));
    // The other store saw every write through its own watch.
    const last = s1.currentRevision();
    await eventually('the second store has caught up', () => s2.currentRevision() >= last, 5_000);
    assert.equal(s2.list('/core/configmaps/').items.length, 10);
    // A store opened now loads them in pages.
    const s3 = await openEtcdStorage({ ...options, loadPageSize: 3 });
    assert.deepEqual(s3.list('/core/configmaps/').items.map((i) => i.key), s1.list('/core/configmaps/').items.map((i) => i.key));
    await s3.close();

    // (s3's open wrote its watch marker: the revision has moved on since `last`.)
    await eventually('s1 saw s3\'s marker', () => s1.currentRevision() > last, 5_000);
    const target = s1.currentRevision() - 2;
    s1.compact(2);
    const marker = () => raw.kv.range({ key: Buffer.from(`${options.prefix}/compact_rev_key`) }).then((r) => r.kvs[0]?.value.toString());
    await eventually('s1 compacted etcd', async () => (await marker()) === String(target), 5_000);
    // (The compaction itself follows the winning transaction on the marker.)
    await eventually('etcd forgot what came before the target', () => raw.kv.range({ key: Buffer.from('/'), revision: target - 1 }).then(() => false, (e: Error) => /compacted/.test(e.message)), 5_000);
    // s2 has not seen s1's round: its proposal loses, and etcd keeps what it has.
    s2.compact(1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await marker(), String(target));
    assert.throws(() => s1.watch('/core/configmaps/', target - 1, () => {}), (e: unknown) => e instanceof StorageError && e.code === 'Expired');

    // A write under another prefix moves the cluster's revision; progress answers bring the store there.
    const elsewhere = await other.create('/core/configmaps/default/x', cm('x'));
    await eventually('s1 follows the cluster revision', () => s1.currentRevision() >= elsewhere.revision, 5_000);
  } finally {
    raw.close();
    await Promise.all([s1.close(), s2.close(), other.close()]);
  }
});
