// `bosun backup`: a consistent copy of a cluster's state, taken while it runs.
//
// What it holds: the API server's store — DIR/state.db copied with SQLite's online backup API
// (better-sqlite3's db.backup()) through a connection of its own, so the copy is the database as
// of one committed transaction, WAL included, while the server keeps writing; or, for a cluster
// started with --etcd (DIR/etcd), an etcd snapshot (the Maintenance API's Snapshot, from one
// member: the whole keyspace at one revision) — the local cloud's store (DIR/cloud/state.db, online
// backup too), and every other file of the data directory: the certificates and keys (pki/, the
// second API server's apiserver-1/pki, etcd's etcd/pki), etcd's member layout, the kubeconfig, the
// releases and their signing key, the installed marker.
//
// What it leaves out: the machines' disks (DIR/machines: each machine's root is its filesystem,
// changing under running processes; a restore into the cluster's own directory keeps them), the
// stores' -wal/-shm (inside the online copies), etcd's member data directories (inside the
// snapshot), the pid files, the cloud's endpoint file and the audit logs (a record of requests,
// not state).
import Database from 'better-sqlite3';
import { createWriteStream, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { etcdClient } from '../../apiserver/storage/etcd-client.js';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { BACKUP_FORMAT, BACKUP_VERSION, BackupError, writeArchive, type ArchiveEntry, type BackupManifest } from './archive.js';

/** The stores, by their path in the data directory. */
export const API_STORE = 'state.db';
export const CLOUD_STORE = 'cloud/state.db';

export const ETCD_SNAPSHOT = 'etcd/snapshot.db';
export const ETCD_MEMBERS = 'etcd/members.json';

/** Paths in the data directory that are not the cluster's state (see the header). */
const LEFT_OUT = new Set(['machines', 'bosun.pid', 'cloud/endpoint.json']);
const LEFT_OUT_PATTERN = /(^|\/)audit\.log$|^etcd\/etcd-\d+(\.pid)?$/;
/** Pages the online backup copies per step (4 KiB each). */
const STEP_PAGES = 4096;
const STORE_COMPANION = /\.db-(wal|shm|journal)$/;

export interface BackupOptions {
  dataDir: string;
  to: string;
  /** One line per step, as it happens. */
  progress?: (line: string) => void;
}

/** The API store's revision and object count, read from a copy (sqlite.ts's tables). */
function describeApiStore(file: string): { revision: number; objects: number } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError('BackupCorrupt', `the copy of the API store failed SQLite's check: ${String(check)}`);
    const max = (db.prepare('SELECT MAX(revision) AS r FROM log').get() as { r: number | null }).r ?? 0;
    const meta = db.prepare("SELECT MAX(value) AS r FROM meta WHERE name IN ('revision', 'compacted')").get() as { r: number | null };
    const objects = (db.prepare('SELECT COUNT(*) AS n FROM kv').get() as { n: number }).n;
    return { revision: Math.max(max, meta.r ?? 0), objects };
  } finally {
    db.close();
  }
}

/** Copies a live SQLite database with the online backup API, reporting its progress. */
async function copyStore(source: string, target: string, name: string, say: (line: string) => void): Promise<void> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    let reported = 0;
    const { totalPages } = await db.backup(target, {
      progress: ({ totalPages, remainingPages }) => {
        const percent = Math.floor(((totalPages - remainingPages) / totalPages) * 100);
        if (percent >= reported + 10 && remainingPages > 0) {
          reported = percent;
          say(`      ${name}: ${percent}% of ${totalPages} pages`);
        }
        // Pages per step: a writer on another connection restarts the copy between steps, so
        // large steps let it finish under a steady stream of writes.
        return STEP_PAGES;
      },
    });
    say(`      ${name}: ${totalPages} pages copied`);
  } finally {
    db.close();
  }
}

/** The data directory's other files (see the header), as archive entries. */
function stateFiles(dataDir: string, exclude: string): ArchiveEntry[] {
  const entries: ArchiveEntry[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      const path = relative(dataDir, full).split(sep).join('/');
      if (LEFT_OUT.has(path) || LEFT_OUT_PATTERN.test(path) || path === API_STORE || path === CLOUD_STORE || path === ETCD_SNAPSHOT || STORE_COMPANION.test(path) || full === exclude || full === `${exclude}.partial`) continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) entries.push({ path, mode: lstatSync(full).mode, source: full });
    }
  };
  walk(dataDir);
  return entries;
}

