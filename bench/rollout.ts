// npm run bench:rollout [-- N…] [-- --k K…] [-- --boot-delay SECONDS] [-- --drain-time SECONDS] — a MachineConfig rolled out
// over N nodes in scale mode: simulated nodes (src/cluster/node-agent/scale.ts) against the API
// server in its own process, the machine-config controller (render, node and drain controllers)
// and one real machine-config daemon per node in this process, each over its own root directory
// (the first boot's files laid down as Ignition would). A node's machine is simulated: a reboot
// kills its daemon, keeps the node down for the boot delay, gives it a new boot ID and starts a
// new daemon, as a pod restarting after a real reboot. With --drain-time each node runs a pod that
// takes that long to stop once evicted, so the drain lasts that long. For each k (maxUnavailable, default 1 and
// 5) and N (default 20) it reports the rollout's wall time against the ideal ⌈N/k⌉ × T1, where T1
// is the same rollout on one node measured in this run (drain + write + reboot + validate +
// uncordon, with the controller's reaction times): the ratio says what the rollout's ordering
// and hand-offs cost beyond the work itself. Goal: within 1.1×.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startApiServerProcess } from './lib/apiserver-process.js';
import { logger, setLogLevel } from '../src/common/log.js';
import { SimulatedNodes } from '../src/cluster/node-agent/scale.js';
import { KubeClient, Manager, loadKubeConfig, resources } from '../src/kube/index.js';
import { runMachineConfigController } from '../src/mco/controller/run.js';
import { MachineConfigDaemon } from '../src/mco/daemon/daemon.js';
import type { Host } from '../src/mco/daemon/host.js';
import { DiskState } from '../src/mco/daemon/disk-state.js';
import { diffConfigs } from '../src/mco/daemon/diff.js';
import { writeDiff } from '../src/mco/daemon/writer.js';

// Arguments: numbers are node counts; --k, --boot-delay and --drain-time take the numbers after them.
const NS: number[] = [];
const KS: number[] = [];
let bootDelayS = 2;
let drainTimeS = 0;
for (let i = 0, into: 'n' | 'k' | 'boot' | 'drain' = 'n'; i < process.argv.length - 2; i++) {
  const a = process.argv[i + 2];
  if (a === '--k') into = 'k';
  else if (a === '--boot-delay') into = 'boot';
  else if (a === '--drain-time') into = 'drain';
  else if (/^\d+(\.\d+)?$/.test(a)) {
    if (into === 'n') NS.push(Number(a));
    else if (into === 'k') KS.push(Number(a));
    else if (into === 'boot') { bootDelayS = Number(a); into = 'n'; }
    else { drainTimeS = Number(a); into = 'n'; }
  } else throw new Error(`unknown argument ${a}: npm run bench:rollout -- [N…] [--k K…] [--boot-delay SECONDS] [--drain-time SECONDS]`);
}
if (NS.length === 0) NS.push(20);
if (KS.length === 0) KS.push(1, 5);
const BOOT_DELAY_MS = bootDelayS * 1000;
const DRAIN_TIME_MS = drainTimeS * 1000;
setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'error');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MCO = 'machineconfiguration.openshift.io';
const PAYLOAD = new URL('../release-payload/manifests/', import.meta.url).pathname;

