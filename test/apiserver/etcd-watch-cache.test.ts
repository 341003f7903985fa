// The etcd storage's watch cache against a real etcd, under two faults of the kind that left one
// API server of an HA cluster with a stale copy of a pod for good (every eviction of it refused as a
// conflict, a drain stuck, an upgrade that never ended): a progress answer ahead of the events the
// watch has yet to deliver (etcd before 3.4.25 / 3.5.8 sends one: etcd-io/etcd#15220), and an
// event lost from the cache however it came about. Faults are injected into the storage object
// (a fake progress answer on its stream; the cache moved on past an event); etcd, its watch and
// the writes are real.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openEtcdStorage, type EtcdStorage } from '../../src/apiserver/storage/etcd.js';
import type { KubeObject, WatchEvent } from '../../src/apiserver/storage/types.js';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutEtcd, startTestEtcd, type TestEtcd } from '../helpers/etcd.js';

let etcd: TestEtcd | undefined;
before(async () => {
  if (!skipWithoutEtcd) etcd = await startTestEtcd({ members: 1 });
});
after(async () => {
  await etcd?.stop();
});

const configMap = (name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `uid-${name}` }, data: { k: value } } as KubeObject);

/** Opens a store under its own prefix; no progress requests of its own (the test sends the one it means). */
async function open(prefix: string): Promise<EtcdStorage> {
  return openEtcdStorage({ endpoints: etcd!.cluster.client.endpoints, prefix, progressIntervalMs: 3_600_000 });
}

/** Writes the ConfigMap's new value straight into etcd, as another API server would; returns its revision. */
async function putBehindItsBack(prefix: string, name: string, value: string): Promise<number> {
  const raw = etcd!.cluster.connect();
  try {
    const { metadata: { resourceVersion: _rv, ...metadata }, ...rest } = configMap(name, value);
    const response = await raw.kv.put({ key: Buffer.from(`${prefix}/configmaps/default/${name}`), value: Buffer.from(JSON.stringify({ ...rest, metadata })) });
    return Number(response.header.revision);
  } finally {
    raw.close();
  }
}

async function etcdRevision(): Promise<number> {
  const raw = etcd!.cluster.connect();
  try {
    return Number((await raw.kv.range({ key: Buffer.from('/nothing') })).header.revision);
  } finally {
    raw.close();
  }
}

test('a progress answer ahead of the events still to come does not make the cache skip them', { skip: skipWithoutEtcd, timeout: 30_000 }, async () => {
  const prefix = '/progress-ahead';
  const s = await open(prefix);
  try {
    const key = '/core/configmaps/default/cm';
    await s.create(key, configMap('cm', 'a'));
    // etcd answers a progress request with its revision after the next write, before that write's event.
    const next = (await etcdRevision()) + 1;
    (s as unknown as { stream: NodeJS.EventEmitter }).stream.emit('data', { header: { revision: String(next) }, events: [], created: false, canceled: false, compact_revision: '0' });
    const written = await putBehindItsBack(prefix, 'cm', 'b');
    const seen = await eventually('the cache to show the write made behind its back', () => {
      const item = s.get(key);
      return item && item.revision >= written && item;
    }, 10_000);
    assert.equal((seen.object as { data?: { k?: string } }).data?.k, 'b');
    // And the cache goes on following etcd.
    const later = await putBehindItsBack(prefix, 'cm', 'c');
    await eventually('the next write to show too', () => s.get(key)?.revision === later, 10_000);
  } finally {
    await s.close();
  }
});

test('a key whose change the cache missed is reloaded when a write to it is refused, and its watchers told', { skip: skipWithoutEtcd, timeout: 30_000 }, async () => {
  const prefix = '/missed-event';
  const s = await open(prefix);
  const events: WatchEvent[] = [];
  try {
    const key = '/core/configmaps/default/cm';
    const created = await s.create(key, configMap('cm', 'a'));
    const watcher = s.watch('/core/configmaps/', created.revision, (e) => events.push(e));
    // The cache moves past the next revision before its event comes: that event is lost to it.
    const next = (await etcdRevision()) + 1;
    (s as unknown as { cache: { progress(r: number): void } }).cache.progress(next);
    const written = await putBehindItsBack(prefix, 'cm', 'b');
    assert.equal(written, next);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(s.get(key)?.revision, created.revision, 'the fault took: the cache still holds the old copy');

    // A write on the cache's copy is refused (etcd has moved on), and that refusal shows the cache
    // is stale: it reloads, so the next read and write go through.
    await assert.rejects(s.update(key, configMap('cm', 'x'), { expectedRevision: created.revision }), (e: Error & { code?: string }) => e.code === 'Conflict');
    const reloaded = await eventually('the cache to reload the key', () => {
      const item = s.get(key);
      return item && item.revision === written && item;
    }, 10_000);
    assert.equal((reloaded.object as { data?: { k?: string } }).data?.k, 'b');
    await eventually('the watcher to be told of the change it missed', () => events.some((e) => e.key === key && e.type === 'MODIFIED' && (e.object as KubeObject & { data?: { k?: string } }).data?.k === 'b'), 10_000);
    const updated = await s.update(key, configMap('cm', 'c'), { expectedRevision: written });
    assert.ok(updated.revision > written);
    watcher.stop();
  } finally {
    await s.close();
  }
});
