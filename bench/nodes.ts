// npm run bench:nodes [-- N…] [-- --steady SECONDS] [-- --simulators K] — the node agent's scale
// mode: for each N (default 100, 500 and 1,000) a fresh embedded API server in its own process and
// N simulated nodes in K processes of their own (bench/lib/node-simulator.ts; default one per
// 2,500 nodes, each with one client on the admin kubeconfig), renewing their Leases every 10 s as
// kubelets do. (One process standing in for 10,000 kubelets timed its renewals through its own
// garbage collector's pauses, up to 50 ms, and queued them behind one client's 32 sockets.) Reports the Lease renewal latency p50/p99 over the steady state, and the API
// server's CPU (utime+stime from /proc/<pid>/stat) and RSS, each against the same server idle
// before the nodes came (the reference), so the per-node figures are deltas; the latency's
// reference is a Lease renewal started every 20 ms on that idle server, open loop as the nodes'
// renewals arrive (and, printed beside it, the closed loop it used to be: the next renewal 20 ms
// after the last was answered, which samples a stall once however long it lasts), showing what
// this machine's own load (other processes on its cores, its disk) adds to any request. During the
// steady state the same open-loop renewals run again from this process beside the nodes' (the
// probe): the same client and pacing as the reference, so that its ratio differs from the idle one
// only by the nodes' load on the server, where the nodes' own latency also holds their simulators'
// event-loop delay. Bounded:
// per N about 10 s idle + 2 × 30 s reference + registration + one renewal interval of warm-up + the steady state
// (default 60 s). Then, with the nodes still renewing, the real kubectl lists them (`kubectl get
// nodes`, a Table of N rows, paged as kubectl pages) three times, timed, the median printed with
// kubectl's own CPU time and the time it waited on its own rate limit; then three times in one
// request (--chunk-size=0), which shows the listing without kubectl's pacing. BENCH_CPU_PROF=<dir>
// profiles the API server (bench/lib/apiserver-process.ts), BENCH_SIM_PROF=<dir> the simulators.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { startApiServerProcess } from './lib/apiserver-process.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setLogLevel } from '../src/common/log.js';
import { rfc3339Micro } from '../src/common/time.js';
import { KubeClient, loadKubeConfig, type Obj } from '../src/kube/index.js';
import type { SimulatorReport } from './lib/node-simulator.js';

const args = process.argv.slice(2);
const steadyIndex = args.indexOf('--steady');
const STEADY_S = steadyIndex >= 0 ? Number(args[steadyIndex + 1]) : Number(process.env.BENCH_STEADY_S ?? 60);
const simulatorsIndex = args.indexOf('--simulators');
const SIMULATORS = simulatorsIndex >= 0 ? Number(args[simulatorsIndex + 1]) : undefined;
const counts = args.filter((a, i) => /^\d+$/.test(a) && (steadyIndex < 0 || i !== steadyIndex + 1) && (simulatorsIndex < 0 || i !== simulatorsIndex + 1)).map(Number);
const NODES_PER_SIMULATOR = 2500;
const NODES = counts.length > 0 ? counts : [100, 500, 1000];
const IDLE_S = 10;
// About 1,300 renewals: the p99 of 100 (10 s at 10/s) swung from 5 to 200 ms between quiet runs,
// one or two of the idle server's rare stalls (a slow fsync) deciding it.
const REFERENCE_S = 30;
const REFERENCE_GAP_MS = 20;
const REFERENCE_LEASES = 16;
const RENEW_MS = 10_000;
const CLOCK_TICKS = 100; // USER_HZ on Linux (getconf CLK_TCK)
setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'warn'); // not a line per node registered
if (!(STEADY_S > 0)) throw new Error(`--steady wants a number of seconds, got ${args[steadyIndex + 1]}`);
if (SIMULATORS !== undefined && !(Number.isInteger(SIMULATORS) && SIMULATORS > 0)) throw new Error(`--simulators wants a whole number of processes, got ${args[simulatorsIndex + 1]}`);

interface Sample { cpuMs: number; rssKiB: number; at: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server process's CPU time so far and its resident memory, from /proc. */
function sample(pid: number): Sample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpuMs: (ticks * 1000) / CLOCK_TICKS, rssKiB: Number(rss), at: performance.now() };
}

