// Running the real Ignition client (Debian `ignition` 2.14) the way a booting machine does, for
// the fetch and files stages into a scratch root.
//
// Ignition 2.14 relabels written files with SELinux's `setfiles` at the end of the files stage
// whatever the root's /etc/selinux/config says, and needs SELINUXTYPE there; `setfiles`
// (policycoreutils) is not installed, so a no-op `setfiles` goes first on PATH. The disks, mount
// and kargs stages (block devices, mounts, bootloader) are not run.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

// Debian installs the client under dracut's modules; elsewhere it may be on PATH (as .ci/run accepts).
export const IGNITION = ['/usr/lib/dracut/modules.d/30ignition/ignition', ...(process.env.PATH ?? '').split(':').map((d) => `${d}/ignition`)].find((p) => existsSync(p)) ?? 'ignition';
export const IGNITION_VALIDATE = 'ignition-validate';
const missing = !existsSync(IGNITION) || spawnSync(IGNITION_VALIDATE, ['--version']).status !== 0;
/** The `skip` option of an Ignition test: skipped only outside CI (under CI a missing client fails). */
export const skipWithoutIgnition = missing && !process.env.CI ? 'ignition not installed (apt-get install ignition)' : false;

/**
 * Boots from the Ignition config in `pointerFile`: runs the fetch and files stages with `work` as
 * scratch space and returns the root the files were written to. Fails the test with Ignition's
 * output when a stage fails. The server, if in this process, keeps running: the client is awaited.
 */
export async function bootWithIgnition(pointerFile: string, work: string): Promise<string> {
  const root = join(work, 'root');
  const runDir = join(work, 'run');
  const bin = join(work, 'bin');
  mkdirSync(join(root, 'etc/selinux'), { recursive: true });
  mkdirSync(runDir, { recursive: true });
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(root, 'etc/selinux/config'), 'SELINUX=disabled\nSELINUXTYPE=targeted\n');
  writeFileSync(join(bin, 'setfiles'), '#!/bin/sh\ncat >/dev/null\n');
  chmodSync(join(bin, 'setfiles'), 0o755);
  const env = { ...process.env, IGNITION_CONFIG_FILE: pointerFile, PATH: `${bin}:${process.env.PATH}` };
  const common = ['-platform', 'file', '-log-to-stdout', '-config-cache', join(runDir, 'ignition.json'), '-state-file', join(runDir, 'state'), '-neednet', join(runDir, 'neednet')];
  for (const stage of [['-stage', 'fetch'], ['-stage', 'files', '-root', root]]) {
    try {
      await promisify(execFile)(IGNITION, [...common, ...stage], { env, encoding: 'utf8', timeout: 60_000 });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; message: string };
      assert.fail(`ignition ${stage.join(' ')} failed:\n${err.stdout ?? ''}${err.stderr ?? ''}${err.message}`);
    }
  }
  return root;
}
