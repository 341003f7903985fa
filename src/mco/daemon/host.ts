// The daemon's view of the host it runs on, through the host's root mounted into its pod
// (`--root-mount`, /rootfs in the DaemonSet): the boot ID, the forcefile, and the host's service
// manager — a reboot, and the Reload/Restart/DaemonReload actions of the node disruption policy.
//
// Reboot: the daemon asks the host's init for a reboot the way `shutdown -r` asks systemd-logind
// — by writing the scheduled-shutdown record /run/systemd/shutdown/scheduled (USEC=<when>,
// MODE=reboot) — because the local cloud's machines honour exactly that file (src/cloud/
// power-requests.ts): the machine is rebooted through the cloud, with a new boot ID, as `systemctl
// reboot` would on a real host. No cloud credentials are needed on the node, just as a real host
// needs none to reboot itself. /run is a tmpfs: the record and the forcefile are gone after boot.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { SCHEDULED_SHUTDOWN_FILE } from '../../common/scheduled-shutdown.js';
import type { PolicyAction } from './disruption-policy.js';

export const FORCE_FILE = '/run/machine-config-daemon-force';
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

export interface Host {
  readonly root: string;
  bootId(): string;
  forceFile(): boolean;
  removeForceFile(): void;
  requestReboot(): void;
  /** Runs a post-config action; answers what was done. */
  runAction(action: PolicyAction): Promise<string>;
}

export class RootMountHost implements Host {
  constructor(readonly root: string) {}

  bootId(): string {
    const file = join(this.root, BOOT_ID_FILE);
    if (!existsSync(file)) throw new Error(`${file} does not exist: is ${this.root} the host's root?`);
    return readFileSync(file, 'utf8').trim();
  }

  forceFile(): boolean {
    return existsSync(join(this.root, FORCE_FILE));
  }

  removeForceFile(): void {
    rmSync(join(this.root, FORCE_FILE), { force: true });
  }

  requestReboot(): void {
    const file = join(this.root, SCHEDULED_SHUTDOWN_FILE);
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    // Written aside and renamed into place: whoever polls the record never reads it half-written
    // (an empty record would read as a power-off).
    writeFileSync(`${file}.tmp`, `USEC=${Date.now() * 1000}\nWARNALL=0\nMODE=reboot\n`);
    renameSync(`${file}.tmp`, file);
  }

  async runAction(action: PolicyAction): Promise<string> {
    const args = action.type === 'DaemonReload' ? ['daemon-reload']
      : action.type === 'Reload' ? ['reload', action.reload?.serviceName ?? '']
      : action.type === 'Restart' ? ['restart', action.restart?.serviceName ?? '']
      : undefined;
    if (!args) return `${action.type}: nothing to run`;
    // systemd marks a booted system with /run/systemd/system; a local machine has no service
    // manager (its "services" are the node agent's processes), so there is nothing to tell.
    if (!existsSync(join(this.root, '/run/systemd/system'))) return `systemctl ${args.join(' ')}: the host runs no systemd; skipped`;
    await promisify(execFile)('chroot', [this.root, 'systemctl', ...args]);
    return `systemctl ${args.join(' ')}`;
  }
}
