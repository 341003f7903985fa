#!/usr/bin/env node
// Runs the benchmarks in bench/ (every bench/*.ts, or the ones named: npm run bench -- apiserver);
// arguments that name no benchmark go to the chosen ones (npm run bench:nodes -- 100).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const all = readdirSync('bench').filter((f) => f.endsWith('.ts')).sort();
const names = (a) => all.some((f) => f.startsWith(a));
const wanted = process.argv.slice(2).filter(names);
const passed = process.argv.slice(2).filter((a) => !names(a));
const chosen = all.filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)));
// The components a benchmark starts (bosun apiserver, the local cluster's pods) run what bin/bosun.js
// runs: the compiled build when it is fresh, else the sources through tsx, which a benchmark must not
// measure. So build first when the sources are newer than dist/, as npm start does.
const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
let status = 0;
for (const file of chosen) {
  console.log(`\n=== bench/${file}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${file}`, ...passed], { stdio: 'inherit' });
  if (r.status !== 0) status = r.status ?? 1;
}
process.exit(status);
