// The floor the API server's storage is compared with: plain better-sqlite3 inserts with the same
// durability settings (WAL, synchronous=FULL), one transaction per insert and batched.
import Database from 'better-sqlite3';
import { join } from 'node:path';

export interface RawSqliteResult {
  perInsertPerSecond: number;
  /** CPU time per insert, one per transaction (the rest of each insert's time is the fsync). */
  perInsertCpuMicros: number;
  batchedPerSecond: number;
}

/** `name`: the database file in `dir`, a fresh one for each measurement (the table is created anew). */
export function rawSqliteInserts(dir: string, count: number, batchSize = 16, name = 'raw.db'): RawSqliteResult {
  const db = new Database(join(dir, name));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO kv (key, value) VALUES (?, ?)');
  const value = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { k: 'v' } });
  let start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) insert.run(`/single/${i}`, value);
  const single = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const batch = db.transaction((from: number) => {
    for (let i = from; i < from + batchSize; i++) insert.run(`/batch/${i}`, value);
  });
  start = process.hrtime.bigint();
  for (let i = 0; i < count; i += batchSize) batch(i);
  const batched = Number(process.hrtime.bigint() - start) / 1e9;
  db.close();
  return { perInsertPerSecond: count / single, perInsertCpuMicros: (used.user + used.system) / count, batchedPerSecond: count / batched };
}
