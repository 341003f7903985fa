// The local cluster's budgets, measured on `bosun start` as a user runs it (compiled, dist/ built
// first when stale), in a fresh data directory: time from start to "bosun is up"; the
// memory of every process of the cluster (the start process and every pod process below it, RSS
// summed) and their CPU while idle; Ctrl-C; the time a second start takes to bring it back; then
// `bosun destroy`. Budgets from issue 13: install < 3 min, restart < 1 min, memory < 3 GB, idle CPU
// < 25% of one core; each figure is printed beside its budget, as a ratio.
// Usage: npm run bench:install [-- MASTERS WORKERS]. Binds what `bosun start` binds (127.0.100.1,
// 127.0.0.1:22623/22624, machines on 127.0.1.N), with the API, update service and cloud on free ports.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/common/listen.js';

const [masters, workers] = [Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 2)];
const root = fileURLToPath(new URL('..', import.meta.url));
const IDLE_SECONDS = 30;
const TICKS_PER_SECOND = 100;


/** Every process below `pid` (and itself), from /proc. */
function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const walk = (p: number) => { out.push(p); for (const c of children.get(p) ?? []) walk(c); };
  walk(pid);
  return out;
}

function rssMiB(pids: number[]): number {
  let kib = 0;
  for (const p of pids) {
    try { kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0); } catch { /* gone */ }
  }
  return kib / 1024;
}

function cpuTicks(pids: number[]): number {
  let ticks = 0;
  for (const p of pids) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone */ }
  }
  return ticks;
}

/** Runs `bosun start` and resolves when it prints `marker`, with the seconds it took. */
function start(dataDir: string, ports: number[]): Promise<{ child: ChildProcess; seconds: number }> {
  const [api, updates, cloud] = ports;
  const started = Date.now();
  const child = spawn(process.execPath, ['bin/bosun.js', 'start', '--data-dir', dataDir, '--listen', `127.0.0.1:${api}`, '--update-service', `127.0.0.1:${updates}`, '--cloud', `127.0.0.1:${cloud}`, '--masters', String(masters), '--workers', String(workers)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGINT'); reject(new Error(`bosun start did not finish within 6 minutes:\n${out.slice(-2000)}`)); }, 360_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      process.stdout.write(d.toString().split('\n').filter((l) => /^\[\d/.test(l)).map((l) => `  ${l}\n`).join(''));
      if (/bosun is up/.test(out)) { clearTimeout(timer); resolve({ child, seconds: (Date.now() - started) / 1000 }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`bosun start exited (${code}):\n${out.slice(-2000)}`)); });
  });
}

function stop(child: ChildProcess): Promise<number> {
  const t = Date.now();
  return new Promise((resolve) => { child.removeAllListeners('exit'); child.once('exit', () => resolve((Date.now() - t) / 1000)); child.kill('SIGINT'); });
}

const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-install-'));
const ports = [await freePort(), await freePort(), await freePort()];
try {
  console.log(`fresh install: ${masters} masters, ${workers} workers`);
  const install = await start(dataDir, ports);
  await new Promise((r) => setTimeout(r, 10_000));
  const pids = tree(install.child.pid!);
  const memory = rssMiB(pids);
  const t0 = cpuTicks(pids);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const idle = ((cpuTicks(pids) - t0) / TICKS_PER_SECOND / IDLE_SECONDS) * 100;
  const stopped = await stop(install.child);
  console.log('restart');
  const restart = await start(dataDir, ports);
  await stop(restart.child);
  const row = (what: string, value: number, unit: string, budget: number) =>
    console.log(`${what.padEnd(26)} ${value.toFixed(1).padStart(8)} ${unit.padEnd(4)} budget ${String(budget).padStart(5)} ${unit.padEnd(4)} ${(value / budget).toFixed(2)}× of budget`);
  console.log(`\nfigure                        value      budget`);
  row('install to Available', install.seconds, 's', 180);
  row('restart to Available', restart.seconds, 's', 60);
  row(`memory, ${pids.length} processes`, memory, 'MiB', 3072);
  row(`idle CPU over ${IDLE_SECONDS}s`, idle, '%', 25);
  console.log(`(Ctrl-C stopped the installed cluster in ${stopped.toFixed(1)} s)`);
} finally {
  spawnSync(process.execPath, ['bin/bosun.js', 'destroy', '--data-dir', dataDir], { cwd: root, stdio: 'inherit' });
  rmSync(dataDir, { recursive: true, force: true });
}
