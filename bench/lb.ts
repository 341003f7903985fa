// Throughput and latency of the local cloud's load balancers on both engines, haproxy
// (src/cloud/haproxy.ts) and the Node proxy (src/cloud/load-balancer-proxy.ts), against the
// backends directly, in one run: a cloud service with one balancer of one TCP port over three
// instances, each instance's private IP (127.0.1.N) serving a small HTTP body on the balancer's
// target port; the same balancer also carried by a Node proxy on another port of its VIP. The same
// load runs directly against one backend and through each engine, first with keep-alive clients
// (the per-byte cost) and then with a new connection per request (the per-connection cost: accept,
// pick a target, connect upstream, tear both down). Prints requests/s, p50/p99, the engine's CPU
// share and the through-LB/direct ratio for each. This process runs the cloud (and the Node proxy),
// haproxy runs in its own processes, a child runs the backends, another child the load.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request } from 'node:http';
import { freePort } from '../src/common/listen.js';
import { cpuTicks, tree } from './lib/bosun-start.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIENTS = Number(process.env.LB_BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.LB_BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.LB_BENCH_ROUNDS ?? 3);
const BACKENDS = 3;
const BODY = 'hello from a node\n';
const SELF = new URL(import.meta.url).pathname;

type Mode = 'keepalive' | 'close';
interface LoadResult { requests: number; errors: number; seconds: number; p50: number; p99: number; proxyCpu: number }

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

/** Child mode: CLIENTS concurrent clients in a closed loop for SECONDS after a warm-up; JSON out. */
async function load(url: string, mode: Mode): Promise<void> {
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
  const start = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  measuring = false;
  const seconds = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(clients);
  if (agent) agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  process.stdout.write(JSON.stringify({ requests: latencies.length, errors, seconds, p50: pct(0.5), p99: pct(0.99) }));
}

function child(args: string[], children: ChildProcess[]): ChildProcess {
  const c = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(c);
  return c;
}

/** CPU time (ms) of a process and its descendants (haproxy's master and workers), from /proc. */
const processTreeCpuMs = (root: number): number => cpuTicks(tree(root)) * (1000 / 100); // USER_HZ

/** Where the engine under test runs: this process (the Node proxy), or haproxy's processes. */
type CpuOf = { pid: number } | 'self';

/** One case; `proxyCpu`: the engine's CPU share while the child measured. */
function runLoad(url: string, mode: Mode, children: ChildProcess[], cpuOf: CpuOf = 'self'): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const c = child(['--load', url, mode], children);
    let out = '';
    const cpuMs = () => {
      if (cpuOf !== 'self') return processTreeCpuMs(cpuOf.pid);
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    let cpu0: number | undefined;
    let wall0 = 0;
    c.stdout!.on('data', (d) => {
      out += d;
      if (cpu0 === undefined && out.includes('measuring\n')) { cpu0 = cpuMs(); wall0 = performance.now(); }
    });
    c.on('exit', (code) => {
      if (code !== 0 || cpu0 === undefined) return reject(new Error(`load generator exited ${code}`));
      const cpu = cpuMs() - cpu0;
      const result = JSON.parse(out.slice(out.indexOf('\n') + 1)) as LoadResult;
      resolve({ ...result, proxyCpu: cpu / (performance.now() - wall0) });
    });
  });
}

function startBackends(port: number, ips: string[], children: ChildProcess[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = child(['--backends', String(port), ...ips], children);
    c.stdout!.on('data', (d) => { if (String(d).includes('ready')) resolve(); });
    c.on('exit', (code) => reject(new Error(`backends exited ${code}`)));
  });
}


const rps = (r: LoadResult) => r.requests / r.seconds;

/** The round with the median throughput. */
function median(rounds: LoadResult[]): LoadResult {
  return [...rounds].sort((a, b) => rps(a) - rps(b))[Math.floor(rounds.length / 2)];
}

function fmt(name: string, r: LoadResult): string {
  return `${name.padEnd(36)} ${rps(r).toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  errors ${r.errors}`;
}

