// A local cluster installed with machines for a test file (3 masters and the workers asked for,
// booting through Ignition, the operators as pods): fixed free ports kept for the cluster's life
// (a restarted cluster keeps its addresses), machine addresses away from the ones other tests'
// clouds hand out first, the bring-up's progress lines kept, and kubectl on its kubeconfig.
import { freePort } from '../../src/common/listen.js';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { bringUp, type BringUpOptions, type LocalCluster } from '../../src/cluster/bring-up.js';
import type { Obj } from '../../src/kube/client.js';
import { localClusterOptions } from './local-cluster.js';
import { runKubectl } from './apiserver.js';

/** The payload's operators' namespaces. */
export const OPERATOR_NAMESPACES = ['openshift-cluster-version', 'openshift-machine-config-operator', 'openshift-cloud-controller-manager-operator', 'openshift-cloud-controller-manager', 'openshift-cluster-api'];


export interface InstalledCluster {
  options: BringUpOptions;
  lines: string[];
  cluster: LocalCluster;
  kubectl(args: string[]): Promise<string>;
  json(args: string[]): Promise<Obj>;
  /** Stops the cluster and brings it back from its data directory. */
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

/** The processes (not this one) working in `dir` or naming it on their command line. */
function processesUnder(dir: string): Array<{ pid: number; args: string }> {
  const found: Array<{ pid: number; args: string }> = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      let cwd = '';
      try { cwd = readlinkSync(`/proc/${pid}/cwd`); } catch { /* not ours to read */ }
      if (cwd === dir || cwd.startsWith(`${dir}/`) || args.includes(`${dir}/`)) found.push({ pid, args: args.slice(0, 200) });
    } catch { /* gone */ }
  }
  return found;
}

/** A handle as process._getActiveHandles() lists them (the fields read here). */
interface ActiveHandle {
  constructor: { name: string };
  _handle?: { hasRef?: () => boolean } | null;
  pid?: number;
  spawnargs?: string[];
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
  address?: () => unknown;
}

/** The connections, servers, child processes and watchers that keep this process alive, described. */
function openHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): ActiveHandle[] })._getActiveHandles();
  return handles.filter((h) => h._handle?.hasRef?.() !== false).flatMap((h) => {
    const kind = h.constructor.name;
    if (kind === 'ChildProcess') return [`child process ${h.pid}: ${(h.spawnargs ?? []).join(' ').slice(0, 200)}`];
    // A pipe (stdio, a child's) has no address; its child is listed itself.
    if (kind === 'Socket' || kind === 'TLSSocket') return h.remoteAddress ? [`connection ${h.localAddress}:${h.localPort} → ${h.remoteAddress}:${h.remotePort}`] : [];
    if (kind === 'Server') return [`server ${JSON.stringify(h.address?.())}`];
    return [kind];
  });
}

/** openHandles() once what is closing has had a moment to close. */
async function settledHandles(): Promise<string[]> {
  for (let i = 0; i < 30; i++) {
    if (openHandles().length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return openHandles();
}

/** `extra`: bring-up options beside these (`etcd: true` for the HA control plane). */
export async function installCluster(workers: number, extra: Partial<BringUpOptions> = {}): Promise<InstalledCluster> {
  const lines: string[] = [];
  const options = localClusterOptions({
    api: { host: '127.0.0.1', port: await freePort() },
    updateService: { host: '127.0.0.1', port: await freePort() },
    cloud: { host: '127.0.0.1', port: await freePort() },
    masters: 3,
    workers,
    bootDelayMs: 500,
    firstInstanceHost: 200,
    machineConfigServer: { host: '127.0.0.1', tlsPort: 22623, httpPort: 22624 },
    progress: (line) => lines.push(line),
    ...extra,
  });
  const c: InstalledCluster = {
    options,
    lines,
    cluster: await bringUp(options),
    async kubectl(args) {
      const r = await runKubectl(c.cluster.kubeconfigPath, args, { timeoutMs: 30_000 });
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    },
    async json(args) {
      return JSON.parse(await c.kubectl([...args, '-o', 'json'])) as Obj;
    },
    async restart() {
      await c.cluster.stop();
      lines.length = 0;
      c.cluster = await bringUp(options);
    },
    async destroy() {
      try {
        // Every part within its bound (bring-up.ts); a part that did not stop is named in the error.
        await c.cluster?.stop();
      } finally {
        // What still runs from the data directory after the stop is a leak: named, then killed.
        for (const p of processesUnder(options.dataDir)) {
          console.error(`left running after the cluster stopped, killed: pid ${p.pid}: ${p.args}`);
          try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
        }
        rmSync(options.dataDir, { recursive: true, force: true });
      }
      // What still keeps this process alive (the runner ends the file anyway: --test-force-exit).
      const open = await settledHandles();
      if (open.length > 0) console.error(`still open in the test process after the cluster stopped:\n  ${open.join('\n  ')}`);
    },
  };
  return c;
}
