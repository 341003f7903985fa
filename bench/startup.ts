// Start-up cost of a bosun process: wall time and peak memory (max RSS) of compiled
// `bosun version` (loads only the CLI table), `bosun --help` (loads every command's module, as
// every command did before commands were loaded lazily) and a bare `node -e ''` as the floor, in
// one run. Builds dist/ first when it is stale. Usage: npm run bench:startup [-- RUNS]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.argv[2] ?? 15);
const root = fileURLToPath(new URL('..', import.meta.url));
// Prints the process's peak RSS (KiB) on stderr as it exits; a few KiB of its own.
const reportRss = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\nmaxrss='+process.resourceUsage().maxRSS+'\\n'))`;

function measure(args: string[]): { ms: number; mb: number } {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    const run = spawnSync(process.execPath, ['--import', reportRss, ...args], { cwd: root, encoding: 'utf8' });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (run.status !== 0) throw new Error(`${args.join(' ')} failed: ${run.stderr}`);
    rss.push(Number(/maxrss=(\d+)/.exec(run.stderr)?.[1]) / 1024);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: median(times), mb: median(rss) };
}

const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);

const floor = measure(['-e', '']);
const version = measure(['bin/bosun.js', 'version']);
const help = measure(['bin/bosun.js', '--help']);
console.log(`median of ${RUNS} runs, compiled (dist/)`);
console.log('command                 wall ms   peak MiB');
for (const [name, r] of [['node -e ""', floor], ['bosun version', version], ['bosun --help', help]] as const) {
  console.log(`${name.padEnd(22)}  ${r.ms.toFixed(0).padStart(7)}   ${r.mb.toFixed(1).padStart(8)}`);
}
console.log(`bosun version / bosun --help (every module loaded): time ${(version.ms / help.ms).toFixed(2)}×, memory ${(version.mb / help.mb).toFixed(2)}×`);