async function main(): Promise<void> {
  process.env.BOSUN_LOG_LEVEL ??= 'warn';
  const { CloudService } = await import('../src/cloud/service.js');
  const { CloudClient } = await import('../src/cloud/client.js');
  const { LoadBalancerProxies } = await import('../src/cloud/load-balancer-proxy.js');
  const { HaproxyBalancers } = await import('../src/cloud/haproxy.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-lb-'));
  chmodSync(dataDir, 0o755);
  const service = new CloudService({ dataDir, bootDelayMs: 100, ignition: 'builtin', host: '127.0.0.1', port: 0 });
  const nodeProxy = new LoadBalancerProxies((id) => service.cloud.store.instances.get(id)?.privateIp);
  const children: ChildProcess[] = [];
  try {
    const client = new CloudClient(await service.start(), service.rootCredential);
    const instances = [];
    for (let i = 0; i < BACKENDS; i++) instances.push(await client.createInstance({ name: `bench-lb-${i}` }));
    const ips = instances.map((i) => i.privateIp);
    const nodePort = await freePort(ips[0]);
    await startBackends(nodePort, ips, children);
    const lbPort = await freePort('127.0.0.1');
    const lb = await client.ensureLoadBalancer('bench-lb', { ports: [{ protocol: 'TCP', port: lbPort, targetPort: nodePort }], targets: instances.map((i) => i.id), sourceRanges: [] });
    await service.syncProxies();
    // The same balancer on the Node proxy, on the next free port of its VIP.
    const nodeLbPort = await freePort(lb.address);
    await nodeProxy.sync([{ ...lb, ports: [{ ...lb.ports[0], port: nodeLbPort }] }]);
    const engines: { name: string; url: string; cpu: CpuOf }[] = [];
    if (service.proxies instanceof HaproxyBalancers && service.proxies.masterPid !== undefined) {
      engines.push({ name: 'haproxy', url: `http://${lb.address}:${lbPort}/`, cpu: { pid: service.proxies.masterPid } });
    } else {
      console.log(`haproxy: not measured (${service.proxies.reason ?? 'not running'})`);
    }
    engines.push({ name: 'node', url: `http://${lb.address}:${nodeLbPort}/`, cpu: 'self' });
    console.log(`${BACKENDS} backends (${ips.join(', ')}:${nodePort}), balancer ${lb.address}:${lbPort} (haproxy) and :${nodeLbPort} (Node proxy); ${CLIENTS} concurrent clients, ${SECONDS} s per case, median of ${ROUNDS} alternating rounds`);

    for (const mode of ['keepalive', 'close'] as const) {
      const label = mode === 'keepalive' ? 'keep-alive' : 'new connection/request';
      // Direct and through each engine alternate, ROUNDS times, and the median round of each is
      // shown: on a shared machine the load of other processes drifts within seconds.
      const direct: LoadResult[] = [];
      const via = new Map<string, LoadResult[]>(engines.map((e) => [e.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        direct.push(await runLoad(`http://${ips[0]}:${nodePort}/`, mode, children));
        for (const e of engines) via.get(e.name)!.push(await runLoad(e.url, mode, children, e.cpu));
      }
      const d = median(direct);
      console.log(fmt(`direct       ${label}`, d));
      for (const e of engines) {
        const v = median(via.get(e.name)!);
        // The engine's CPU share says whether it is the limit (the Node proxy: near 100%, its one core saturated).
        console.log(`${fmt(`via ${e.name.padEnd(8)} ${label}`, v)}  engine CPU ${(v.proxyCpu * 100).toFixed(0)}%`);
      }
      for (const e of engines) {
        const v = median(via.get(e.name)!);
        console.log(`ratio via-${e.name}/direct ${label}: throughput ${(rps(v) / rps(d)).toFixed(2)}, p99 ${(v.p99 / d.p99).toFixed(2)}x`);
      }
    }
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
    await nodeProxy.closeAll();
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--load') await load(process.argv[3], process.argv[4] as Mode);
else if (process.argv[2] === '--backends') await backends(Number(process.argv[3]), process.argv.slice(4));
else await main();
