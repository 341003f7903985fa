// The backup file's format: bosun's own, one gzip stream (Node's zlib) holding
//
//   line 1   the manifest, JSON: {"format":"bosun-backup","version":1,"createdAt":…,
//            "storage":"sqlite"|"etcd","revision":N,"objects":N,"files":[{"path","mode","size","sha256"}, …]}
//   then     each file's bytes, in the manifest's order, back to back (sizes from the manifest)
//
// No tar: bosun has no tar library among its dependencies, and a manifest with sizes and digests
// is all a restore needs. gzip's CRC catches a damaged stream; each file's SHA-256 catches a
// manifest that does not match its contents. Paths are relative to the data directory, use "/",
// and may not leave it (no "..", no absolute paths), so a crafted file cannot write elsewhere.
// A restore reads the whole file into memory to verify it before changing anything: a backup holds
// a cluster's state, not its machines' disks (tens of MiB for an installed cluster).
import { createHash } from 'node:crypto';
import { closeSync, constants, createReadStream, createWriteStream, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip, gunzipSync } from 'node:zlib';
import { BosunError } from '../../common/errors.js';

export const BACKUP_FORMAT = 'bosun-backup';
export const BACKUP_VERSION = 1;

export interface BackupFile {
  /** Relative to the data directory, "/"-separated. */
  path: string;
  mode: number;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  createdAt: string;
  /** Where the API server's objects were: its SQLite store (state.db), or etcd (etcd/snapshot.db). */
  storage: 'sqlite' | 'etcd';
  /** The API store's revision in the backup: the newest resourceVersion it holds. */
  revision: number;
  /** The API store's objects (etcd: keys under /registry), for `bosun restore` to report. */
  objects: number;
  files: BackupFile[];
}

export class BackupError extends BosunError {}

/** A file to put in the archive: its place in the data directory and where its bytes are now. */
export interface ArchiveEntry {
  path: string;
  mode: number;
  source: string;
}

function digest(file: string): { size: number; sha256: string } {
  const bytes = readFileSync(file);
  return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** A path safe to join to a data directory. */
export function checkPath(path: string): void {
  if (path === '' || path.startsWith('/') || path.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new BackupError('BackupCorrupt', `the backup names a file outside the data directory ("${path}"): it is damaged or not a bosun backup`);
  }
}

/**
 * Writes the archive to `to` (mode 0600; written beside it and renamed, so a failed backup leaves
 * no partial file under the name). Refuses to replace an existing file.
 */
export async function writeArchive(to: string, manifest: Omit<BackupManifest, 'files'>, entries: ArchiveEntry[]): Promise<BackupManifest> {
  const files = entries.map((e) => { checkPath(e.path); return { path: e.path, mode: e.mode & 0o7777, ...digest(e.source) }; });
  const full: BackupManifest = { ...manifest, files };
  try {
    closeSync(openSync(to, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupError('BackupExists', `${to} already exists; give another --to or remove it`);
    throw new BackupError('BackupUnwritable', `cannot write ${to}: ${(e as Error).message}`);
  }
  const partial = `${to}.partial`;
  async function* body() {
    yield Buffer.from(JSON.stringify(full) + '\n');
    for (const entry of entries) for await (const chunk of createReadStream(entry.source)) yield chunk as Buffer;
  }
  try {
    await pipeline(Readable.from(body()), createGzip(), createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
    renameSync(partial, to);
  } catch (e) {
    rmSync(partial, { force: true });
    rmSync(to, { force: true });
    throw e;
  }
  return full;
}

function isManifest(value: unknown): value is BackupManifest {
  const m = value as BackupManifest;
  return typeof m === 'object' && m !== null && m.format === BACKUP_FORMAT && Array.isArray(m.files)
    && m.files.every((f) => typeof f?.path === 'string' && Number.isInteger(f.size) && f.size >= 0 && typeof f.sha256 === 'string' && Number.isInteger(f.mode));
}

/** Reads and verifies a whole archive: its manifest and each file's bytes, checked against their digests. */
export function readArchive(file: string): { manifest: BackupManifest; contents: Map<string, Buffer> } {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new BackupError('BackupUnreadable', code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${(e as Error).message}`);
  }
  let data: Buffer;
  try {
    data = gunzipSync(raw);
  } catch (e) {
    throw new BackupError('BackupCorrupt', `${file} is not a bosun backup or is damaged (${(e as Error).message})`);
  }
  const newline = data.indexOf(0x0a);
  let manifest: unknown;
  try {
    manifest = JSON.parse(data.subarray(0, newline < 0 ? data.length : newline).toString('utf8'));
  } catch {
    throw new BackupError('BackupCorrupt', `${file} is not a bosun backup: it has no manifest`);
  }
  if (!isManifest(manifest)) throw new BackupError('BackupCorrupt', `${file} is not a bosun backup: its manifest is not one`);
  if (manifest.version !== BACKUP_VERSION) throw new BackupError('BackupVersion', `${file} is a bosun backup of format version ${String(manifest.version)}; this bosun reads version ${BACKUP_VERSION}`);
  const contents = new Map<string, Buffer>();
  let offset = newline + 1;
  for (const f of manifest.files) {
    checkPath(f.path);
    const bytes = data.subarray(offset, offset + f.size);
    offset += f.size;
    if (bytes.length !== f.size || createHash('sha256').update(bytes).digest('hex') !== f.sha256) {
      throw new BackupError('BackupCorrupt', `${file} is damaged: ${f.path} does not match its digest`);
    }
    contents.set(f.path, bytes);
  }
  if (offset !== data.length) throw new BackupError('BackupCorrupt', `${file} is damaged: ${data.length - offset} bytes follow the last file`);
  return { manifest, contents };
}
