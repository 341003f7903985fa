// The daemon's own records on the host, under /etc/machine-config-daemon: `currentconfig` (the
// rendered MachineConfig whose files are on disk, so the next update diffs against what was
// really written even if the API has deleted it), `pending-config.json` (an update written but not
// yet completed: which config, in which boot, whether it waits for a reboot), and
// `node-annotations.json` (written by Ignition from the machine-config server: the annotations a
// new node starts with). Each is written atomically (a temporary file renamed over it).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MachineConfig } from '../controller/types.js';
import { CURRENT_CONFIG_ANNOTATION, DESIRED_CONFIG_ANNOTATION, STATE_ANNOTATION } from '../controller/types.js';
import type { NodeAnnotations, PendingRecord } from './state-machine.js';
import { DAEMON_DIR } from './writer.js';

export const CURRENT_CONFIG_FILE = `${DAEMON_DIR}/currentconfig`;
export const PENDING_FILE = `${DAEMON_DIR}/pending-config.json`;
export const NODE_ANNOTATIONS_FILE = `${DAEMON_DIR}/node-annotations.json`;

export class DiskState {
  constructor(private readonly root: string) {}

  private path(file: string): string {
    return join(this.root, file);
  }

  private readJson<T>(file: string): T | undefined {
    const p = this.path(file);
    if (!existsSync(p)) return undefined;
    try {
      return JSON.parse(readFileSync(p, 'utf8')) as T;
    } catch (e) {
      throw new Error(`${file} is not JSON: ${(e as Error).message}`);
    }
  }

  private writeJson(file: string, value: unknown): void {
    const p = this.path(file);
    mkdirSync(dirname(p), { recursive: true, mode: 0o755 });
    writeFileSync(`${p}.tmp`, `${JSON.stringify(value)}\n`, { mode: 0o644 });
    renameSync(`${p}.tmp`, p);
  }

  currentConfig(): MachineConfig | undefined {
    return this.readJson<MachineConfig>(CURRENT_CONFIG_FILE);
  }

  writeCurrentConfig(mc: MachineConfig): void {
    this.writeJson(CURRENT_CONFIG_FILE, { apiVersion: mc.apiVersion, kind: mc.kind, metadata: { name: mc.metadata.name }, spec: mc.spec });
  }

  pending(): PendingRecord | undefined {
    return this.readJson<PendingRecord>(PENDING_FILE);
  }

  writePending(p: PendingRecord): void {
    this.writeJson(PENDING_FILE, p);
  }

  clearPending(): void {
    rmSync(this.path(PENDING_FILE), { force: true });
  }

  /** The first-boot annotations, as the machine-config server wrote them. */
  firstBootAnnotations(): NodeAnnotations | undefined {
    const raw = this.readJson<{ annotations?: Record<string, string> } & Record<string, string>>(NODE_ANNOTATIONS_FILE);
    if (!raw) return undefined;
    const a = (raw.annotations ?? raw) as Record<string, string>;
    return { currentConfig: a[CURRENT_CONFIG_ANNOTATION], desiredConfig: a[DESIRED_CONFIG_ANNOTATION], state: a[STATE_ANNOTATION] };
  }
}