/** One simulated machine: its root, its boot ID, and the daemon that runs on it while it is up. */
class SimMachine implements Host {
  bootIdValue = randomUUID();
  private daemon?: AbortController;
  reboots = 0;
  constructor(readonly root: string, private readonly node: string, private readonly kubeconfig: ReturnType<typeof loadKubeConfig>) {}
  bootId() { return this.bootIdValue; }
  forceFile() { return false; }
  removeForceFile() {}
  async runAction() { return 'simulated machine: nothing to run'; }
  requestReboot() {
    const daemon = this.daemon;
    this.daemon = undefined;
    daemon?.abort();
    setTimeout(() => { this.bootIdValue = randomUUID(); this.reboots++; this.start(); }, BOOT_DELAY_MS);
  }
  start() {
    const stop = new AbortController();
    this.daemon = stop;
    const manager = new Manager({ name: `mcd-${this.node}`, kubeconfig: this.kubeconfig });
    manager.add(new MachineConfigDaemon(manager, { nodeName: this.node, host: this, driftCheckIntervalMs: 5000 }));
    void manager.start(stop.signal).catch(() => undefined);
  }
  stop() { this.daemon?.abort(); this.daemon = undefined; }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Wall time of one rollout of a new file over n nodes with maxUnavailable k. */
async function rollout(n: number, k: number): Promise<{ ms: number; maxDown: number; reboots: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-rollout-'));
  const server = await startApiServerProcess(dataDir);
  const stop = new AbortController();
  const machines: SimMachine[] = [];
  let sim: SimulatedNodes | undefined;
  try {
    const kubeconfig = loadKubeConfig(join(dataDir, 'kubeconfig'));
    const client = new KubeClient(kubeconfig);
    for (const f of readdirSync(PAYLOAD).filter((x) => x.startsWith('0000_80_machine-config_01_') && x.endsWith('.crd.yaml'))) await client.create(resources.customResourceDefinitions, parseYaml(readFileSync(join(PAYLOAD, f), 'utf8')));
    await waitFor('CRDs', () => client.list(resources.machineConfigPools).then(() => true), 10_000);
    const cluster = kubeconfig.getCurrentCluster()!;
    const ca = cluster.caData ?? readFileSync(cluster.caFile!).toString('base64');
    await client.create(resources.controllerConfigs, { apiVersion: `${MCO}/v1`, kind: 'ControllerConfig', metadata: { name: 'machine-config-controller' }, spec: { clusterDNSIP: '172.30.0.10', cloudProviderConfig: '', ipFamilies: 'IPv4', kubeAPIServerServingCAData: ca, rootCAData: ca, releaseImage: 'bench', images: {} } });
    await client.create(resources.machineConfigPools, { apiVersion: `${MCO}/v1`, kind: 'MachineConfigPool', metadata: { name: 'worker' }, spec: { machineConfigSelector: { matchLabels: { [`${MCO}/role`]: 'worker' } }, nodeSelector: { matchLabels: { 'node-role.kubernetes.io/worker': '' } }, maxUnavailable: k } });
    void runMachineConfigController({ kubeconfig, signal: stop.signal, leaderElection: false, renderDelayMs: 0, controllerVersion: 'bench' });
    const r0 = await waitFor('a rendered config', async () => (await client.get(resources.machineConfigPools, 'worker')).spec?.configuration?.name as string | undefined, 20_000);
    const base = await client.get(resources.machineConfigs, r0);

    sim = new SimulatedNodes(client, { count: n, leaseRenewIntervalMs: 10_000, podStopMs: DRAIN_TIME_MS, log: logger('bench-rollout') });
    await sim.start();
    for (let i = 0; i < n; i++) {
      // The first boot, as Ignition leaves a machine: the rendered config's files and the daemon's seed.
      const root = mkdtempSync(join(dataDir, `machine-${i}-`));
      writeDiff(root, diffConfigs(undefined, base.spec));
      new DiskState(root).writeCurrentConfig(base);
      const node = `sim-node-${i}`;
      await client.mergePatch(resources.nodes, node, undefined, { metadata: { annotations: { [`${MCO}/currentConfig`]: r0, [`${MCO}/desiredConfig`]: r0, [`${MCO}/state`]: 'Done' } } });
      // The workload the drain evicts: a pod that takes the drain time to stop.
      if (DRAIN_TIME_MS > 0) await client.create(resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `app-${i}`, namespace: 'default' }, spec: { nodeName: node, containers: [{ name: 'app', image: 'bench.local/app:1' }] } });
      const m = new SimMachine(root, node, kubeconfig);
      machines.push(m);
      m.start();
    }
    await waitFor('the pool Updated', async () => (await client.get(resources.machineConfigPools, 'worker')).status?.conditions?.some((c) => c.type === 'Updated' && c.status === 'True'), 60_000);

    await client.create(resources.machineConfigs, { apiVersion: `${MCO}/v1`, kind: 'MachineConfig', metadata: { name: '50-worker-bench', labels: { [`${MCO}/role`]: 'worker' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/bench.conf', mode: 420, overwrite: true, contents: { source: 'data:,rolled' } }] } } } });
    const r1 = await waitFor('the new rendered config', async () => { const c = (await client.get(resources.machineConfigPools, 'worker')).spec?.configuration?.name; return c !== r0 && c; }, 20_000);
    // Timed from the pool's new target (the render is the same for any N).
    const started = performance.now();
    let maxDown = 0;
    await waitFor('every node Done on the new config', async () => {
      const pool = await client.get(resources.machineConfigPools, 'worker');
      maxDown = Math.max(maxDown, pool.status?.unavailableMachineCount ?? 0);
      return pool.status?.configuration?.name === r1 && pool.status?.conditions?.some((c) => c.type === 'Updated' && c.status === 'True');
    }, 30 * 60_000);
    return { ms: performance.now() - started, maxDown, reboots: machines.reduce((s, m) => s + m.reboots, 0) };
  } finally {
    for (const m of machines) m.stop();
    stop.abort();
    await sim?.stop();
    if (server.exitCode === null) { const exited = new Promise((r) => server.once('exit', r)); server.kill('SIGTERM'); await exited; }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
console.log(`rollout in scale mode: N = ${NS.join(', ')}, maxUnavailable k = ${KS.join(', ')}, boot delay ${s(BOOT_DELAY_MS)}, drain time ${s(DRAIN_TIME_MS)}`);
const one = await rollout(1, 1);
console.log(`reference T1 (one node: drain + write + reboot + validate + uncordon): ${s(one.ms)}`);
for (const n of NS) {
  for (const k of KS) {
    const r = await rollout(n, k);
    const ideal = Math.ceil(n / k) * one.ms;
    const ratio = r.ms / ideal;
    console.log(`N=${n} k=${k}: ${s(r.ms)} against the ideal ⌈N/k⌉ × T1 = ${s(ideal)}  → ${ratio.toFixed(2)}× (at most ${r.maxDown} unavailable at once, ${r.reboots} reboots); goal ≤ 1.1×: ${ratio <= 1.1 ? 'met' : 'missed'}`);
  }
}
