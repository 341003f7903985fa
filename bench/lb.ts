// Throughput, latency and CPU per request of the local cloud's load balancers on its engines,
// haproxy (src/cloud/haproxy.ts), the Node proxy (src/cloud/load-balancer-proxy.ts) and, where
// this process may change the network namespace's rules, the kernel (src/cloud/nftables.ts), against the
// backends directly, in one run: a cloud service with one balancer of one TCP port over three
// instances, each instance's private IP (127.0.1.N) serving a small HTTP body on the balancer's
// target port, checked every 2 s as a LocalCluster's API server balancer is; the same balancer
// also carried by a Node proxy on another port of its VIP. The same load runs directly against one
// backend and through each engine, first with keep-alive clients (the per-byte cost) and then with
// a new connection per request (the per-connection cost: accept, pick a target, connect upstream,
// tear both down).
//
// Made to be fair on a small shared machine, where the load generator, the backends and the
// balancer compete for the same cores:
//  - the load generator is wrk (Debian's `wrk`, C and epoll, what proxy maintainers measure with),
//    one thread, the same CLIENTS connections for every path, so it is limited the same way in
//    every run and takes little CPU; without wrk (or LB_BENCH_LOADGEN=node) a Node client, which
//    needs a core of its own at these rates and so is the limit itself;
//  - the backends are one Node process, the same for every path, seeing the same CLIENTS
//    connections (haproxy and the Node proxy open one upstream connection per client connection);
//  - a warm-up run on each path first, then ROUNDS short rounds in which the paths alternate
//    (order reversed every other round); the ratio printed is the median of the rounds' own
//    ratios (each measured within seconds of its direct run);
//  - every process (load generator, backends, haproxy, this one) in this process's session, so in
//    one scheduling autogroup, as a local cluster's processes under `bosun start` are: a process
//    in a session of its own is scheduled as a group of its own, and every hand-off to it then
//    waits for a switch between groups, which on a loaded machine halves a chain's throughput;
//  - the CPU every process spent per request on each path (load generator, backends, engine), from
//    /proc, so a gap that is CPU accounting shows as such: when the cores are the limit, the
//    balanced path cannot beat direct × (direct's CPU per request / its own).
// This process runs the cloud (and the Node proxy); haproxy runs in its own processes, a child the
// backends, another the load generator.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request } from 'node:http';
import { freePort } from '../src/common/listen.js';
import { cpuTicks, tree } from './lib/bosun-start.js';
import { parseWrk, wrkBinary } from './lib/wrk.js';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIENTS = Number(process.env.LB_BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.LB_BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.LB_BENCH_ROUNDS ?? 5);
const BACKENDS = 3;
const BODY = 'hello from a node\n';
const SELF = new URL(import.meta.url).pathname;
const CORES = availableParallelism();
/** CPU ticks per second in /proc (USER_HZ). */
const HZ = 100;

type Mode = 'keepalive' | 'close';
type LoadGen = 'wrk' | 'node';
/** What a load generator reports: requests answered 200 in `seconds`, and its own CPU (ms). */
interface LoadOut { requests: number; errors: number; seconds: number; p50: number; p99: number; cpuMs: number }
/** One measured run: the load generator's figures and the CPU (ms) of backends and engine meanwhile. */
interface LoadResult extends LoadOut { backendCpuMs: number; engineCpuMs: number }

/**
 * Child mode: the backends. Plain HTTP servers on the instances' private IPs; they stand in for
 * the node agent's NodePort proxy, which is what a balancer's target port reaches on a real node.
 */
async function backends(port: number, ips: string[]): Promise<void> {
  for (const ip of ips) {
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(BODY) });
      res.end(BODY);
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, ip, () => resolve()));
  }
  process.stdout.write('ready\n');
  // The parent kills this process; stdin closing (the parent gone) ends it too.
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

