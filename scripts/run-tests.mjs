#!/usr/bin/env node
// Runs every test/**/*.test.ts file with node's built-in test runner (through tsx).
// Usage: npm test [-- PATH_FRAGMENT ...]   (only files whose path contains a fragment)
//        npm run test:e2e                  (the end-to-end scenarios, marked `test: e2e`)
//
// Files that bind the local cloud's shared addresses (machines on 127.0.1.N, pod IPs on
// 127.1.N.x, balancers on 127.0.200.M: each test's cloud hands out the same ones) say so with the
// marker `test: shared-addresses` and run one at a time, beside the other files, which run
// TEST_CONCURRENCY (default 2) at a time. Each group prints node's own summary; the last line sums
// both ("tests: N passed, N failed, N skipped").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

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
const files = [...markers.keys()].sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => (e2e ? isE2e(f) : filters.length > 0 || !isE2e(f)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const exclusive = files.filter((f) => markers.get(f).includes('test: shared-addresses'));
const shared = files.filter((f) => !exclusive.includes(f));

/** Runs one group; streams its output and resolves with its exit code and summary counts. */
function run(group, concurrency) {
  return new Promise((resolve) => {
    const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=480000', `--test-concurrency=${concurrency}`, ...group];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const counts = { pass: 0, fail: 0, skipped: 0 };
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        const m = /^ℹ (pass|fail|skipped) (\d+)$/.exec(line);
        if (m) counts[m[1]] = Number(m[2]);
      }
    });
    child.on('close', (code) => resolve({ code: code ?? 1, counts }));
  });
}

const results = await Promise.all([
  shared.length ? run(shared, process.env.TEST_CONCURRENCY ?? 2) : undefined,
  exclusive.length ? run(exclusive, 1) : undefined,
].filter(Boolean));
const sum = (k) => results.reduce((n, r) => n + r.counts[k], 0);
console.log(`\ntests: ${sum('pass')} passed, ${sum('fail')} failed, ${sum('skipped')} skipped`);
if (!e2e && filters.length === 0) console.log(`(the end-to-end scenarios run with npm run test:e2e: ${[...markers.keys()].filter(isE2e).length} files)`);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
