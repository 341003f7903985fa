#!/usr/bin/env node
// Runs every test/**/*.test.ts file with node's built-in test runner (through tsx), so the
// runner's own summary ("# pass N", "# fail N") is what gets printed.
// Usage: npm test [-- PATH_FRAGMENT ...]   (only files whose path contains a fragment)
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = find('test').sort().filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const args = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=180000', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...files];
const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(result.status ?? 1);
