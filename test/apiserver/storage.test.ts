// The SQLite storage: revisions, optimistic concurrency, snapshots for paging, watches,
// compaction, restarts, group commit, and durability under SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { openSqliteStorage } from '../../src/apiserver/storage/sqlite.js';
import { StorageError, type WatchEvent } from '../../src/apiserver/storage/types.js';

function tempDb(): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-storage-'));
  return { path: join(dir, 'state.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof StorageError && e.code === code);
}

test('create, get, update, delete with revisions and resourceVersions', async () => {
  const { path, cleanup } = tempDb();
  const s = openSqliteStorage(path);
  try {
    assert.equal(s.currentRevision(), 0);
    const a = await s.create('/core/configmaps/default/a', cm('a'));
    assert.equal(a.revision, 1);
    assert.equal(a.object.metadata.resourceVersion, '1');
    await rejectsWith(s.create('/core/configmaps/default/a', cm('a')), 'AlreadyExists');
    const u = await s.update('/core/configmaps/default/a', cm('a', { x: '1' }), { expectedRevision: 1 });
    assert.equal(u.revision, 2);
    await rejectsWith(s.update('/core/configmaps/default/a', cm('a', { x: '2' }), { expectedRevision: 1 }), 'Conflict');
    await rejectsWith(s.update('/core/configmaps/default/missing', cm('missing')), 'NotFound');
    assert.deepEqual(s.get('/core/configmaps/default/a')?.object, { ...cm('a', { x: '1' }), metadata: { name: 'a', namespace: 'default', resourceVersion: '2' } });
    const d = await s.delete('/core/configmaps/default/a');
    assert.equal(d.revision, 3);
    assert.equal(d.object.metadata.resourceVersion, '3');
    assert.equal(s.get('/core/configmaps/default/a'), undefined);
    await rejectsWith(s.delete('/core/configmaps/default/a'), 'NotFound');
  } finally {
    await s.close();
    cleanup();
  }
});

test('concurrent writes are group-committed, and a failing op fails only itself', async () => {
  const { path, cleanup } = tempDb();
  const s = openSqliteStorage(path);
  try {
    const before = s.stats().transactions;
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => s.create(`/core/configmaps/default/c${i % 150}`, cm(`c${i % 150}`))),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 150);
    assert.equal(results.filter((r) => r.status === 'rejected').length, 50);
    assert.ok(s.stats().transactions - before <= 3, `200 writes took ${s.stats().transactions - before} transactions`);
    assert.equal(s.list('/core/configmaps/').items.length, 150);
  } finally {
    await s.close();
    cleanup();
  }
});

test('paged lists see a consistent snapshot while writes continue', async () => {
  const { path, cleanup } = tempDb();
  const s = openSqliteStorage(path);
  try {
    for (let i = 0; i < 30; i++) await s.create(`/core/configmaps/default/k${String(i).padStart(2, '0')}`, cm(`k${i}`, { v: 'old' }));
    const first = s.list('/core/configmaps/default/', { limit: 10 });
    assert.equal(first.items.length, 10);
    assert.equal(first.continueAfter, '/core/configmaps/default/k09');
    // Change the world after the first page: modify, delete, add.
    await s.update('/core/configmaps/default/k15', cm('k15', { v: 'new' }));
    await s.delete('/core/configmaps/default/k20');
    await s.create('/core/configmaps/default/k25a', cm('k25a'));
    const rest = s.list('/core/configmaps/default/', { atRevision: first.revision, startAfter: first.continueAfter });
    assert.equal(rest.items.length, 20);
    assert.deepEqual(rest.items.find((i) => i.key.endsWith('k15'))?.object.data, { v: 'old' });
    assert.ok(rest.items.some((i) => i.key.endsWith('k20')));
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

test('watches replay history, deliver live events in order, and expire after compaction', async () => {
  const { path, cleanup } = tempDb();
  const s = openSqliteStorage(path, { ringSize: 5 });
  try {
    for (let i = 0; i < 10; i++) await s.create(`/core/configmaps/default/w${i}`, cm(`w${i}`));
    await s.create('/core/secrets/default/other', cm('other'));
    const seen: WatchEvent[] = [];
    // Revision 2 is older than the ring (size 5): replayed from the log.
    const w = s.watch('/core/configmaps/', 2, (e) => seen.push(e));
    assert.deepEqual(seen.map((e) => e.revision), [3, 4, 5, 6, 7, 8, 9, 10]);
    await s.update('/core/configmaps/default/w0', cm('w0', { a: 'b' }));
    await s.delete('/core/configmaps/default/w1');
    assert.deepEqual(seen.slice(-2).map((e) => [e.type, e.revision]), [['MODIFIED', 12], ['DELETED', 13]]);
    assert.equal(seen.at(-1)!.object.metadata.resourceVersion, '13');
    w.stop();
    await s.create('/core/configmaps/default/after', cm('after'));
    assert.equal(seen.length, 10);
    s.compact(3);
    assert.equal(s.compactedRevision(), 11);
    assert.throws(() => s.watch('/core/configmaps/', 5, () => {}), (e: unknown) => e instanceof StorageError && e.code === 'Expired');
    assert.throws(() => s.list('/core/configmaps/', { atRevision: 5 }), (e: unknown) => e instanceof StorageError && e.code === 'Expired');
    const late: WatchEvent[] = [];
    s.watch('/core/configmaps/', 12, (e) => late.push(e)).stop();
    assert.deepEqual(late.map((e) => e.revision), [13, 14]);
    // A snapshot between the compaction point and now still sees keys last written before it.
    assert.equal(s.list('/core/configmaps/', { atRevision: 12 }).items.length, 10);
  } finally {
    await s.close();
    cleanup();
  }
});

test('data and revisions survive a restart; closed storage refuses calls', async () => {
  const { path, cleanup } = tempDb();
  let s = openSqliteStorage(path);
  await s.create('/core/configmaps/default/p', cm('p'));
  await s.update('/core/configmaps/default/p', cm('p', { k: 'v' }));
  await s.close();
  await rejectsWith(s.create('/core/configmaps/default/q', cm('q')), 'Closed');
  s = openSqliteStorage(path);
  try {
    assert.equal(s.currentRevision(), 2);
    assert.deepEqual(s.get('/core/configmaps/default/p')?.object.data, { k: 'v' });
    const seen: number[] = [];
    s.watch('/core/configmaps/', 0, (e) => seen.push(e.revision)).stop();
    assert.deepEqual(seen, [1, 2]);
    assert.equal((await s.create('/core/configmaps/default/q', cm('q'))).revision, 3);
  } finally {
    await s.close();
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
