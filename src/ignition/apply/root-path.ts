// Paths inside a machine root: an Ignition path (absolute, as the config names it) resolved under
// the root without escaping it (neither by `..` nor through symbolic links), and the ownership helpers every writer in the files stage uses.
import { BosunError } from '../../common/errors.js';
import { chownSync, lchownSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';

export class FilesStageError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('IgnitionFilesFailed', message, options);
  }
}

/** `<root><path>`, refusing paths that `..` would take out of the root. */
export function inRoot(root: string, path: string): string {
  const normal = posix.normalize(path);
  if (!normal.startsWith('/') || normal.split('/').includes('..')) throw new FilesStageError(`path "${path}" leaves the root`);
  return join(root, normal);
}

/**
 * Creates the missing parents of `target` as Ignition does (mode 0755, owned by root), and
 * refuses a target whose parent a symbolic link in the root leads out of it: a machine's config
 * writes into the machine, never onto the host.
 */
export function mkParents(root: string, target: string): void {
  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
  const real = realpathSync(dirname(target));
  const realRoot = realpathSync(root);
  if (real !== realRoot && !real.startsWith(realRoot + sep)) throw new FilesStageError(`${target.slice(root.length)} leads out of the machine root through a symbolic link (to ${real})`);
}

/** This process runs as root, and so can give a machine's files to its users. */
export const isRoot = process.getuid?.() === 0;

/** chown when running as root (a machine's files belong to its users); elsewhere ownership other
 *  than the caller's cannot be set, and the machine's files stay the caller's. */
export function chownIfRoot(target: string, uid: number, gid: number, followLinks = true): void {
  if (!isRoot) return;
  if (followLinks) chownSync(target, uid, gid);
  else lchownSync(target, uid, gid);
}
