#!/usr/bin/env node
// Runs every test/**/*.test.ts file with node's built-in test runner (through tsx), one process
// per file, TEST_CONCURRENCY (default 4) files at a time.
// Usage: npm test [-- PATH_FRAGMENT ...]   (only files whose path contains a fragment)
//        npm run test:e2e                  (the end-to-end scenarios, marked `test: e2e`)
//
// Files that bind the local cloud's shared addresses (machines on 127.0.1.N, pod IPs on
// 127.1.N.x, balancers on 127.0.200.M, cluster IPs on 127.30.x: every test's cloud hands out the
// same ones) say so with the marker `test: shared-addresses`. As root, each such file runs in a
// network namespace of its own (`unshare --net`, its own loopback), so they run side by side;
// without that they run one at a time. They are whole clusters, so at most TEST_HEAVY (default 2)
// run at once, and they start first: the long ones set the suite's time.
//
// A file runs to its end even when something of it keeps its process alive after its last hook
// (whole-cluster files run with --test-force-exit), and whatever it leaves running is stopped when
// it ends, however it ended — its time bound, a crash: every process started under a file carries
// BOSUN_TEST_RUN=<run id> in its environment (the local cloud's haproxy outlives its cloud on
// purpose, so that balancers survive a crash of their cloud; node's test runner kills only the
// file's process at its time bound; a process may have left the file's process group), and the
// processes that still carry it once the file's process is gone are killed and named.
//
// Each file's output is printed whole when it ends, without the components' JSON log lines, which
// go to test-logs/<file>.log with the rest. The end prints the failed tests with their errors,
// the slowest files, the files that used the most CPU (the file's process and every process it
// waited for, from the shell's `times`) and the sum ("tests: N passed, N failed, N skipped").
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

// `--e2e` (npm run test:e2e): only the end-to-end scenarios, files marked `test: e2e` (a whole
// cluster and minutes each: the Cluster API quick start with a rollout, alerts fired by stopped
// operators, a cluster restored from a backup). Without it they are left out, so that `npm test`
// stays within its time on 2 cores; a path fragment naming one still runs it.
const e2e = process.argv.includes('--e2e');
const filters = process.argv.slice(2).filter((a) => a !== '--e2e');
// Each file says what it needs with its markers; read once.
const markers = new Map(find('test').map((f) => [f, readFileSync(f, 'utf8')]));
const isE2e = (f) => markers.get(f).includes('test: e2e');
const isHeavy = (f) => markers.get(f).includes('test: shared-addresses');
const files = [...markers.keys()].sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => (e2e ? isE2e(f) : filters.length > 0 || !isE2e(f)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// The bosun processes tests start (the CLI, API servers, and a local cluster's components) run
// compiled code when dist/ is fresh, else the sources through tsx, which costs a quarter more CPU
// in every one of them: compile first, as npm start does (15 s), unless TEST_NO_BUILD is set.
if (!process.env.TEST_NO_BUILD) {
  const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** A network namespace of one's own needs root, util-linux's unshare and iproute2's ip. */
function canIsolate() {
  if (process.env.TEST_NO_NETNS) return false;
  const r = spawnSync('unshare', ['--net', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
  return r.status === 0;
}
const isolate = files.some(isHeavy) && canIsolate();
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 4));
const heavyLimit = isolate ? Math.max(1, Number(process.env.TEST_HEAVY ?? 2)) : 1;
// The whole clusters first (they are the long ones), then the rest in path order.
const queue = [...files.filter(isHeavy), ...files.filter((f) => !isHeavy(f))];
const logDir = 'test-logs';
mkdirSync(logDir, { recursive: true });

// node applies --test-timeout to each test and to the file as a whole: 15 min bounds both (most
// tests set a shorter bound of their own), or what the file's marker `test: timeout <seconds>`
// asks for (an end-to-end scenario that installs a cluster and upgrades it under faults).
const timeoutOf = (file) => Number(/test: timeout (\d+)/.exec(markers.get(file))?.[1] ?? 900) * 1000;
const nodeArgs = (file) => ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-timeout=${timeoutOf(file)}`, ...(isHeavy(file) ? ['--test-force-exit'] : []), file];
const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

// Each file runs in a process group of its own: stopping the run stops every file's whole tree.
// (pid of the file's process → its run id, for what it leaves running)
const groups = new Map();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    for (const pid of groups.keys()) {
      try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
    }
    for (const run of groups.values()) reap(run);
    process.exit(130);
  });
}

/** The processes (pid and command line) whose environment carries BOSUN_TEST_RUN=`run`. */
function processesOfRun(run) {
  const marker = Buffer.from(`\0BOSUN_TEST_RUN=${run}\0`);
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${name}/environ`)]).includes(marker)) continue;
      found.push({ pid: Number(name), args: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}

/** Kills what a finished file left running; a line naming each, for its output. */
function reap(run) {
  const left = existsSync('/proc/self/environ') ? processesOfRun(run) : [];
  for (const { pid } of left) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
  }
  return left.map(({ pid, args }) => `left running by this file, killed: pid ${pid}: ${args.slice(0, 200)}`);
}

