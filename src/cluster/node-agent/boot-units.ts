// The oneshot unit of a machine's bootstrap data that a local machine's boot runs: kubeadm.service
// (Cluster API's Ignition: `ExecStart=/etc/kubeadm.sh`, `ConditionPathExists=/etc/kubeadm.sh`,
// enabled), which runs preKubeadmCommands, `bosun kubeadm init|join` and postKubeadmCommands. As
// systemd would start it at every boot while its condition holds: run by bash with the machine
// root as its working directory, $BOSUN_IN_CLUSTER_ROOT naming the root and $BOSUN_HOST_IP the
// machine's address (which `bosun kubeadm` resolves its paths and address from), `bosun` first on
// its PATH (/run/bosun/bin in the root), its output — a line at a time, journal style — appended to
// the machine's boot log /var/log/boot.log. Once it has succeeded its script is moved to /tmp (the
// last line of Cluster API's script), so later boots skip it; a failed one runs again at the next
// boot. Local machines share the host: a command of the script that writes an absolute path
// writes the host's, which is why bosun's own steps resolve theirs in the root. Other units are
// not run (the node agent is the kubelet's unit; the MCO's units are the real machine's).
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from '../../common/log.js';

export const KUBEADM_UNIT = 'kubeadm.service';
export const BOOT_LOG = '/var/log/boot.log';
export const BOSUN_BIN_DIR = '/run/bosun/bin';

const UNIT_DIR = '/etc/systemd/system';
const PRESET = '/etc/systemd/system-preset/20-ignition.preset';

/** A oneshot unit's fields that matter here. Pure. */
export function parseOneshotUnit(text: string): { execStart?: string; conditionPathExists?: string; oneshot: boolean } {
  const field = (name: string) => [...text.matchAll(new RegExp(`^\\s*${name}\\s*=\\s*(.*?)\\s*$`, 'gm'))].pop()?.[1];
  return { execStart: field('ExecStart'), conditionPathExists: field('ConditionPathExists'), oneshot: field('Type') === 'oneshot' };
}

function enabled(root: string, unit: string): boolean {
  const preset = join(root, PRESET);
  if (existsSync(preset) && readFileSync(preset, 'utf8').split('\n').some((l) => l.trim() === `enable ${unit}`)) return true;
  return existsSync(join(root, UNIT_DIR, 'multi-user.target.wants', unit));
}

export interface BootUnitOptions {
  root: string;
  nodeIP: string;
  /** The command line of a bosun subcommand (the node agent's componentCommand). */
  bosunCommand: (argv: string[]) => string[];
  log: Logger;
  signal: AbortSignal;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs kubeadm.service when the machine has it enabled and its condition holds; resolves with
 * its exit code (undefined when it did not run). Never throws: a failure is in the boot log.
 */
export async function runKubeadmUnit(o: BootUnitOptions): Promise<number | undefined> {
  const unitFile = join(o.root, UNIT_DIR, KUBEADM_UNIT);
  if (!existsSync(unitFile) || !enabled(o.root, KUBEADM_UNIT)) return undefined;
  const unit = parseOneshotUnit(readFileSync(unitFile, 'utf8'));
  const logFile = join(o.root, BOOT_LOG);
  mkdirSync(dirname(logFile), { recursive: true });
  const journal = (line: string) => appendFileSync(logFile, `${new Date().toISOString()} ${KUBEADM_UNIT}: ${line}\n`);
  if (unit.conditionPathExists && !existsSync(join(o.root, unit.conditionPathExists))) return undefined;
  const script = unit.execStart?.split(/\s+/)[0];
  if (!script || !existsSync(join(o.root, script))) {
    journal(`cannot start: ExecStart=${unit.execStart ?? ''} is not a program in the machine root`);
    return undefined;
  }
  // `bosun` as the script calls it: this host's bosun.
  const bin = join(o.root, BOSUN_BIN_DIR);
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'bosun'), `#!/bin/sh\nexec ${o.bosunCommand([]).map(shellQuote).join(' ')} "$@"\n`);
  chmodSync(join(bin, 'bosun'), 0o755);
  journal(`Starting ${script}`);
  o.log.info({ unit: KUBEADM_UNIT, log: BOOT_LOG }, 'running the bootstrap commands');
  const child = spawn('/bin/bash', [join(o.root, script)], {
    cwd: o.root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, BOSUN_IN_CLUSTER_ROOT: o.root, BOSUN_HOST_IP: o.nodeIP },
  });
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', journal);
  const stop = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  o.signal.addEventListener('abort', stop, { once: true });
  const code = await new Promise<number>((resolve) => {
    child.once('error', (e) => {
      journal(`cannot start: ${e.message}`);
      resolve(127);
    });
    child.once('close', (c, signal) => resolve(c ?? (signal ? 128 : 1)));
  });
  o.signal.removeEventListener('abort', stop);
  if (code === 0) {
    journal('Succeeded.');
    if (unit.conditionPathExists === script) {
      mkdirSync(join(o.root, 'tmp'), { recursive: true });
      renameSync(join(o.root, script), join(o.root, 'tmp', script.split('/').pop()!));
    }
    o.log.info({ unit: KUBEADM_UNIT }, 'bootstrap commands succeeded');
  } else {
    journal(`Failed with exit code ${code}${o.signal.aborted ? ' (the machine is going down)' : ''}.`);
    o.log.warn({ unit: KUBEADM_UNIT, code, log: BOOT_LOG }, 'bootstrap commands failed');
  }
  return code;
}