/** Child mode (no wrk): CLIENTS concurrent clients in a closed loop for `seconds` after a warm-up; JSON out. */
async function load(url: string, mode: Mode, seconds: number): Promise<void> {
  const u = new URL(url);
  // close: no agent, `Connection: close` — every request opens and tears down its own connection.
  const agent = mode === 'keepalive' ? new Agent({ keepAlive: true, maxSockets: CLIENTS }) : false;
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const one = () => new Promise<void>((resolve) => {
    const t0 = performance.now();
    const req = request({ host: u.hostname, port: u.port, path: '/', agent, headers: mode === 'close' ? { connection: 'close' } : {} }, (res) => {
      res.resume();
      res.on('end', () => {
        if (measuring) {
          if (res.statusCode === 200) latencies.push(performance.now() - t0);
          else errors++;
        }
        resolve();
      });
    });
    req.on('error', () => { if (measuring) errors++; resolve(); });
    req.end();
  });
  const client = async () => { while (!stop) await one(); };
  const clients = Array.from({ length: CLIENTS }, client);
  await new Promise((r) => setTimeout(r, 500)); // warm-up: connections made, JIT settled
  measuring = true;
  process.stdout.write('measuring\n');
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  measuring = false;
  const took = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write('measured\n');
  stop = true;
  await Promise.all(clients);
  if (agent) agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  const out: LoadOut = { requests: latencies.length, errors, seconds: took, p50: pct(0.5), p99: pct(0.99), cpuMs: (cpu.user + cpu.system) / 1000 };
  process.stdout.write(JSON.stringify(out));
}

function child(args: string[], children: ChildProcess[]): ChildProcess {
  const c = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(c);
  return c;
}

/** CPU time (ms) of a process and its descendants (haproxy's master and workers), from /proc. */
const processTreeCpuMs = (root: number): number => cpuTicks(tree(root)) * (1000 / HZ);

/** Where a program under measure runs: this process (the Node proxy), or another process tree. */
type CpuOf = { pid: number } | 'self';

function cpuMsOf(of: CpuOf): number {
  if (of !== 'self') return processTreeCpuMs(of.pid);
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

interface Run { gen: LoadGen; url: string; mode: Mode; seconds: number; backend: CpuOf; engine?: CpuOf }

/** One case: the load generator's figures, and the CPU the backends and the engine spent while it measured. */
function runLoad(r: Run, children: ChildProcess[]): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let c: ChildProcess;
    let cpu0: { backend: number; engine: number } | undefined;
    let cpu1: { backend: number; engine: number } | undefined;
    const sample = () => ({ backend: cpuMsOf(r.backend), engine: r.engine ? cpuMsOf(r.engine) : 0 });
    if (r.gen === 'wrk') {
      // Through a shell that prints its own /proc stat after wrk: cutime/cstime are wrk's CPU.
      const args = ['-t1', `-c${CLIENTS}`, `-d${r.seconds}s`, '--latency', ...(r.mode === 'close' ? ['-H', 'Connection: close'] : []), r.url];
      cpu0 = sample();
      c = spawn('/bin/sh', ['-c', '"$0" "$@"; s=$?; cat /proc/$$/stat; exit $s', wrkBinary()!, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(c);
    } else {
      c = child(['--load', r.url, r.mode, String(r.seconds)], children);
    }
    let out = '';
    c.stdout!.on('data', (d) => {
      out += d;
      if (cpu0 === undefined && out.includes('measuring\n')) cpu0 = sample();
      if (cpu1 === undefined && out.includes('measured\n')) cpu1 = sample();
    });
    // 'close', not 'exit': its output read to the end.
    c.on('close', (code) => {
      if (code !== 0 || cpu0 === undefined) return reject(new Error(`load generator exited ${code}: ${out}`));
      const end = cpu1 ?? sample();
      const result = r.gen === 'wrk' ? parseWrk(out) : JSON.parse(out.slice(out.lastIndexOf('measured\n') + 'measured\n'.length)) as LoadOut;
      resolve({ ...result, backendCpuMs: end.backend - cpu0.backend, engineCpuMs: end.engine - cpu0.engine });
    });
  });
}

function startBackends(port: number, ips: string[], children: ChildProcess[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const c = child(['--backends', String(port), ...ips], children);
    c.stdout!.on('data', (d) => { if (String(d).includes('ready')) resolve(c); });
    c.on('exit', (code) => reject(new Error(`backends exited ${code}`)));
  });
}

const rps = (r: LoadResult) => r.requests / r.seconds;
const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The round with the median throughput. */
function median(rounds: LoadResult[]): LoadResult {
  return [...rounds].sort((a, b) => rps(a) - rps(b))[Math.floor(rounds.length / 2)];
}

/** CPU (µs) per request of each process over all rounds of a path. */
function cpuPerRequest(rounds: LoadResult[]): { client: number; backend: number; engine: number; total: number } {
  const n = rounds.reduce((a, r) => a + r.requests, 0);
  const us = (f: (r: LoadResult) => number) => (rounds.reduce((a, r) => a + f(r), 0) * 1000) / n;
  const client = us((r) => r.cpuMs);
  const backend = us((r) => r.backendCpuMs);
  const engine = us((r) => r.engineCpuMs);
  return { client, backend, engine, total: client + backend + engine };
}

