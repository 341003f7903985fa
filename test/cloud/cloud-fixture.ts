// Shared fixture for local-cloud tests: a CloudService on a random loopback port over a temporary
// data directory, a runtime that records what the cloud asks of it, and helpers to wait for an
// instance and to describe a machine root as a comparable tree.
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CloudService, type ServeOptions } from '../../src/cloud/service.js';
import { CloudClient } from '../../src/cloud/client.js';
import type { BootedMachine, MachineRuntime } from '../../src/cloud/machine-runtime.js';
import type { Instance } from '../../src/cloud/types.js';
import { eventually } from '../helpers/eventually.js';

/** Records boots and shutdowns in order, as the node agent would see them. */
export class RecordingRuntime implements MachineRuntime {
  readonly events: { event: 'boot' | 'shutdown'; instance: string; bootId: string; firstBoot: boolean }[] = [];
  async onBoot(m: BootedMachine): Promise<void> {
    this.events.push({ event: 'boot', instance: m.instance.id, bootId: m.bootId, firstBoot: m.firstBoot });
  }
  async onShutdown(m: BootedMachine): Promise<void> {
    this.events.push({ event: 'shutdown', instance: m.instance.id, bootId: m.bootId, firstBoot: m.firstBoot });
  }
  of(id: string) {
    return this.events.filter((e) => e.instance === id).map((e) => `${e.event} ${e.bootId}`);
  }
}

export interface CloudFixture {
  dataDir: string;
  service: CloudService;
  client: CloudClient;
  runtime: RecordingRuntime;
  /** Stops the service (state kept) and starts a new one on the same data directory. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startCloud(opts: Partial<ServeOptions> = {}): Promise<CloudFixture> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'bosun-cloud-'));
  // mkdtemp makes it 0700; the real Ignition client writes ssh keys as the user, who must be able
  // to reach the machine root (as on a host, where the root is /).
  chmodSync(dataDir, 0o755);
  const runtime = new RecordingRuntime();
  const make = () => new CloudService({ bootDelayMs: 300, ignition: 'builtin', runtime, ...opts, dataDir, host: '127.0.0.1', port: 0 });
  const f: CloudFixture = {
    dataDir, runtime,
    service: make(),
    client: undefined as unknown as CloudClient,
    async restart() {
      await f.service.close();
      f.service = make();
      f.client = new CloudClient(await f.service.start(), f.service.rootCredential);
    },
    async close() {
      await f.service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  f.client = new CloudClient(await f.service.start(), f.service.rootCredential);
  return f;
}

/** Waits until the instance matches `check`, returning it. */
export function waitForInstance(client: CloudClient, id: string, what: string, check: (i: Instance) => boolean, timeoutMs = 30_000): Promise<Instance> {
  return eventually(`${id} ${what}`, async () => {
    const i = await client.getInstance(id);
    return check(i) ? i : undefined;
  }, timeoutMs);
}

export const isUp = (i: Instance) => i.state === 'running' && i.machine.phase === 'Up';

/** Booted or failed to: a failed boot fails the test with the machine's message. */
export async function waitForBoot(client: CloudClient, id: string, timeoutMs = 60_000): Promise<Instance> {
  const i = await waitForInstance(client, id, 'booted', (x) => isUp(x) || x.machine.phase === 'Failed', timeoutMs);
  if (i.machine.phase === 'Failed') throw new Error(`${id} failed to boot: ${i.machine.message}`);
  return i;
}

export interface TreeNode { type: 'dir' | 'file' | 'link'; mode: number; uid: number; gid: number; content?: string; target?: string }

/** Every node under `root`, keyed by its path relative to the root. */
export function tree(root: string): Map<string, TreeNode> {
  const out = new Map<string, TreeNode>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = lstatSync(p);
      const base = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
      const key = relative(root, p);
      if (st.isDirectory()) { out.set(key, { type: 'dir', ...base }); walk(p); }
      else if (st.isSymbolicLink()) out.set(key, { type: 'link', ...base, mode: 0, target: readlinkSync(p) });
      else out.set(key, { type: 'file', ...base, content: readFileSync(p, 'utf8') });
    }
  };
  walk(root);
  return out;
}
