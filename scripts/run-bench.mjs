#!/usr/bin/env node
// Runs the benchmarks in bench/ (every bench/*.ts, or the ones named: npm run bench -- apiserver).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const wanted = process.argv.slice(2);
const all = readdirSync('bench').filter((f) => f.endsWith('.ts')).sort();
const chosen = all.filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)));
let status = 0;
for (const file of chosen) {
  console.log(`\n=== bench/${file}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${file}`], { stdio: 'inherit' });
  if (r.status !== 0) status = r.status ?? 1;
}
process.exit(status);