let runs = 0;

/** Runs one file; resolves with its exit code, counts, output and duration. */
function runFile(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const run = `${process.pid}.${++runs}`;
    // kubectl's discovery cache of its own (KUBECACHEDIR): the cache is kept per host:port, and
    // the random ports of one file's API servers are another file's later; a stale cache lists
    // kinds the new server does not serve (kubectl get <category> then fails on them).
    const kubeCache = mkdtempSync(join(tmpdir(), 'bosun-kubectl-cache-'));
    const options = { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, BOSUN_TEST_RUN: run, KUBECACHEDIR: kubeCache } };
    // Through a shell whose `times` reports, on fd 3, the CPU time of the file's process and of
    // every process it waited for (a cluster's components, kubectl …; not what outlived it).
    const command = `${[process.execPath, ...nodeArgs(file)].map(quote).join(' ')}; s=$?; times >&3; exit $s`;
    const child = isolate && isHeavy(file)
      ? spawn('unshare', ['--net', 'sh', '-c', `ip link set lo up && { ${command}; }`], options)
      : spawn('sh', ['-c', command], options);
    groups.set(child.pid, run);
    const chunks = [];
    let times = '';
    child.stdio[3].on('data', (c) => (times += c));
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    // At its exit, before its output ends: something it left running may hold its output open.
    let reaped = [];
    child.on('exit', () => { reaped = reap(run); });
    child.on('close', (code, signal) => {
      groups.delete(child.pid);
      rmSync(kubeCache, { recursive: true, force: true });
      reaped.push(...reap(run));
      const output = Buffer.concat(chunks).toString('utf8') + reaped.map((l) => `${l}\n`).join('');
      const counts = { pass: 0, fail: 0, skipped: 0 };
      for (const m of output.matchAll(/^ℹ (pass|fail|skipped) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
      resolve({ file, code: code ?? (signal ? 1 : 0), output, counts, seconds: (Date.now() - started) / 1000, cpuSeconds: childrenCpuSeconds(times) });
    });
  });
}

/** The children's user + system time from the shell's `times` (its second line: "0m12.340s 0m1.500s"); NaN if it did not get to say. */
function childrenCpuSeconds(times) {
  const line = times.trim().split('\n')[1] ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return parts.length === 2 ? parts[0] + parts[1] : NaN;
}

/** The spec reporter's closing "✖ failing tests:" section, errors cut to their first lines. */
function failures(output) {
  const at = output.lastIndexOf('✖ failing tests:');
  if (at < 0) return [];
  const out = [];
  let errorLines = 0;
  for (const line of output.slice(at).split('\n').slice(1)) {
    if (line.startsWith('{"level"')) continue;
    if (line.startsWith('test at ') || line.startsWith('✖ ')) { out.push(line); errorLines = 0; continue; }
    if (line.trim() === '' || /^\s+at /.test(line)) continue;
    if (errorLines++ < 12) out.push(line);
  }
  return out;
}

