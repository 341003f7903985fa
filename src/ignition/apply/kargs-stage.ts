// Ignition's kargs stage on a local machine: a machine has no bootloader, so the kernel command
// line lives in `<root>/etc/kernel/cmdline` (systemd's kernel-install convention); each boot
// shows it at `<root>/proc/cmdline`, as Linux shows the running kernel's.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { IgnitionConfig } from '../types.js';

export const CMDLINE_FILE = 'etc/kernel/cmdline';

export function readCmdline(root: string): string[] {
  const file = join(root, CMDLINE_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean) : [];
}

/** Adds `shouldExist` arguments that are missing and removes `shouldNotExist` ones. */
export function kargsStage(root: string, kargs: IgnitionConfig['kernelArguments']): void {
  if (!kargs?.shouldExist?.length && !kargs?.shouldNotExist?.length) return;
  let args = readCmdline(root);
  for (const a of kargs.shouldExist ?? []) if (!args.includes(a)) args.push(a);
  const remove = new Set(kargs.shouldNotExist ?? []);
  args = args.filter((a) => !remove.has(a));
  const file = join(root, CMDLINE_FILE);
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  writeFileSync(file, `${args.join(' ')}\n`, { mode: 0o644 });
}