/** The server over `seconds`: percent of one core, and its RSS averaged over a sample a second (one sample swings with GC). */
async function observe(pid: number, seconds: number): Promise<{ cpu: number; rssKiB: number }> {
  const first = sample(pid);
  let last = first;
  let rssSum = 0;
  for (let i = 0; i < seconds; i++) {
    await sleep(1000);
    last = sample(pid);
    rssSum += last.rssKiB;
  }
  return { cpu: (100 * (last.cpuMs - first.cpuMs)) / (last.at - first.at), rssKiB: rssSum / seconds };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  await exited;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true };

/**
 * The server's own count of Lease PUTs answered within each bucket of its request-duration
 * histogram (`apiserver_request_duration_seconds`, kube-apiserver's buckets), from /metrics: what
 * the server itself took, without the clients' side.
 */
async function leasePutBuckets(client: KubeClient): Promise<Map<string, number>> {
  const res = await client.open('GET', '/metrics');
  let text = '';
  for await (const chunk of res) text += chunk;
  const buckets = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_duration_seconds_bucket{') || !line.includes('resource="leases"') || !line.includes('verb="PUT"')) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le) buckets.set(le, (buckets.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

/** "≤ 5 ms 97.1%, ≤ 25 ms 99.8%, …": the share of the window's Lease PUTs the server answered within each bucket, up to all of them. */
function serverShares(before: Map<string, number>, after: Map<string, number>): string {
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  const parts: string[] = [];
  for (const [le, count] of after) {
    if (le === '+Inf') continue;
    const share = (count - (before.get(le) ?? 0)) / total;
    parts.push(`≤ ${Number(le) * 1000} ms ${fmt(100 * share, 2)}%`);
    if (share >= 1) break;
  }
  return `${parts.join(', ')} (of ${total})`;
}

/** A Lease of the reference's, in the nodes' namespace. */
const referenceLease = (client: KubeClient, name: string): Promise<Obj> =>
  client.create(LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec: { holderIdentity: 'bench', leaseDurationSeconds: 40 } });
/** One renewal, as a kubelet's: the Lease written back with a new renewTime. */
const renew = (client: KubeClient, lease: Obj): Promise<Obj> => client.update(LEASES, { ...lease, spec: { ...lease.spec, renewTime: rfc3339Micro() } });

/**
 * The idle server's latency for a Lease renewal arriving at any moment: one renewal started every
 * 20 ms on the clock while `until` is pending, whether or not the last has been answered (open
 * loop, as 10,000 nodes' renewals arrive), each of one of 16 Leases in turn so that none waits on
 * its own previous renewal. A stall of the server or the disk is then sampled by every renewal
 * that arrives during it, as it is at 1,000 renewals/s; a closed loop (the next renewal sent 20 ms
 * after the last was answered) samples a stall of any length once.
 */
async function referenceRenewals(client: KubeClient, until: Promise<unknown>, prefix = 'bench-reference'): Promise<number[]> {
  let done = false;
  void until.then(() => (done = true));
  const leases: Obj[] = [];
  for (let i = 0; i < REFERENCE_LEASES; i++) leases.push(await referenceLease(client, `${prefix}-${i}`));
  const latencies: number[] = [];
  const inFlight: Array<Promise<void>> = leases.map(() => Promise.resolve());
  const start = performance.now();
  for (let tick = 0; !done; tick++) {
    await sleep(Math.max(0, start + tick * REFERENCE_GAP_MS - performance.now()));
    const i = tick % REFERENCE_LEASES;
    inFlight[i] = inFlight[i].then(async () => {
      const started = performance.now();
      leases[i] = await renew(client, leases[i]);
      latencies.push(performance.now() - started);
    });
  }
  await Promise.all(inFlight);
  return latencies.sort((a, b) => a - b);
}

/** The reference as it was measured until 2026-11-28: one Lease, the next renewal sent 20 ms after the last was answered (closed loop). */
async function closedLoopRenewals(client: KubeClient, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.then(() => (done = true));
  let lease = await referenceLease(client, 'bench-reference-closed');
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    lease = await renew(client, lease);
    latencies.push(performance.now() - started);
    await sleep(REFERENCE_GAP_MS);
  }
  return latencies.sort((a, b) => a - b);
}

