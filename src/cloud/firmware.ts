// What happens between powering a machine on and handing it to its runtime, as a CoreOS host
// boots: /run emptied (a tmpfs); a new boot ID at `<root>/proc/sys/kernel/random/boot_id`; a machine ID generated on the
// very first boot; on first boot only — while `<root>/boot/ignition.firstboot` exists, as on
// CoreOS — Ignition on the user data (the real client when configured or found, otherwise bosun's
// fetch and files stages), then the kargs stage, then the flag is removed; a failed Ignition leaves
// the flag, so the next boot tries again. Finally the kernel command line at `<root>/proc/cmdline`.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findIgnitionBinary, runIgnitionBinary, untraversableAncestor } from '../ignition/apply/binary.js';
import { fetchStage } from '../ignition/apply/fetch-stage.js';
import { filesStage } from '../ignition/apply/files-stage.js';
import { kargsStage, readCmdline } from '../ignition/apply/kargs-stage.js';
import { writeOsImage } from './os-image.js';

/** auto: the real client when installed, else bosun's; binary/builtin: that one only. */
export type IgnitionMode = 'auto' | 'binary' | 'builtin';

export const FIRSTBOOT_FLAG = 'boot/ignition.firstboot';
export const BOOT_ID_FILE = 'proc/sys/kernel/random/boot_id';

/** A machine's directory: its root, its user data and Ignition's scratch space. */
export interface MachineDir {
  dir: string;
  root: string;
  userDataFile: string;
  ignitionDir: string;
}

export function machineDir(dataDir: string, id: string): MachineDir {
  const dir = join(dataDir, 'machines', id);
  return { dir, root: join(dir, 'root'), userDataFile: join(dir, 'user-data.ign'), ignitionDir: join(dir, 'ignition') };
}

/**
 * Lays down a new machine's disk: the root with what the OS image brings (os-image.ts: RHCOS's
 * accounts, among them `core`, its layout and SELinux configured off), the first-boot flag, and
 * the user data beside it.
 */
export function createMachineDisk(m: MachineDir, userData: string | undefined): void {
  writeOsImage(m.root);
  writeFileSync(join(m.root, FIRSTBOOT_FLAG), '', { mode: 0o644 });
  if (userData !== undefined) writeFileSync(m.userDataFile, userData, { mode: 0o600 });
}

export interface FirmwareOptions {
  ignition: IgnitionMode;
  /** The Ignition binary for binary/auto (default: found on the host). */
  ignitionBinary?: string;
}

export interface BootResult { bootId: string; firstBoot: boolean }

export class Firmware {
  private readonly binary: string | undefined;

  constructor(private readonly opts: FirmwareOptions) {
    this.binary = opts.ignition === 'builtin' ? undefined : opts.ignitionBinary ?? findIgnitionBinary();
    if (opts.ignition === 'binary' && !this.binary) throw new Error('Ignition is not installed (apt-get install ignition), and --ignition binary needs it');
  }

  /** Which Ignition this firmware runs, for logs and status. */
  describe(): string {
    return this.binary ? `ignition binary ${this.binary}` : 'bosun\'s built-in Ignition';
  }

  /** Why machines under `machinesDir` would fail to write users' ssh keys, if they would. */
  problemWith(machinesDir: string): string | undefined {
    const blocked = this.binary ? untraversableAncestor(machinesDir) : undefined;
    return blocked && `${blocked} is not searchable by other users (mode o-x): the Ignition client writes ssh keys (sshAuthorizedKeys) as the machine's user and would fail; to give machines users' ssh keys, chmod o+x ${blocked} (0711: reachable, not listable; bosun's stores and keys stay 0600)`;
  }

  async boot(m: MachineDir, signal: AbortSignal, report: (message: string) => void): Promise<BootResult> {
    const bootId = randomUUID();
    // /run is a tmpfs: nothing in it outlives a boot (a scheduled shutdown, the MCD's forcefile).
    rmSync(join(m.root, 'run'), { recursive: true, force: true });
    mkdirSync(join(m.root, 'run'), { mode: 0o755 });
    writeAt(m.root, BOOT_ID_FILE, `${bootId}\n`, 0o444);
    if (!existsSync(join(m.root, 'etc/machine-id'))) writeAt(m.root, 'etc/machine-id', `${randomBytes(16).toString('hex')}\n`, 0o444);
    const firstBoot = existsSync(join(m.root, FIRSTBOOT_FLAG));
    if (firstBoot) {
      if (existsSync(m.userDataFile)) await this.ignition(m, bootId, signal, report);
      rmSync(join(m.root, FIRSTBOOT_FLAG));
    }
    writeAt(m.root, 'proc/cmdline', `${readCmdline(m.root).join(' ')}\n`, 0o444);
    return { bootId, firstBoot };
  }

  private async ignition(m: MachineDir, bootId: string, signal: AbortSignal, report: (message: string) => void): Promise<void> {
    if (this.binary) {
      report(`running Ignition (${this.binary})`);
      const fetched = await runIgnitionBinary({ binary: this.binary, configFile: m.userDataFile, root: m.root, workDir: m.ignitionDir, signal });
      kargsStage(m.root, fetched.kernelArguments);
      return;
    }
    report('running Ignition (built in): fetch');
    const { config, cas } = await fetchStage(readFileSync(m.userDataFile, 'utf8'), { signal, report });
    report('running Ignition (built in): files');
    await filesStage(config, m.root, { bootId, cas, signal });
    kargsStage(m.root, config.kernelArguments);
  }
}

function writeAt(root: string, path: string, content: string, mode: number): void {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  rmSync(file, { force: true });
  writeFileSync(file, content, { mode });
}
