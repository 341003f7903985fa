// Paths inside a machine root: an Ignition path (absolute, as the config names it) resolved under
// the root without escaping it, and the ownership helpers every writer in the files stage uses.
import { chownSync, lchownSync, mkdirSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

export class FilesStageError extends Error {}

/** `<root><path>`, refusing paths that `..` would take out of the root. */
export function inRoot(root: string, path: string): string {
  const normal = posix.normalize(path);
  if (!normal.startsWith('/') || normal.split('/').includes('..')) throw new FilesStageError(`path "${path}" leaves the root`);
  return join(root, normal);
}

/** Creates the missing parents of `target` as Ignition does: mode 0755, owned by root. */
export function mkParents(target: string): void {
  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
}

const isRoot = process.getuid?.() === 0;

/** chown when running as root (a machine's files belong to its users); elsewhere ownership other
 *  than the caller's cannot be set, and the machine's files stay the caller's. */
export function chownIfRoot(target: string, uid: number, gid: number, followLinks = true): void {
  if (!isRoot) return;
  if (followLinks) chownSync(target, uid, gid);
  else lchownSync(target, uid, gid);
}
