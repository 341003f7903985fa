// `bosun backup`: a consistent copy of a cluster's state, taken while it runs.
//
// What it holds: the API server's store (DIR/state.db) and the local cloud's (DIR/cloud/state.db),
// each copied with SQLite's online backup API (better-sqlite3's db.backup()) through a connection
// of its own — the copy is the database as of one committed transaction, WAL included, while the
// servers keep writing — and every other file of the data directory: the certificates and keys
// (pki/, the second API server's apiserver-1/pki), the kubeconfig, the releases and their signing
// key, the installed marker.
//
// What it leaves out: the machines' disks (DIR/machines: each machine's root is its filesystem,
// changing under running processes; a restore into the cluster's own directory keeps them), the
// stores' -wal/-shm (inside the online copies), the pid file, the cloud's endpoint file and the
// audit log (a record of requests, not state).
import Database from 'better-sqlite3';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { BACKUP_FORMAT, BACKUP_VERSION, BackupError, writeArchive, type ArchiveEntry, type BackupManifest } from './archive.js';

/** The stores, by their path in the data directory. */
export const API_STORE = 'state.db';
export const CLOUD_STORE = 'cloud/state.db';

/** Paths in the data directory that are not the cluster's state (see the header). */
const LEFT_OUT = new Set(['machines', 'bosun.pid', 'audit.log', 'cloud/endpoint.json', 'etcd']);
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
      if (LEFT_OUT.has(path) || path === API_STORE || path === CLOUD_STORE || STORE_COMPANION.test(path) || full === exclude || full === `${exclude}.partial`) continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) entries.push({ path, mode: lstatSync(full).mode, source: full });
    }
  };
  walk(dataDir);
  return entries;
}

export async function takeBackup(options: BackupOptions): Promise<BackupManifest> {
  const dataDir = resolve(options.dataDir);
  const to = resolve(options.to);
  const say = options.progress ?? (() => undefined);
  if (!existsSync(dataDir)) throw new BackupError('NoDataDir', `${options.dataDir} does not exist: give the data directory of a cluster (--data-dir)`);
  if (!existsSync(join(dataDir, API_STORE))) {
    const etcd = existsSync(join(dataDir, 'etcd'));
    throw new BackupError('NoApiStore', etcd
      ? `${options.dataDir} keeps its API state in etcd (${join(options.dataDir, 'etcd')}); bosun backup copies SQLite stores only — take an etcd snapshot (etcdctl snapshot save) instead`
      : `${options.dataDir} has no API server store (${API_STORE}): it is not a bosun data directory`);
  }
  const work = mkdtempSync(join(tmpdir(), 'bosun-backup-'));
  try {
    const stores: ArchiveEntry[] = [];
    say(`[1/3] copying the API server's store (${API_STORE}) with SQLite's online backup`);
    await copyStore(join(dataDir, API_STORE), join(work, 'api.db'), API_STORE, say);
    const api = describeApiStore(join(work, 'api.db'));
    say(`      revision ${api.revision}, ${api.objects} objects`);
    stores.push({ path: API_STORE, mode: 0o600, source: join(work, 'api.db') });
    if (existsSync(join(dataDir, CLOUD_STORE))) {
      say(`[2/3] copying the local cloud's store (${CLOUD_STORE})`);
      await copyStore(join(dataDir, CLOUD_STORE), join(work, 'cloud.db'), CLOUD_STORE, say);
      stores.push({ path: CLOUD_STORE, mode: 0o600, source: join(work, 'cloud.db') });
    } else {
      say('[2/3] no local cloud store (a cluster without machines)');
    }
    const files = stateFiles(dataDir, to);
    say(`[3/3] writing ${options.to}: the stores and ${files.length} files (keys, certificates, kubeconfig, releases)`);
    return await writeArchive(to, { format: BACKUP_FORMAT, version: BACKUP_VERSION, createdAt: new Date().toISOString(), storage: 'sqlite', ...api }, [...stores, ...files]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
