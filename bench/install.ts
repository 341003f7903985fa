// The local cluster's budgets, measured on `bosun start` as a user runs it (compiled, dist/ built
// first when stale), in a fresh data directory: time from start to "bosun is up", and where it
// went (bench/lib/install-timeline.ts: each step and wait, and when each node, operator pod and
// ClusterOperator got ready); the
// memory of every process of the cluster (the start process and every pod process below it, RSS
// summed, with each process's share beside it) and their CPU while idle; Ctrl-C; the time a second
// start takes to bring it back; then `bosun destroy`. Budgets: install < 15 s and memory < 1.2 GiB
// (issue 26; the Prometheus pod's processes — the prometheus binary and bosun's wrapper of it — on
// a line of their own, not counted), restart < 1 min and idle CPU < 25% of one core (issue 13);
// each figure is printed beside its budget, as a ratio. The memory is also given as PSS, which
// counts a page that processes share (node's own code, mapped by every process) once.
// Usage: npm run bench:install [-- MASTERS WORKERS]. Binds what `bosun start` binds (127.0.100.1,
// 127.0.0.1:22623/22624, machines on 127.0.1.N), with the API, update service and cloud on free ports.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/common/listen.js';
import { printInstallTimeline } from './lib/install-timeline.js';
import { cpuTicks, processMemory, start, stop, tree, type ProcessMemory } from './lib/bosun-start.js';

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
  // The CPU the install took, every process of the cluster (those that already exited included),
  // and each process's share of it, read at once: the components keep working after Available.
  const atUp = processMemory(tree(install.child.pid!));
  const installCpu = cpuTicks(tree(install.child.pid!), true) / TICKS_PER_SECOND;
  await printInstallTimeline({ kubeconfigPath: join(dataDir, 'kubeconfig'), startedAt: install.startedAt, lines: install.lines });
  await new Promise((r) => setTimeout(r, 10_000));
  const pids = tree(install.child.pid!);
  const processes = processMemory(pids);
  const isPrometheus = (p: ProcessMemory) => p.component === 'prometheus';
  const counted = processes.filter((p) => !isPrometheus(p));
  const prometheus = processes.filter(isPrometheus);
  const sum = (list: ProcessMemory[], key: 'rssMiB' | 'pssMiB') => list.reduce((total, p) => total + p[key], 0);
  const memory = sum(counted, 'rssMiB');
  printBreakdown(processes, new Map(atUp.map((p) => [p.pid, p.cpuSeconds])));
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
  row('install to Available', install.seconds, 's', 15);
  row('restart to Available', restart.seconds, 's', 60);
  row(`memory, ${counted.length} processes (RSS)`, memory, 'MiB', 1228.8);
  row(`idle CPU over ${IDLE_SECONDS}s`, idle, '%', 25);
  console.log(`(the same ${counted.length} processes' PSS: ${sum(counted, 'pssMiB').toFixed(1)} MiB; Prometheus, not counted: ${prometheus.length} processes, ${sum(prometheus, 'rssMiB').toFixed(1)} MiB RSS)`);
  console.log('(RSS counts every page a process has in memory, a page shared between processes — the node binary\'s code above all — in each of them; PSS counts a shared page once, split between the processes sharing it: the PSS sum is what the cluster takes from the machine, the RSS sum what the budget is written in)');
  console.log(`(CPU the install used until Available, every process of the cluster: ${installCpu.toFixed(1)} s, ${(installCpu / install.seconds).toFixed(2)} cores on average)`);
  console.log(`(Ctrl-C stopped the installed cluster in ${stopped.toFixed(1)} s)`);
} finally {
  spawnSync(process.execPath, ['bin/bosun.js', 'destroy', '--data-dir', dataDir], { cwd: root, stdio: 'inherit' });
  rmSync(dataDir, { recursive: true, force: true });
}

/** One line per component: its processes, their RSS (each and summed) and PSS, and the CPU they had
 *  used when the cluster became Available; `bosun start` first. */
function printBreakdown(processes: ProcessMemory[], cpuAtUp: Map<number, number>): void {
  const groups = new Map<string, ProcessMemory[]>();
  for (const p of processes) groups.set(p.component, [...(groups.get(p.component) ?? []), p]);
  const label = (component: string) => (component === 'start' ? 'bosun start (API, cloud, agents, per-node daemons)' : component === 'prometheus' ? 'prometheus (not counted)' : component);
  console.log(`\n${'process'.padEnd(52)} ${'count'.padStart(5)} ${'RSS each, MiB'.padStart(14)} ${'RSS'.padStart(7)} ${'PSS'.padStart(7)} ${'CPU s to Available'.padStart(19)}`);
  const ordered = [...groups].sort(([a, x], [b, y]) => Number(b === 'start') - Number(a === 'start') || Number(a === 'prometheus') - Number(b === 'prometheus') || y.reduce((t, p) => t + p.rssMiB, 0) - x.reduce((t, p) => t + p.rssMiB, 0));
  for (const [component, list] of ordered) {
    const each = list.map((p) => p.rssMiB).sort((a, b) => a - b);
    const range = each.length === 1 ? each[0].toFixed(0) : `${each[0].toFixed(0)}–${each[each.length - 1].toFixed(0)}`;
    console.log(`${label(component).padEnd(52)} ${String(list.length).padStart(5)} ${range.padStart(14)} ${list.reduce((t, p) => t + p.rssMiB, 0).toFixed(1).padStart(7)} ${list.reduce((t, p) => t + p.pssMiB, 0).toFixed(1).padStart(7)} ${list.reduce((t, p) => t + (cpuAtUp.get(p.pid) ?? 0), 0).toFixed(1).padStart(19)}`);
  }
}