/**
 * The real kubectl's `get nodes` against the server, timed; the rows it printed are counted, and
 * kubectl's own CPU time (user + system, from the shell's `times`) is read: decoding the rows is
 * most of a listing, and it is the client's, the same against any API server. kubectl also paces
 * its own requests (client-go's rate limiter: 5 per second after a burst of 10), and a list of
 * N nodes is N/500 pages (--chunk-size 500): at -v=4 it logs each wait ("Waited before sending
 * request … client-side throttling"), summed here. `chunkSize` 0 lists in one request.
 */
async function kubectlGetNodes(kubeconfig: string, chunkSize?: number): Promise<{ ms: number; rows: number; cpuMs: number; throttledMs: number; requests: number }> {
  const started = performance.now();
  const script = '"$0" "$@"; status=$?; times >&2; exit $status';
  const chunk = chunkSize === undefined ? [] : [`--chunk-size=${chunkSize}`];
  const kubectl = spawn('sh', ['-c', script, process.env.KUBECTL ?? 'kubectl', '--kubeconfig', kubeconfig, 'get', 'nodes', ...chunk, '-v=6'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  kubectl.stdout.on('data', (d) => (out += d));
  kubectl.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => kubectl.once('close', r));
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`kubectl get nodes exited ${code}: ${err}`);
  // `times` prints the shell's user and system time, then its children's: "0m2.150s 0m0.330s".
  const children = err.trim().split('\n').at(-1) ?? '';
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  // client-go's log of its own waits: `"Waited before sending request" delay="149.476174ms"` (kubectl
  // 1.31 on), `Waited for 149.47ms due to client-side throttling` before; and of each response.
  let throttledMs = 0;
  for (const m of err.matchAll(/Waited (?:for |before sending request" delay=")([\d.]+)(ms|s)\b/g)) throttledMs += Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  const requests = err.split('\n').filter((line) => line.includes('/api/v1/nodes?') && line.includes('200 OK')).length;
  return { ms, rows: out.trim().split('\n').length - 1, cpuMs: seconds.length === 2 ? (seconds[0] + seconds[1]) * 1000 : NaN, throttledMs, requests };
}

/** One simulator process, with the next message it sends. */
interface Simulator {
  child: ChildProcess;
  next<T>(): Promise<T>;
}