/**
 * The last warnings and errors the components logged (pino JSON, level ≥ 40), one short line each:
 * what CI's tail shows of a failed file besides its assertion, since its whole log stays behind.
 */
function logWarnings(output, count = 25) {
  const out = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{"level"')) continue;
    let entry;
    try { entry = JSON.parse(line); } catch { continue; }
    if (typeof entry.level !== 'number' || entry.level < 40) continue;
    const time = typeof entry.time === 'string' || typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
    const who = entry.component ?? entry.name ?? entry.controller ?? '';
    const err = entry.err?.message ?? (typeof entry.err === 'string' ? entry.err : '');
    out.push(`${time} ${entry.level >= 50 ? 'ERROR' : 'WARN'} ${who ? `[${who}] ` : ''}${entry.msg ?? ''}${err ? `: ${err}` : ''}`.slice(0, 300));
  }
  return out.slice(-count);
}

const results = [];
const runStarted = Date.now();
let running = 0;
let heavyRunning = 0;
await new Promise((done) => {
  const next = () => {
    if (queue.length === 0 && running === 0) return done();
    while (running < concurrency && queue.length > 0) {
      const i = heavyRunning < heavyLimit ? 0 : queue.findIndex((f) => !isHeavy(f));
      if (i < 0) break;
      const [file] = queue.splice(i, 1);
      const heavy = isHeavy(file);
      running++;
      if (heavy) heavyRunning++;
      runFile(file).then((r) => {
        running--;
        if (heavy) heavyRunning--;
        results.push(r);
        writeFileSync(join(logDir, `${file.replaceAll('/', '_')}.log`), r.output);
        const shown = r.output.split('\n').filter((l) => !l.startsWith('{"level"')).join('\n');
        process.stdout.write(`\n━━ ${file} (${r.seconds.toFixed(0)} s, CPU ${Number.isNaN(r.cpuSeconds) ? '?' : r.cpuSeconds.toFixed(0)} s, exit ${r.code})\n${shown}\n`);
        next();
      });
    }
  };
  next();
});

const sum = (k) => results.reduce((n, r) => n + r.counts[k], 0);
const failed = results.filter((r) => r.code !== 0);
console.log('\nslowest files:');
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 8)) console.log(`  ${r.seconds.toFixed(0).padStart(5)} s  ${r.file}`);
// On 2 cores the suite is bound by CPU, not by the files' waits: these are what its time is made of.
const cpu = results.filter((r) => !Number.isNaN(r.cpuSeconds));
console.log(`most CPU (of ${cpu.reduce((n, r) => n + r.cpuSeconds, 0).toFixed(0)} s in all, over ${((Date.now() - runStarted) / 1000).toFixed(0)} s):`);
for (const r of [...cpu].sort((a, b) => b.cpuSeconds - a.cpuSeconds).slice(0, 8)) console.log(`  ${r.cpuSeconds.toFixed(0).padStart(5)} s  ${r.file}`);
if (failed.length > 0) {
  console.log(`\nfailed files (${failed.length}; whole logs in ${logDir}/):`);
  for (const r of failed) {
    console.log(`\n✖ ${r.file} (exit ${r.code})`);
    const lines = failures(r.output);
    console.log((lines.length ? lines : r.output.split('\n').filter((l) => !l.startsWith('{"level"')).slice(-15)).map((l) => `  ${l}`).join('\n'));
    const warnings = logWarnings(r.output);
    if (warnings.length > 0) console.log(`  the components' last warnings and errors:\n${warnings.map((l) => `    ${l}`).join('\n')}`);
  }
}
console.log(`\ntests: ${sum('pass')} passed, ${sum('fail')} failed, ${sum('skipped')} skipped (${files.length} files${isolate ? '; shared-address files in network namespaces of their own' : ''})`);
if (!e2e && filters.length === 0) console.log(`(the end-to-end scenarios run with npm run test:e2e: ${[...markers.keys()].filter(isE2e).length} files)`);
process.exit(failed.length > 0 ? 1 : 0);
