// Moves a stopped API server's SQLite store (sqlite.ts) into etcd, in the layout the etcd backend
// reads (etcd-layout.ts: kube-apiserver's keys, the object as JSON without resourceVersion).
//
// resourceVersions: etcd numbers every write itself, so an object's resourceVersion becomes the
// revision of its put, as in any etcd restore or migration kube-apiserver goes through. What kube
// clients rely on is kept: the objects are the same (uid, creationTimestamp, generation,
// managedFields unchanged); they are put one transaction each in the order of their SQLite
// revisions, so a newer object still has the larger resourceVersion; and no resourceVersion a
// client got from the SQLite server can be mistaken for one of etcd's — etcd's revision is moved
// past the SQLite store's (writes of one bookkeeping key outside the prefix, which also records
// the migration) and etcd is compacted there, so a watch or list from an old resourceVersion gets
// 410 Gone (Expired) and the client relists, as client-go's reflector does.
//
// Refused when etcd already holds anything under the prefix: a migration never merges two stores.
// The SQLite store is only read; it stays as it was, a copy to go back to.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { BosunError } from '../../common/errors.js';
import { etcdClient, prefixEnd, type EtcdStorageOptions } from './etcd-client.js';
import { etcdPath } from './etcd-layout.js';
import { encode } from './etcd.js';
import type { KubeObject } from './types.js';
import { kvHoldsValues } from './sqlite.js';

export class MigrationError extends BosunError {}

export interface MigrationResult {
  objects: number;
  /** The SQLite store's revision. */
  sqliteRevision: number;
  /** etcd's revision after the migration, where it was compacted: every migrated object's resourceVersion is at or below it. */
  etcdRevision: number;
}

/** Revision bumps in flight at once. */
const CONCURRENCY = 32;

export async function migrateSqliteToEtcd(file: string, options: EtcdStorageOptions, say: (line: string) => void = () => undefined): Promise<MigrationResult> {
  if (!existsSync(file)) throw new MigrationError('NoStore', `${file} does not exist: give the data directory of an API server that keeps its objects in SQLite`);
  const prefix = (options.prefix ?? '/registry').replace(/\/+$/, '');
  // Read-write only so that SQLite may recover a WAL left by a crash; nothing is written.
  const db = new Database(file, { fileMustExist: true });
  const client = etcdClient(options, options.callTimeoutMs ?? 10_000);
  try {
    // Stores of either layout: values in the log that kv points at, or (written before) in kv itself.
    const rows = db
      .prepare(kvHoldsValues(db) ? 'SELECT key, value, revision FROM kv ORDER BY revision' : 'SELECT kv.key AS key, log.value AS value, kv.revision AS revision FROM kv JOIN log ON log.revision = kv.revision ORDER BY kv.revision')
      .all() as { key: string; value: string; revision: number }[];
    const logMax = (db.prepare('SELECT MAX(revision) AS r FROM log').get() as { r: number | null }).r ?? 0;
    const metaMax = (db.prepare("SELECT MAX(value) AS r FROM meta WHERE name IN ('revision', 'compacted')").get() as { r: number | null }).r ?? 0;
    const sqliteRevision = Math.max(logMax, metaMax);
    say(`[1/3] read ${file}: ${rows.length} objects, revision ${sqliteRevision}`);

    const start = Buffer.from(`${prefix}/`);
    let existing;
    try {
      existing = await client.kv.range({ key: start, range_end: prefixEnd(start), count_only: true });
    } catch (e) {
      throw new MigrationError('EtcdUnreachable', `cannot reach etcd at ${options.endpoints.join(',')}: ${(e as Error).message}`);
    }
    if (Number(existing.count) > 0) {
      throw new MigrationError('EtcdNotEmpty', `etcd already holds ${existing.count} keys under ${prefix}/: migrate into an empty prefix (--etcd-prefix) or an empty etcd`);
    }

    say(`[2/3] writing the objects to etcd under ${prefix}/ (oldest first)`);
    let step = Math.max(1, Math.ceil(rows.length / 10));
    for (const [i, row] of rows.entries()) {
      const key = Buffer.from(prefix + etcdPath(row.key));
      const response = await client.kv.txn({
        compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key, value: encode(JSON.parse(row.value) as KubeObject) } }],
      });
      if (!response.succeeded) throw new MigrationError('EtcdNotEmpty', `${key.toString()} appeared in etcd during the migration: is another API server writing there?`);
      if ((i + 1) % step === 0 || i + 1 === rows.length) say(`      ${i + 1}/${rows.length} objects`);
    }

    // Past every resourceVersion the SQLite server handed out (see the header).
    const marker = Buffer.from(`${prefix}_migration`);
    const record = (): Buffer => Buffer.from(JSON.stringify({ from: 'sqlite', file, sqliteRevision, objects: rows.length, at: new Date().toISOString() }));
    let revision = Number((await client.kv.put({ key: marker, value: record() })).header.revision);
    const bumps = Math.max(0, sqliteRevision + 1 - revision);
    say(`[3/3] moving etcd's revision past the SQLite store's (${bumps} writes of ${marker.toString()}) and compacting there`);
    let done = 0;
    step = Math.max(1, Math.ceil(bumps / 4));
    const bumper = async () => {
      while (done < bumps) {
        done++;
        if (done % step === 0) say(`      ${done}/${bumps}`);
        await client.kv.put({ key: marker, value: record() });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, bumper));
    revision = Number((await client.kv.put({ key: marker, value: record() })).header.revision);
    await client.kv.compact({ revision, physical: true });
    return { objects: rows.length, sqliteRevision, etcdRevision: revision };
  } finally {
    db.close();
    client.close();
  }
}
