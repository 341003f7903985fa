// Booting with the real Ignition client (Debian's `ignition`, under dracut's modules, or on PATH):
// `-platform file` with the user data as IGNITION_CONFIG_FILE, the fetch stage, then the files
// stage with `-root` = the machine root. Ignition 2.14 relabels what it wrote with SELinux's
// `setfiles` whatever the root's /etc/selinux/config says; a machine has no SELinux policy, so a
// no-op `setfiles` goes first on PATH. The disks and mount stages (block devices) are not run; the
// kargs stage is bosun's (kargs-stage.ts), from the config Ignition cached after fetching.
import { BosunError } from '../../common/errors.js';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { IgnitionConfig } from '../types.js';

export const IGNITION_DRACUT_PATH = '/usr/lib/dracut/modules.d/30ignition/ignition';

/** The Ignition binary on this host, if any. */
export function findIgnitionBinary(): string | undefined {
  const candidates = [IGNITION_DRACUT_PATH, ...(process.env.PATH ?? '').split(':').filter(Boolean).map((d) => join(d, 'ignition'))];
  return candidates.find((p) => existsSync(p));
}

export class IgnitionBinaryError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('IgnitionBinaryFailed', message, options);
  }
}

/**
 * The first directory on the way to `dir` that other users cannot pass through, if any. Ignition
 * writes a user's ssh keys as that user, who must be able to reach the machine root (on a host
 * the root is `/`); a data directory under a private home or a 0700 temp directory fails there.
 */
export function untraversableAncestor(dir: string): string | undefined {
  let d = resolve(dir);
  for (;;) {
    if (existsSync(d) && (statSync(d).mode & 0o001) === 0) return d;
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

export interface BinaryRun {
  binary: string;
  /** The Ignition config the machine boots from. */
  configFile: string;
  root: string;
  /** Scratch space for Ignition's cache, state and the setfiles shim; emptied first. */
  workDir: string;
  signal: AbortSignal;
}

/** Runs fetch then files; returns the config Ignition fetched (for the kargs stage). */
export async function runIgnitionBinary(run: BinaryRun): Promise<Pick<IgnitionConfig, 'kernelArguments'>> {
  rmSync(run.workDir, { recursive: true, force: true });
  const bin = join(run.workDir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'setfiles'), '#!/bin/sh\ncat >/dev/null\n');
  chmodSync(join(bin, 'setfiles'), 0o755);
  const cache = join(run.workDir, 'ignition.json');
  const env = { ...process.env, IGNITION_CONFIG_FILE: run.configFile, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` };
  const common = ['-platform', 'file', '-log-to-stdout', '-config-cache', cache, '-state-file', join(run.workDir, 'state'), '-neednet', join(run.workDir, 'neednet')];
  const log: string[] = [];
  for (const stage of [['-stage', 'fetch'], ['-stage', 'files', '-root', run.root]]) {
    try {
      const r = await promisify(execFile)(run.binary, [...common, ...stage], { env, encoding: 'utf8', signal: run.signal, maxBuffer: 16 * 1024 * 1024 });
      log.push(r.stdout, r.stderr);
    } catch (e) {
      if (run.signal.aborted) throw e;
      const err = e as { stdout?: string; stderr?: string; message: string };
      log.push(err.stdout ?? '', err.stderr ?? '');
      writeFileSync(join(run.workDir, 'ignition.log'), log.join(''));
      const critical = `${err.stdout ?? ''}${err.stderr ?? ''}`.split('\n').filter((l) => l.startsWith('CRITICAL')).map((l) => l.replace(/^CRITICAL\s*:\s*/, ''));
      throw new IgnitionBinaryError(`ignition ${stage.slice(1).join(' ')} failed: ${critical.at(-1) ?? err.message}`);
    }
  }
  writeFileSync(join(run.workDir, 'ignition.log'), log.join(''));
  // The cache is Ignition's own rendering (its newest spec, possibly marked experimental).
  const cached = JSON.parse(readFileSync(cache, 'utf8')) as Pick<IgnitionConfig, 'kernelArguments'>;
  return { kernelArguments: cached.kernelArguments };
}
