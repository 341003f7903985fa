// The etcd store's watch cache on its own: a reload tells watchers the difference, lists as of a
// revision inside the window, and writers waiting for their revision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WatchCache, withRevision } from '../../src/apiserver/storage/watch-cache.js';
import type { StoredItem, WatchEvent } from '../../src/apiserver/storage/types.js';

const item = (name: string, revision: number, data = 'v'): StoredItem => ({
  key: `/core/configmaps/default/${name}`,
  revision,
  object: withRevision({ metadata: { name, namespace: 'default' }, data: { k: data } }, revision),
});

test('a reload tells each watcher what changed while it was not told: deleted, added, modified', () => {
  const cache = new WatchCache();
  cache.reset([item('kept', 2), item('gone', 3), item('changed', 4)], 5);
  const seen: WatchEvent[] = [];
  cache.watch('/core/configmaps/', 5, (e) => seen.push(e));
  cache.reset([item('kept', 2), item('changed', 9, 'new'), item('new', 8)], 10);
  assert.deepEqual(
    seen.map((e) => [e.type, e.key.split('/').pop(), e.revision]),
    [
      ['MODIFIED', 'changed', 10],
      ['DELETED', 'gone', 10],
      ['ADDED', 'new', 10],
    ],
  );
  assert.equal(seen[1].object.metadata.resourceVersion, '10');
  assert.equal(cache.compactedRevision(), 10);
  assert.throws(() => cache.watch('/core/configmaps/', 7, () => undefined), /too old/);
});

test('lists as of a revision inside the window; events past the window are compacted away', () => {
  const cache = new WatchCache({ maxEvents: 3 });
  cache.reset([], 1);
  const cases: Array<[WatchEvent['type'], string, number]> = [['ADDED', 'a', 2], ['ADDED', 'b', 3], ['MODIFIED', 'a', 4], ['DELETED', 'b', 5]];
  const state = new Map<string, StoredItem>();
  for (const [type, name, revision] of cases) {
    const next = item(name, revision, String(revision));
    const previous = state.get(next.key)?.object;
    if (type === 'DELETED') state.delete(next.key);
    else state.set(next.key, next);
    cache.apply({ type, key: next.key, revision, object: next.object, previous });
  }
  const names = (at?: number) => cache.list('/core/configmaps/', { atRevision: at }).items.map((i) => `${i.key.split('/').pop()}@${i.revision}`);
  assert.deepEqual(names(), ['a@4']);
  assert.deepEqual(names(4), ['a@4', 'b@3']);
  assert.deepEqual(names(3), ['a@2', 'b@3']);
  // Three events kept (3, 4, 5): revision 2 is compacted.
  assert.equal(cache.compactedRevision(), 2);
  assert.throws(() => names(1), /compacted/);
});

test('a writer waiting for its revision is released by an event or by progress', async () => {
  const cache = new WatchCache();
  cache.reset([], 1);
  let released = 0;
  void cache.reached(3).then(() => released++);
  void cache.reached(5).then(() => released++);
  const a = item('a', 3);
  cache.apply({ type: 'ADDED', key: a.key, revision: 3, object: a.object });
  cache.release();
  await new Promise((r) => setImmediate(r));
  assert.equal(released, 1);
  cache.progress(6);
  await new Promise((r) => setImmediate(r));
  assert.equal(released, 2);
});

test('a list of a directory holds exactly the keys under it, through adds, deletes and reloads, as a scan of every key would', () => {
  const cache = new WatchCache();
  const at = (key: string, revision: number): StoredItem => ({ key, revision, object: withRevision({ metadata: { name: key.split('/').pop()! } }, revision) });
  const keys = ['/core/configmaps/default/a', '/core/configmaps/default/b', '/core/configmaps/kube-system/c', '/core/configmapsx/default/d', '/core/secrets/default/a', '/apps/deployments/default/a'];
  cache.reset(keys.slice(0, 3).map((k, i) => at(k, i + 1)), 3);
  let revision = 3;
  for (const k of keys.slice(3)) cache.apply({ type: 'ADDED', key: k, revision: ++revision, object: at(k, revision).object });
  cache.apply({ type: 'DELETED', key: keys[1], revision: ++revision, object: at(keys[1], revision).object, previous: at(keys[1], 2).object });
  // Deleting a key the cache does not hold changes nothing.
  cache.apply({ type: 'DELETED', key: '/core/configmaps/default/never', revision: ++revision, object: at('/core/configmaps/default/never', revision).object });
  const names = (prefix: string, startAfter?: string) => cache.list(prefix, { startAfter }).items.map((i) => i.key);
  const held = keys.filter((k) => k !== keys[1]);
  for (const prefix of ['/', '/core/', '/core/configmaps/', '/core/configmaps/default/', '/core/configmaps', '/core/configmapsx/', '/core/none/', '/apps/deployments/default/a']) {
    assert.deepEqual(names(prefix), held.filter((k) => k.startsWith(prefix) && k > prefix).sort(), prefix);
  }
  assert.deepEqual(names('/core/configmaps/', '/core/configmaps/default/a'), ['/core/configmaps/kube-system/c'], 'after a key');
  cache.reset([at('/core/secrets/default/z', revision + 1)], revision + 1);
  assert.deepEqual(names('/core/configmaps/'), [], 'a reload drops what it does not hold');
  assert.deepEqual(names('/core/'), ['/core/secrets/default/z']);
});
