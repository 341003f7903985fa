// Moves a store written in the etcd layout bosun used before kube-apiserver's (each object at the
// prefix followed by its storage key, `/registry/core/namespaces//default`) to kube's layout
// (etcd-layout.ts), when a server starts on it.
//
// Each object moves in its own transaction (one revision per object: the watch cache takes one
// event per revision), several at once, that puts its new key and deletes its old one, conditioned
// on the old key being at the revision read and the new key not existing, so several servers
// starting at once on one store move each object once (a server whose transaction loses reads
// again). An object keeps its content (uid, creationTimestamp, generation, managedFields); its
// resourceVersion, which is etcd's mod revision of its key, becomes the revision of its move,
// since etcd gives every write a new revision. Objects whose key is the same in both layouts
// (namespaced custom resources) are not touched and keep theirs. A watch from before the move
// sees each moved object as MODIFIED (etcd.ts onEvents): the new key is put before the old one is
// deleted, both at one revision.
import type { Etcd3 } from 'etcd3';
import { logger } from '../../common/log.js';
import { rangePages } from './etcd-client.js';
import { etcdPath, isBookkeeping, legacyStorageKey, storageKeyOf } from './etcd-layout.js';

const log = logger('etcd-storage');
/** Moves in flight at once. */
const CONCURRENCY = 16;
/** Rounds of reading and moving before giving up on a store that keeps changing under old keys. */
const ROUNDS = 5;

interface Move {
  from: Buffer;
  to: Buffer;
  value: Buffer;
  revision: string;
}

/** Moves every object under `prefix` kept at an old-layout key; returns how many it moved. */
export async function moveToKubeLayout(client: Etcd3, prefix: string, options: { pageSize: number; timeoutMs: number }): Promise<number> {
  let moved = 0;
  for (let round = 1; ; round++) {
    const moves = await legacyKeys(client, prefix, options);
    if (moves.length === 0) break;
    if (round > ROUNDS) throw new Error(`could not move ${moves.length} objects to kube-apiserver's etcd key layout: their keys kept changing`);
    let next = 0;
    const mover = async () => {
      for (let move = moves[next++]; move; move = moves[next++]) if (await moveOne(client, move)) moved++;
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, mover));
  }
  if (moved > 0) log.info({ moved, prefix }, "moved the store's objects to kube-apiserver's etcd key layout");
  return moved;
}

/** Moves one object unless either key changed since it was read; whether it did. */
async function moveOne(client: Etcd3, { from, to, value, revision }: Move): Promise<boolean> {
  const response = await client.kv.txn({
    compare: [
      { key: from, target: 'Mod', result: 'Equal', mod_revision: revision },
      { key: to, target: 'Create', result: 'Equal', create_revision: 0 },
    ],
    // The new key before the old one: the watch delivers them in this order, at one revision.
    success: [{ request_put: { key: to, value } }, { request_delete_range: { key: from } }],
  });
  return response.succeeded;
}

/** The objects kept at old-layout keys now, with the keys they move to. */
async function legacyKeys(client: Etcd3, prefix: string, options: { pageSize: number; timeoutMs: number }): Promise<Move[]> {
  const moves: Move[] = [];
  for await (const page of rangePages(client, Buffer.from(prefix + '/'), 0, options.pageSize, options.timeoutMs)) {
    for (const kv of page.kvs) {
      const path = kv.key.toString().slice(prefix.length);
      if (isBookkeeping(path) || storageKeyOf(path) !== undefined) continue;
      const legacy = legacyStorageKey(path);
      if (legacy !== undefined) moves.push({ from: kv.key, to: Buffer.from(prefix + etcdPath(legacy)), value: kv.value, revision: kv.mod_revision });
    }
  }
  return moves;
}
