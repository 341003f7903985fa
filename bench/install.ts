// The local cluster's budgets, measured on `bosun start` as a user runs it (compiled, dist/ built
// first when stale), in a fresh data directory: time from start to "bosun is up"; the
// memory of every process of the cluster (the start process and every pod process below it, RSS
// summed) and their CPU while idle; Ctrl-C; the time a second start takes to bring it back; then
// `bosun destroy`. Budgets from issue 13: install < 3 min, restart < 1 min, memory < 3 GB, idle CPU
// < 25% of one core; each figure is printed beside its budget, as a ratio.
// Usage: npm run bench:install [-- MASTERS WORKERS]. Binds what `bosun start` binds (127.0.100.1,
// 127.0.0.1:22623/22624, machines on 127.0.1.N), with the API, update service and cloud on free ports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/common/listen.js';
import { cpuTicks, rssMiB, start, stop, tree } from './lib/bosun-start.js';

const [masters, workers] = [Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 2)];
const root = fileURLToPath(new URL('..', import.meta.url));
const IDLE_SECONDS = 30;
const TICKS_PER_SECOND = 100;


const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-install-'));
const ports = [await freePort(), await freePort(), await freePort()];
try {
  console.log(`fresh install: ${masters} masters, ${workers} workers`);
  const install = await start(dataDir, ports, masters, workers);
  await new Promise((r) => setTimeout(r, 10_000));
  const pids = tree(install.child.pid!);
  const memory = rssMiB(pids);
  const t0 = cpuTicks(pids);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const idle = ((cpuTicks(pids) - t0) / TICKS_PER_SECOND / IDLE_SECONDS) * 100;
  const stopped = await stop(install.child);
  console.log('restart');
  const restart = await start(dataDir, ports, masters, workers);
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