/** Starts `count` simulated nodes from `firstIndex` in a process of their own; resolves once they have registered. */
async function startSimulator(kubeconfig: string, count: number, firstIndex: number): Promise<Simulator> {
  const child = fork(new URL('./lib/node-simulator.ts', import.meta.url).pathname, [kubeconfig, String(count), String(firstIndex), String(RENEW_MS)], {
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_SIM_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SIM_PROF}`] : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const simulator: Simulator = {
    child,
    next: <T>() =>
      new Promise<T>((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`a simulator process (nodes ${firstIndex}–${firstIndex + count - 1}) exited with code ${code}`));
        child.once('exit', onExit);
        child.once('message', (m) => {
          child.off('exit', onExit);
          resolve(m as T);
        });
      }),
  };
  await simulator.next<{ registered: true }>();
  return simulator;
}

/** The server and simulators of the run under way, stopped if the bench itself is interrupted (^C, SIGTERM). */
let current: { server: ChildProcess; dataDir: string; simulators: Simulator[] } | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (current) {
      for (const s of current.simulators) s.child.kill('SIGTERM');
      current.server.kill('SIGTERM');
      rmSync(current.dataDir, { recursive: true, force: true });
    }
    process.exit(130);
  });
}

async function run(n: number): Promise<{ n: number; p99: number; ratio: number; probeRatio: number; rssMiB: number; kubectlMs: number; kubectlFloorMs: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-nodes-'));
  const server = await startApiServerProcess(dataDir);
  current = { server, dataDir, simulators: [] };
  const pid = server.pid!;
  try {
    // The reference: the same server with no nodes.
    await sleep(5000); // start-up settles
    const client = new KubeClient(loadKubeConfig(join(dataDir, 'kubeconfig')));
    const idle = await observe(pid, IDLE_S);
    const reference = await referenceRenewals(client, sleep(REFERENCE_S * 1000));
    const closedReference = await closedLoopRenewals(client, sleep(REFERENCE_S * 1000));

    const k = Math.min(n, SIMULATORS ?? Math.ceil(n / NODES_PER_SIMULATOR));
    const registerStart = performance.now();
    const simulators = current.simulators;
    await Promise.all(
      Array.from({ length: k }, async (_, i) => {
        const first = Math.floor((i * n) / k);
        simulators.push(await startSimulator(join(dataDir, 'kubeconfig'), Math.floor(((i + 1) * n) / k) - first, first));
      }),
    );
    const registerS = (performance.now() - registerStart) / 1000;
    try {
      // One interval of warm-up: every node has renewed once, its Lease exists.
      await sleep(RENEW_MS);
      for (const s of simulators) s.child.send('measure');
      const serverBefore = await leasePutBuckets(client);
      const steadyStart = performance.now();
      // The reference's own renewals again, under the nodes' load: the same client and pacing as
      // the idle reference, so that the two differ only by what 10,000 nodes do to the server.
      const observing = observe(pid, STEADY_S);
      const probe = referenceRenewals(client, observing, 'bench-probe');
      const steady = await observing;
      const loaded = await probe;
      const serverAfter = await leasePutBuckets(client);
      const reports = await Promise.all(
        simulators.map((s) => {
          const report = s.next<SimulatorReport>();
          s.child.send('report');
          return report;
        }),
      );
      const steadyMs = performance.now() - steadyStart;
      const sorted = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
      const p50 = percentile(sorted, 50);
      const p99 = percentile(sorted, 99);
      const agentsCpu = (reports.reduce((sum, r) => sum + r.cpuMs, 0) / steadyMs) * 100;
      console.log(`N=${n}: registered in ${fmt(registerS)} s; ${sorted.length} Lease renewals in ${STEADY_S} s (${fmt(sorted.length / STEADY_S)}/s)`);
      console.log(`  lease renewal latency  p50 ${fmt(p50)} ms  p99 ${fmt(p99)} ms  max ${fmt(sorted[sorted.length - 1] ?? NaN)} ms (idle reference, a renewal started every ${REFERENCE_GAP_MS} ms, open loop: p50 ${fmt(percentile(reference, 50))} ms  p99 ${fmt(percentile(reference, 99))} ms → p99 ratio ${fmt(p99 / percentile(reference, 99), 2)}; closed loop, the next ${REFERENCE_GAP_MS} ms after the last answered: p50 ${fmt(percentile(closedReference, 50))} ms  p99 ${fmt(percentile(closedReference, 99))} ms → ${fmt(p99 / percentile(closedReference, 99), 2)})`);
      console.log(`  the reference's renewals under this load (the same ${REFERENCE_GAP_MS} ms open loop from this process, beside the nodes' renewals): p50 ${fmt(percentile(loaded, 50))} ms  p99 ${fmt(percentile(loaded, 99))} ms → p99 ratio ${fmt(percentile(loaded, 99) / percentile(reference, 99), 2)} to the same renewals idle`);
      console.log(`  the server's own time for those Lease PUTs (its apiserver_request_duration_seconds): ${serverShares(serverBefore, serverAfter)}`);
      console.log(`  API server CPU         ${fmt(steady.cpu)}% of a core (idle reference ${fmt(idle.cpu)}%)  → ${fmt((1000 * (steady.cpu - idle.cpu)) / n, 2)}% of a core per 1,000 nodes`);
      console.log(`  API server RSS         ${fmt(steady.rssKiB / 1024)} MiB mean (idle reference ${fmt(idle.rssKiB / 1024)} MiB)  → ${fmt((steady.rssKiB - idle.rssKiB) / n)} KiB per node`);
      console.log(`  simulated nodes        ${k} process${k === 1 ? '' : 'es'} of ~${Math.round(n / k)} nodes: ${fmt(agentsCpu)}% of a core, RSS ${fmt(reports.reduce((sum, r) => sum + r.rssMiB, 0))} MiB together; their event loops' delay p99 ${reports.map((r) => fmt(r.loopDelayP99Ms)).join(', ')} ms, max ${fmt(Math.max(...reports.map((r) => r.loopDelayMaxMs)))} ms`);
      const median = async (chunkSize?: number) => {
        const runs: Array<Awaited<ReturnType<typeof kubectlGetNodes>>> = [];
        for (let i = 0; i < 3; i++) {
          const run = await kubectlGetNodes(join(dataDir, 'kubeconfig'), chunkSize);
          if (run.rows !== n) throw new Error(`kubectl get nodes printed ${run.rows} nodes, not ${n}`);
          runs.push(run);
        }
        runs.sort((a, b) => a.ms - b.ms);
        return { median: runs[1], all: runs.map((r) => fmt(r.ms / 1000, 2)).join(', ') };
      };
      const paged = await median();
      const whole = await median(0);
      const peakRss = sample(pid).rssKiB / 1024;
      const floorS = Math.max(0, paged.median.requests - 10) / 5;
      console.log(`  kubectl get nodes      ${n} rows in ${fmt(paged.median.ms / 1000, 2)} s (median of 3: ${paged.all} s; the real kubectl, while the nodes renew): ${paged.median.requests} pages of 500, kubectl's own CPU ${fmt(paged.median.cpuMs / 1000, 2)} s, its own rate limit's waits ${fmt(paged.median.throttledMs / 1000, 2)} s (client-go's 5 requests/s after a burst of 10: the last page is asked for ${fmt(floorS, 1)} s after the first, against any API server)`);
      console.log(`  kubectl get nodes --chunk-size=0  the same ${n} rows in one request: ${fmt(whole.median.ms / 1000, 2)} s (median of 3: ${whole.all} s), kubectl's own CPU ${fmt(whole.median.cpuMs / 1000, 2)} s; API server RSS after ${fmt(peakRss)} MiB`);
      return { n, p99, ratio: p99 / percentile(reference, 99), probeRatio: percentile(loaded, 99) / percentile(reference, 99), rssMiB: Math.max(steady.rssKiB / 1024, peakRss), kubectlMs: paged.median.ms, kubectlFloorMs: floorS * 1000 };
    } finally {
      await Promise.all(
        simulators.map(async (s) => {
          if (s.child.exitCode !== null) return;
          const exited = new Promise((r) => s.child.once('exit', r));
          s.child.send('stop');
          await exited;
        }),
      );
    }
  } finally {
    await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
    current = undefined;
  }
}

