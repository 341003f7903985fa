// Least privilege on disk. A cluster's data directory holds every Secret (the API server's store
// and its WAL), private keys, tokens, kubeconfigs and the machines' credentials, so it belongs to
// the user running bosun alone, as etcd keeps its data directory 0700: directories 0700, stores
// and keys 0600.
//
// Created so from the start, never chmod-ed after a window: the bosun command runs under umask 077
// (`usePrivateUmask`, for every file its components and their children create), and the stores and
// keys are created with their mode at open (`ensurePrivateFile`, `ensurePrivateDir`) for callers
// that run them in-process under another umask. SQLite creates a database's -wal and -shm with the
// database file's own mode, so a store created 0600 keeps its WAL 0600 too.
//
// Checked at start: a store, key or directory that group or other users may read (a data
// directory written by an older bosun, a copy made with cp) is tightened with a log line saying
// what changed. Where tightening is not safe — a symbolic link (chmod would change the file it
// points to, wherever that is) or a file another user owns (they could reopen it whatever its
// mode) — the start is refused with a PrivateFileError saying what to do.
//
// Machine roots (DIR/machines/<id>) are the machines' filesystems: their modes are part of each
// machine's configuration (Ignition and the machine-config daemon set and verify them), so the
// data-directory walk leaves them as they are; the 0700 directory above them keeps other users out.
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, chmodSync, constants } from 'node:fs';
import { join, relative } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { BosunError } from './errors.js';
import { logger } from './log.js';

const log = logger('data-dir');

/** The umask of every bosun process: nothing it creates is open to group or other users. */
export const PRIVATE_UMASK = 0o077;
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Directories whose contents the data-directory walk leaves alone (see the header). */
const MACHINE_ROOTS = 'machines';

export class PrivateFileError extends BosunError {
  constructor(message: string) {
    super('UnsafePermissions', message);
  }
}

/** Sets this process's umask (inherited by every child it starts) to PRIVATE_UMASK. A thread
 *  cannot set it (node refuses): a component run as one (a node agent's) has its process's, the
 *  bosun command's, already private. */
export function usePrivateUmask(): void {
  if (!isMainThread) return;
  process.umask(PRIVATE_UMASK);
}

const octal = (mode: number): string => `0${(mode & 0o7777).toString(8)}`;

/**
 * Group and other bits that make a directory or file open: any of them on a file; read or write on
 * a directory, which is then closed entirely (0700). A directory with only search (x) bits is left
 * so: an administrator who lets machine users reach their roots (the Ignition binary writes ssh
 * keys as them) opens only that (0711), and nobody can list it or read a 0600 file in it.
 */
const openBits = (isDirectory: boolean): number => (isDirectory ? 0o066 : 0o077);

/**
 * Makes `path` (a file or directory that exists) private to this user: refuses a symlink or a
 * file another user owns; drops group/other bits it has with a log line. Returns whether it changed.
 */
export function tighten(path: string, what = 'file'): boolean {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) {
    throw new PrivateFileError(`${path} is a symbolic link: bosun keeps its ${what} as a plain file in the data directory and will not change the mode of whatever it points to; replace it with the file itself`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new PrivateFileError(`${path} belongs to uid ${stat.uid}, not to this user (uid ${uid}): another user could open the ${what} whatever its mode; chown it to this user (or start bosun as uid ${stat.uid})`);
  }
  if ((stat.mode & openBits(stat.isDirectory())) === 0) return false;
  const mode = stat.mode & 0o700;
  chmodSync(path, mode);
  log.warn({ path, was: octal(stat.mode), now: octal(mode) }, `${path} was open to other users (mode ${octal(stat.mode)}): changed it to ${octal(mode)}`);
  return true;
}

/** Creates `dir` (and missing parents) 0700, or tightens it when it exists. */
export function ensurePrivateDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, 'directory');
}

/**
 * Creates `file` empty with mode 0600 when it does not exist (so whatever opens it next — SQLite —
 * finds it private from its first byte), or tightens it when it does.
 */
export function ensurePrivateFile(file: string, what = 'file'): void {
  try {
    closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, PRIVATE_FILE_MODE));
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  tighten(file, what);
}

/**
 * An SQLite store about to be opened: its directory private, the database file created 0600 (its
 * WAL and SHM follow its mode), and an existing database, WAL or SHM tightened.
 */
export function ensurePrivateStore(file: string, parentDir: string): void {
  ensurePrivateDir(parentDir);
  ensurePrivateFile(file, 'store');
  for (const companion of [`${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (existsSync(companion)) tighten(companion, 'store');
  }
}

/**
 * The start check of a whole data directory: the directory itself and everything in it but the
 * machine roots tightened (open directories to 0700, files to their owner's bits). Returns the
 * paths it changed, relative to `dir`.
 */
export function secureDataDir(dir: string): string[] {
  const changed: string[] = [];
  ensurePrivateDir(dir);
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory() && current === dir && entry.name === MACHINE_ROOTS) {
        if (tighten(path, 'directory')) changed.push(MACHINE_ROOTS);
        continue;
      }
      if (tighten(path, entry.isDirectory() ? 'directory' : 'file')) changed.push(relative(dir, path));
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(dir);
  if (changed.length > 0) log.warn({ dataDir: dir, changed: changed.length }, `tightened ${changed.length} path${changed.length === 1 ? '' : 's'} under ${dir} that other users could read`);
  return changed;
}