/** The etcd cluster of `bosun start --etcd` (etcd-cluster.ts: members.json, pki/), as a client reaches it. */
function etcdOf(dataDir: string) {
  const members = JSON.parse(readFileSync(join(dataDir, ETCD_MEMBERS), 'utf8')) as Array<{ name: string; clientUrl: string; peerUrl: string }>;
  const pki = join(dataDir, 'etcd', 'pki');
  const tls = existsSync(join(pki, 'ca.crt')) ? { caFile: join(pki, 'ca.crt'), certFile: join(pki, 'client.crt'), keyFile: join(pki, 'client.key') } : {};
  return { endpoints: members.map((m) => m.clientUrl), ...tls };
}

/** Streams an etcd snapshot into `target`; the revision it was taken at and its object count. */
async function snapshotEtcd(dataDir: string, target: string, say: (line: string) => void): Promise<{ revision: number; objects: number }> {
  const options = etcdOf(dataDir);
  const client = etcdClient(options, 10_000);
  try {
    let counted;
    try {
      counted = await client.kv.range({ key: Buffer.from('/registry/'), range_end: Buffer.from('/registry0'), count_only: true });
    } catch (e) {
      throw new BackupError('EtcdUnreachable', `cannot reach the cluster's etcd at ${options.endpoints.join(',')}: ${(e as Error).message}; bosun backup copies a running cluster's etcd`);
    }
    const stream = await client.maintenance.snapshot();
    const out = createWriteStream(target, { mode: 0o600 });
    let revision = 0;
    let written = 0;
    let reported = 0;
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk) => {
        // etcd 3.4 sends no header with the chunks; the revision counted just before stands in.
        if (revision === 0 && chunk.header) revision = Number(chunk.header.revision);
        out.write(chunk.blob);
        written += chunk.blob.length;
        if (written - reported >= 16 * 1024 * 1024) {
          reported = written;
          say(`      ${Math.round(written / 1024 / 1024)} MiB, ${Math.round(Number(chunk.remaining_bytes) / 1024 / 1024)} MiB to go`);
        }
      });
      stream.on('error', reject);
      stream.on('end', () => out.end(() => resolve()));
    });
    say(`      ${ETCD_SNAPSHOT}: ${written} bytes`);
    return { revision: revision || Number(counted.header.revision), objects: Number(counted.count) };
  } finally {
    client.close();
  }
}

export async function takeBackup(options: BackupOptions): Promise<BackupManifest> {
  const dataDir = resolve(options.dataDir);
  const to = resolve(options.to);
  const say = options.progress ?? (() => undefined);
  if (!existsSync(dataDir)) throw new BackupError('NoDataDir', `${options.dataDir} does not exist: give the data directory of a cluster (--data-dir)`);
  const onEtcd = existsSync(join(dataDir, ETCD_MEMBERS));
  if (!onEtcd && !existsSync(join(dataDir, API_STORE))) {
    throw new BackupError('NoApiStore', `${options.dataDir} has no API server store (${API_STORE}, or etcd/ of a cluster started with --etcd): it is not a bosun data directory`);
  }
  const work = mkdtempSync(join(tmpdir(), 'bosun-backup-'));
  try {
    const stores: ArchiveEntry[] = [];
    let api: { revision: number; objects: number };
    if (onEtcd) {
      say(`[1/3] taking a snapshot of the cluster's etcd (${ETCD_SNAPSHOT})`);
      api = await snapshotEtcd(dataDir, join(work, 'etcd.db'), say);
      stores.push({ path: ETCD_SNAPSHOT, mode: 0o600, source: join(work, 'etcd.db') });
    } else {
      say(`[1/3] copying the API server's store (${API_STORE}) with SQLite's online backup`);
      await copyStore(join(dataDir, API_STORE), join(work, 'api.db'), API_STORE, say);
      api = describeApiStore(join(work, 'api.db'));
      stores.push({ path: API_STORE, mode: 0o600, source: join(work, 'api.db') });
    }
    say(`      revision ${api.revision}, ${api.objects} ${onEtcd ? 'keys' : 'objects'}`);
    if (existsSync(join(dataDir, CLOUD_STORE))) {
      say(`[2/3] copying the local cloud's store (${CLOUD_STORE})`);
      await copyStore(join(dataDir, CLOUD_STORE), join(work, 'cloud.db'), CLOUD_STORE, say);
      stores.push({ path: CLOUD_STORE, mode: 0o600, source: join(work, 'cloud.db') });
    } else {
      say('[2/3] no local cloud store (a cluster without machines)');
    }
    const files = stateFiles(dataDir, to);
    say(`[3/3] writing ${options.to}: the stores and ${files.length} files (keys, certificates, kubeconfig, releases)`);
    return await writeArchive(to, { format: BACKUP_FORMAT, version: BACKUP_VERSION, createdAt: new Date().toISOString(), storage: onEtcd ? 'etcd' : 'sqlite', ...api }, [...stores, ...files]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
