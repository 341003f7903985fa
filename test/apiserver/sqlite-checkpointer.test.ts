// The SQLite store's WAL checkpoints run on a thread of their own (storage/sqlite-checkpointer.ts):
// once the thread runs, the store's connection no longer checkpoints inside commits, yet the
// write-ahead log is still copied into the database file and started over, so it stays small while
// writes go on; a thread that cannot run hands checkpoints back to the commits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStorage } from '../../src/apiserver/storage/sqlite.js';
import { startCheckpointer } from '../../src/apiserver/storage/sqlite-checkpointer.js';
import { eventually } from '../helpers/eventually.js';

const size = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

test('the WAL is checkpointed by the thread, not in commits, and stays small while writes go on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-checkpointer-'));
  const path = join(dir, 'state.db');
  const s = openSqliteStorage(path);
  try {
    await eventually('the checkpoint thread to run', () => s.walCheckpoints() === 'thread');
    const value = 'x'.repeat(2000);
    let walMax = 0;
    // 20 MB of values, in batches of 100: without any checkpoint the log would hold all of it.
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => s.create(`/core/configmaps/default/cm-${batch}-${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${batch}-${i}`, namespace: 'default' }, data: { value } })));
      walMax = Math.max(walMax, size(`${path}-wal`));
      if (batch % 10 === 9) await new Promise((r) => setTimeout(r, 150)); // a checkpoint's period passes now and then
    }
    await eventually('the database file to hold the checkpointed pages', () => size(path) > 20e6);
    assert.ok(walMax < 12e6, `the log was started over as checkpoints caught up (largest ${walMax} bytes)`);
    assert.equal(s.walCheckpoints(), 'thread');
    assert.equal(s.count('/core/configmaps/'), 10_000);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // Closed with the thread stopped: the last connection removes the log.
  assert.equal(size(`${path}-wal`), 0);
});

test('under writes that never pause, the WAL is still started over: it stays small, not as large as what was written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-checkpointer-'));
  const path = join(dir, 'state.db');
  const s = openSqliteStorage(path);
  try {
    await eventually('the checkpoint thread to run', () => s.walCheckpoints() === 'thread');
    const value = 'x'.repeat(2000);
    let walMax = 0;
    // 30 MB of values in batches of 50, one after the other with no pause (a busy API server's
    // commits): some commit always lands while the thread's checkpoint runs.
    const started = Date.now();
    let batch = 0;
    for (; batch < 300 || Date.now() - started < 1500; batch++) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => s.create(`/core/configmaps/default/cm-${batch}-${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${batch}-${i}`, namespace: 'default' }, data: { value } })));
      walMax = Math.max(walMax, size(`${path}-wal`));
    }
    assert.ok(walMax < 32e6, `the log was started over while the writes went on (largest ${walMax} bytes after ${batch * 50 * 2000} bytes of values)`);
    assert.equal(s.count('/core/configmaps/'), batch * 50);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a checkpoint thread that cannot open the database reports the failure', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-checkpointer-'));
  try {
    let ready = false;
    const failure = await new Promise<string>((resolve) => startCheckpointer(join(dir, 'missing.db'), () => (ready = true), resolve));
    assert.equal(ready, false);
    assert.match(failure, /open database|does not exist/i);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a store closed before its checkpoint thread is ready closes, and opens again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-checkpointer-'));
  const path = join(dir, 'state.db');
  try {
    for (let i = 0; i < 3; i++) {
      const s = openSqliteStorage(path);
      await s.create(`/core/configmaps/default/cm-${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' } });
      await s.close();
    }
    const s = openSqliteStorage(path);
    assert.equal(s.count('/core/configmaps/'), 3);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
