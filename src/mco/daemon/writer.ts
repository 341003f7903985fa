// Writes a config change onto a node's disk, as OpenShift's daemon does it:
// - each path atomically (a temporary file beside it, mode and owner set, then renamed over it);
// - before a path the old config did not manage is first written, what was there is kept as
//   /etc/machine-config-daemon/orig/<path>.mcdorig, or a marker
//   /etc/machine-config-daemon/noorig/<path>.mcdnoorig says nothing was; a path the new config no
//   longer manages gets its original back (or is removed), so deleting a MachineConfig restores
//   the node as it was;
// - the core user's ssh keys (~core/.ssh and authorized_keys.d 0700, the key file 0600, all the
//   user's, as the root's /etc/passwd names it: RHCOS's image, and so every local machine, has
//   `core`); the kernel command line (/etc/kernel/cmdline, what the next boot runs with) gains and
//   loses the changed kernel arguments; a changed password is set as `usermod -p` sets it
//   (/etc/shadow), `*` when the config gives none;
// - a failure part-way undoes, newest first, what this write did, and throws.
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BosunError } from '../../common/errors.js';
import { chownIfRoot, inRoot, mkParents } from '../../ignition/apply/root-path.js';
import { lookupUser, resolveOwner, setPasswordHash } from '../../ignition/apply/passwd.js';
import { CORE_USER } from '../controller/validation.js';
import { CMDLINE_FILE } from '../../ignition/apply/kargs-stage.js';
import type { ConfigDiff, PathChange } from './diff.js';
import type { ManagedEntry } from './managed.js';

export const DAEMON_DIR = '/etc/machine-config-daemon';
export const ORIG_DIR = `${DAEMON_DIR}/orig`;
export const NOORIG_DIR = `${DAEMON_DIR}/noorig`;

export class WriteError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('ConfigWriteFailed', message, options);
  }
}

const origOf = (root: string, path: string) => inRoot(root, `${ORIG_DIR}${path}.mcdorig`);
const noorigOf = (root: string, path: string) => inRoot(root, `${NOORIG_DIR}${path}.mcdnoorig`);

function exists(p: string): boolean {
  try { lstatSync(p); return true; } catch { return false; }
}

/** Keeps what is at `path` before the daemon first writes it (once: a later write keeps the first original). */
function backup(root: string, path: string): void {
  const orig = origOf(root, path);
  const noorig = noorigOf(root, path);
  if (exists(orig) || exists(noorig)) return;
  const target = inRoot(root, path);
  if (!exists(target)) {
    mkdirSync(dirname(noorig), { recursive: true, mode: 0o755 });
    writeFileSync(noorig, '');
    return;
  }
  mkdirSync(dirname(orig), { recursive: true, mode: 0o755 });
  const st = lstatSync(target);
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(target), orig);
  else { copyFileSync(target, orig); chmodSync(orig, st.mode & 0o7777); }
}

/** Puts the original back, or removes the path when there was none. */
function restore(root: string, path: string): void {
  const target = inRoot(root, path);
  const orig = origOf(root, path);
  const noorig = noorigOf(root, path);
  if (exists(orig)) {
    mkParents(root, target);
    renameSync(orig, target);
  } else {
    rmSync(target, { force: true });
  }
  rmSync(noorig, { force: true });
}

function place(root: string, e: ManagedEntry): void {
  const target = inRoot(root, e.path);
  if (e.kind === 'absent') { rmSync(target, { force: true }); return; }
  const sshOwner = e.kind === 'file' && e.source === 'sshkey' && e.user ? userIds(root, e.user, e.path) : undefined;
  if (sshOwner) {
    // ~/.ssh and ~/.ssh/authorized_keys.d: 0700, the user's.
    for (const dir of [dirname(dirname(target)), dirname(target)]) {
      mkParents(root, join(dir, 'x'));
      chmodSync(dir, 0o700);
      chownIfRoot(dir, sshOwner.uid, sshOwner.gid);
    }
  }
  mkParents(root, target);
  const tmp = join(dirname(target), `.${basename(target)}.mcdtmp`);
  rmSync(tmp, { force: true });
  if (e.kind === 'link') symlinkSync(e.target, tmp);
  else {
    writeFileSync(tmp, e.data, { mode: e.mode });
    chmodSync(tmp, e.mode);
    const uid = sshOwner?.uid ?? ownerOf(root, e.user, 'user', e.path);
    const gid = sshOwner?.gid ?? ownerOf(root, e.group, 'group', e.path);
    if (uid !== undefined || gid !== undefined) chownIfRoot(tmp, uid ?? 0, gid ?? 0);
  }
  // A directory in the way is replaced, as Ignition's overwrite does.
  if (exists(target) && lstatSync(target).isDirectory()) rmSync(target, { recursive: true });
  renameSync(tmp, target);
}

function ownerOf(root: string, name: string | undefined, kind: 'user' | 'group', path: string): number | undefined {
  return name ? resolveOwner(root, { name }, kind, path) : undefined;
}

/** A user's uid and primary gid from the root's passwd (the ssh keys belong to the user and its group). */
function userIds(root: string, name: string, path: string): { uid: number; gid: number } {
  const user = lookupUser(root, name);
  if (!user) throw new WriteError(`${path}: user "${name}" does not exist in the root's /etc/passwd`);
  return { uid: user.uid, gid: user.gid };
}

function applyPath(root: string, c: PathChange): void {
  if (c.change === 'removed') restore(root, c.path);
  else {
    if (c.change === 'added') backup(root, c.path);
    place(root, c.after!);
  }
}

function inverse(c: PathChange): PathChange {
  if (c.change === 'added') return { ...c, change: 'removed', before: c.after, after: undefined };
  if (c.change === 'removed') return { ...c, change: 'added', before: undefined, after: c.before };
  return { ...c, before: c.after, after: c.before };
}

/** The kernel command line the next boot runs with, with `add` added and `remove` removed. */
function editKernelArguments(root: string, add: string[], remove: string[]): void {
  if (add.length === 0 && remove.length === 0) return;
  const file = join(root, CMDLINE_FILE);
  let args = existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean) : [];
  args = args.filter((a) => !remove.includes(a));
  for (const a of add) if (!args.includes(a)) args.push(a);
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  writeFileSync(file, `${args.join(' ')}\n`, { mode: 0o644 });
}

/** Applies the diff to the disk under `root`; on failure undoes what it did and throws WriteError. */
export function writeDiff(root: string, diff: ConfigDiff): void {
  const done: PathChange[] = [];
  let where = '';
  try {
    for (const c of diff.paths) {
      where = `writing "${c.path}"`;
      applyPath(root, c);
      done.push(c);
    }
    if (diff.passwordHash) {
      where = `setting the password of user "${CORE_USER}"`;
      setPasswordHash(root, CORE_USER, diff.corePasswordHash);
    }
    where = 'writing the kernel arguments';
    editKernelArguments(root, diff.kernelArguments.add, diff.kernelArguments.remove);
  } catch (e) {
    const rollback: string[] = [];
    for (const c of [...done].reverse()) {
      try { applyPath(root, inverse(c)); } catch (r) { rollback.push(`${c.path}: ${(r as Error).message}`); }
    }
    throw new WriteError(`${where}: ${(e as Error).message}${rollback.length ? `; rolling back failed for ${rollback.join('; ')}` : `; rolled back ${done.length} path(s)`}`, { cause: e });
  }
}