/**
 * The most a path could carry on CORES cores given the CPU per request each process spent: each
 * single-threaded process (the load generator, the backends' process, the engine) at most one
 * core, all of them together at most CORES. What bounds it, too.
 */
function ceiling(c: { client: number; backend: number; engine: number; total: number }): { rps: number; limit: string } {
  const limits: [string, number][] = [['load generator', 1e6 / c.client], ['backends', 1e6 / c.backend], ['cores', (CORES * 1e6) / c.total]];
  if (c.engine > 0) limits.push(['engine', 1e6 / c.engine]);
  const [limit, r] = limits.reduce((a, b) => (b[1] < a[1] ? b : a));
  return { rps: r, limit };
}

function fmt(name: string, r: LoadResult): string {
  return `${name.padEnd(36)} ${rps(r).toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  errors ${r.errors}`;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  process.env.BOSUN_LOG_LEVEL ??= 'warn';
  const { CloudService } = await import('../src/cloud/service.js');
  const { CloudClient } = await import('../src/cloud/client.js');
  const { LoadBalancerProxies } = await import('../src/cloud/load-balancer-proxy.js');
  const { HaproxyBalancers } = await import('../src/cloud/haproxy.js');
  const { NftablesBalancers, findNft, nftablesUnusable } = await import('../src/cloud/nftables.js');
  const { logger } = await import('../src/common/log.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-lb-'));
  chmodSync(dataDir, 0o755);
  const service = new CloudService({ dataDir, bootDelayMs: 100, ignition: 'builtin', host: '127.0.0.1', port: 0 });
  const nodeProxy = new LoadBalancerProxies((id) => service.cloud.store.instances.get(id)?.privateIp);
  // The kernel engine, where this process may change the namespace's rules (root in a namespace of its own).
  const nft = findNft();
  const nftDir = join(dataDir, 'nftables');
  const nftUnusable = nftablesUnusable(nft, nftDir);
  const kernel = nft && !nftUnusable ? new NftablesBalancers({ binary: nft, dir: nftDir, resolve: (id) => service.cloud.store.instances.get(id)?.privateIp, log: logger('bench-lb') }) : undefined;
  const children: ChildProcess[] = [];
  try {
    const client = new CloudClient(await service.start(), service.rootCredential);
    const instances = [];
    for (let i = 0; i < BACKENDS; i++) instances.push(await client.createInstance({ name: `bench-lb-${i}` }));
    const ips = instances.map((i) => i.privateIp);
    // The kernel path's targets are three more addresses of the same backends' process. A
    // translated connection carries the TCP timestamps its client made for the balancer's address;
    // arriving at an address where the direct path's closed connections wait in TIME_WAIT from the
    // same client ports, it fails the TIME_WAIT check (PAWS) and waits for a SYN retransmit (1 s):
    // up to a thousand per round when the paths share addresses, none apart.
    const kernelInstances = [];
    if (kernel) for (let i = 0; i < BACKENDS; i++) kernelInstances.push(await client.createInstance({ name: `bench-lb-kernel-${i}` }));
    const nodePort = await freePort(ips[0]);
    const backendsChild = await startBackends(nodePort, [...ips, ...kernelInstances.map((i) => i.privateIp)], children);
    const lbPort = await freePort('127.0.0.1');
    // Checked as a LocalCluster's API server balancer is (every target every 2 s): the checks run
    // during the measurement, on both engines, as they do in a cluster.
    const healthCheck = { port: nodePort, path: '/healthz', protocol: 'HTTP' as const };
    const lb = await client.ensureLoadBalancer('bench-lb', { ports: [{ protocol: 'TCP', port: lbPort, targetPort: nodePort }], targets: instances.map((i) => i.id), sourceRanges: [], healthCheck });
    await service.syncProxies();
    // The same balancer on the Node proxy, on the next free port of its VIP.
    const nodeLbPort = await freePort(lb.address);
    await nodeProxy.sync([{ ...lb, ports: [{ ...lb.ports[0], port: nodeLbPort }] }]);
    // And in the kernel, on the next one: nothing listens there, the connections are translated.
    const kernelLbPort = await freePort(lb.address);
    await kernel?.sync([{ ...lb, targets: kernelInstances.map((i) => i.id), ports: [{ ...lb.ports[0], port: kernelLbPort }] }]);
    const gen: LoadGen = process.env.LB_BENCH_LOADGEN === 'node' || !wrkBinary() ? 'node' : 'wrk';
    const backend: CpuOf = { pid: backendsChild.pid! };
    const paths: { name: string; url: string; engine?: CpuOf }[] = [{ name: 'direct', url: `http://${ips[0]}:${nodePort}/` }];
    if (service.proxies instanceof HaproxyBalancers && service.proxies.masterPid !== undefined) {
      paths.push({ name: 'haproxy', url: `http://${lb.address}:${lbPort}/`, engine: { pid: service.proxies.masterPid } });
    } else {
      console.log(`haproxy: not measured (${service.proxies.reason ?? 'not running'})`);
    }
    paths.push({ name: 'node', url: `http://${lb.address}:${nodeLbPort}/`, engine: 'self' });
    // The kernel's work is done in the client's and the backends' system calls and softirqs: counted there, no engine process.
    if (kernel) paths.push({ name: 'nftables', url: `http://${lb.address}:${kernelLbPort}/` });
    else console.log(`nftables: not measured (${nftUnusable})`);
    console.log(`${BACKENDS} backends (${ips.join(', ')}:${nodePort}${kernel ? `; for the kernel path ${kernelInstances.map((i) => i.privateIp).join(', ')}` : ''}, one Node process), balancer ${lb.address}:${lbPort} (haproxy), :${nodeLbPort} (Node proxy)${kernel ? ` and :${kernelLbPort} (nftables)` : ''}, health-checked (haproxy and Node proxy every 2 s, nftables every 1 s)`);
    console.log(`load generator: ${gen === 'wrk' ? `wrk, 1 thread, ${CLIENTS} connections` : `Node (${CLIENTS} clients${wrkBinary() ? '' : '; wrk is not installed: apt-get install wrk'}), itself the limit at these rates`}; ${SECONDS} s per case, ${ROUNDS} rounds, paths alternating; load average ${loadavg()}`);

    for (const mode of ['keepalive', 'close'] as const) {
      const label = mode === 'keepalive' ? 'keep-alive' : 'new connection/request';
      const results = new Map<string, LoadResult[]>(paths.map((p) => [p.name, []]));
      // A warm-up run on each path (JIT, connections, caches), not counted.
      for (const p of paths) await runLoad({ gen, url: p.url, mode, seconds: 1, backend, engine: p.engine }, children);
      // The paths alternate, ROUNDS times, the order reversed every other round: on a shared machine
      // the load of other processes drifts within seconds.
      for (let round = 0; round < ROUNDS; round++) {
        for (const p of round % 2 === 0 ? paths : [...paths].reverse()) {
          results.get(p.name)!.push(await runLoad({ gen, url: p.url, mode, seconds: SECONDS, backend, engine: p.engine }, children));
        }
      }
      const direct = results.get('direct')!;
      const directCpu = cpuPerRequest(direct);
      for (const p of paths) {
        const rs = results.get(p.name)!;
        const c = cpuPerRequest(rs);
        const name = p.name === 'direct' ? `direct       ${label}` : `via ${p.name.padEnd(8)} ${label}`;
        console.log(fmt(name, median(rs)));
        console.log(`${''.padEnd(37)}CPU per request: client ${c.client.toFixed(1)} µs, backends ${c.backend.toFixed(1)} µs, engine ${c.engine.toFixed(1)} µs, all ${c.total.toFixed(1)} µs`);
      }
      const directCeiling = ceiling(directCpu);
      for (const p of paths.slice(1)) {
        const rs = results.get(p.name)!;
        const ratios = rs.map((r, i) => rps(r) / rps(direct[i]));
        const p99s = rs.map((r, i) => r.p99 / direct[i].p99);
        const c = ceiling(cpuPerRequest(rs));
        console.log(`ratio via-${p.name}/direct ${label}: throughput ${medianOf(ratios).toFixed(2)} (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}), p99 ${medianOf(p99s).toFixed(2)}x`);
        // What the CPU per request allows on this machine's cores, each single-threaded process at most a core.
        console.log(`  ceiling from CPU per request on ${CORES} cores: direct ${directCeiling.rps.toFixed(0)} req/s (limit: ${directCeiling.limit}), via ${p.name} ${c.rps.toFixed(0)} req/s (limit: ${c.limit}): ${(c.rps / directCeiling.rps).toFixed(2)}`);
      }
    }
    console.log(`load average at the end ${loadavg()}`);
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
    await nodeProxy.closeAll();
    await kernel?.closeAll();
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--load') await load(process.argv[3], process.argv[4] as Mode, Number(process.argv[5]));
else if (process.argv[2] === '--backends') await backends(Number(process.argv[3]), process.argv.slice(4));
else await main();