console.log(`scale mode: N = ${NODES.join(', ')} in ${SIMULATORS === undefined ? `a process per ${NODES_PER_SIMULATOR} nodes` : `${SIMULATORS} processes`}; renewal every ${RENEW_MS / 1000} s; ${STEADY_S} s steady state; load average ${loadavg().map((l) => fmt(l, 2)).join(' ')} on this machine at the start`);
const results: Array<Awaited<ReturnType<typeof run>>> = [];
for (const n of NODES) results.push(await run(n));
console.log(`load average at the end ${loadavg().map((l) => fmt(l, 2)).join(' ')}`);
const verdict = (met: boolean) => (met ? 'met' : 'missed');
for (const r of results) {
  console.log(`goals at N=${r.n}: lease p99 < 100 ms ${verdict(r.p99 < 100)} (${fmt(r.p99)} ms); ≤ 3× the idle reference: the nodes' renewals ${verdict(r.ratio <= 3)} (${fmt(r.ratio, 2)}×), the reference's own renewals under their load ${verdict(r.probeRatio <= 3)} (${fmt(r.probeRatio, 2)}×); API server < 1 GB RSS ${verdict(r.rssMiB < 1024)} (${fmt(r.rssMiB)} MiB); kubectl get nodes < 2 s ${verdict(r.kubectlMs < 2000)} (${fmt(r.kubectlMs / 1000, 2)} s${r.kubectlFloorMs >= 2000 ? `; kubectl's own rate limit alone takes ${fmt(r.kubectlFloorMs / 1000, 1)} s at N=${r.n}` : ''})`);
}
