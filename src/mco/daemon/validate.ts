// After a boot, and while the node is Done: does the disk hold what a rendered config says?
// Checks every managed path (managed.ts) — a file's contents and mode, a link's target (a masked
// unit is its link to /dev/null; its contents are not looked at) — but not enablement: at first
// boot Ignition only writes presets, which systemd turns into links itself (OpenShift's daemon
// does not validate enablement either) —
// and that the running kernel's command line (/proc/cmdline) has the config's kernel arguments.
// Answers with the first mismatch in OpenShift's words (`content mismatch for file "<path>"`,
// `mode mismatch for file: "<path>"; expected: -rw-r--r--/420/0644; received: …`), or undefined.
// Reads through a small interface so tests can hand it a map.
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import type { MachineConfigSpec } from '../controller/types.js';
import { inRoot } from '../../ignition/apply/root-path.js';
import { describeMode, managedEntries } from './managed.js';

export interface DiskReader {
  /** undefined when nothing is there. */
  stat(path: string): { kind: 'file' | 'link' | 'dir' | 'other'; mode: number } | undefined;
  read(path: string): Buffer;
  readlink(path: string): string;
}

export function rootReader(root: string): DiskReader {
  return {
    stat(path) {
      try {
        const st = lstatSync(inRoot(root, path));
        return { kind: st.isFile() ? 'file' : st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'other', mode: st.mode & 0o7777 };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
        throw e;
      }
    },
    read: (path) => readFileSync(inRoot(root, path)),
    readlink: (path) => readlinkSync(inRoot(root, path)),
  };
}

export const PROC_CMDLINE = '/proc/cmdline';

/** The first way the disk differs from the config, or undefined when it matches. */
export function validateOnDisk(spec: MachineConfigSpec | undefined, disk: DiskReader): string | undefined {
  for (const e of managedEntries(spec).values()) {
    if (e.kind === 'absent' || (e.kind === 'link' && e.enablement)) continue;
    const st = disk.stat(e.path);
    if (e.kind === 'link') {
      if (!st) return `could not stat file: "${e.path}": no such file or directory`;
      if (st.kind !== 'link') return `expected a link at "${e.path}" to "${e.target}", found a ${st.kind}`;
      const target = disk.readlink(e.path);
      if (target !== e.target) return `link "${e.path}" points to "${target}"; expected: "${e.target}"`;
      continue;
    }
    if (!st) return `could not stat file: "${e.path}": no such file or directory`;
    if (st.kind !== 'file') return `expected a file at "${e.path}", found a ${st.kind}`;
    if (st.mode !== e.mode) return `mode mismatch for file: "${e.path}"; expected: ${describeMode(e.mode)}; received: ${describeMode(st.mode)}`;
    if (!disk.read(e.path).equals(e.data)) return `content mismatch for file "${e.path}"`;
  }
  const want = spec?.kernelArguments ?? [];
  if (want.length) {
    const have = disk.stat(PROC_CMDLINE) ? disk.read(PROC_CMDLINE).toString('utf8').trim().split(/\s+/) : [];
    const missing = want.filter((a) => !have.includes(a));
    if (missing.length) return `missing expected kernel arguments: ${missing.join(' ')}`;
  }
  return undefined;
}
