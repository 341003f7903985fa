// probe: start cluster, print per-process breakdown, stop.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/listen.js';
import { rssMiB, start, stop, tree } from './bosun-start.js';
const dataDir = mkdtempSync(join(tmpdir(), 'lean-probe-'));
const ports = [await freePort(), await freePort(), await freePort()];
try {
  const install = await start(dataDir, ports, 3, 2);
  console.log('install seconds', install.seconds);
  await new Promise((r) => setTimeout(r, Number(process.env.SETTLE ?? 10000)));
  const pids = tree(install.child.pid!);
  const rows = pids.map((p) => {
    let cmd = '';
    try { cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean).map((a) => a.replace(/^.*\/(bin|dist)\//, '')).join(' ').slice(0, 110); } catch { /* */ }
    let pss = 0; try { pss = Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024; } catch { /* */ }
    return { p, mib: rssMiB([p]), cmd, pss };
  }).sort((a, b) => b.mib - a.mib);
  for (const r of rows) console.log(`${String(r.p).padStart(7)} ${r.mib.toFixed(1).padStart(7)} ${r.pss.toFixed(1).padStart(7)} ${r.cmd}`);
  console.log('total', rssMiB(pids).toFixed(1), 'pss', rows.reduce((a, r) => a + r.pss, 0).toFixed(1), 'processes', pids.length);
  if (process.env.HOLD) await new Promise((r) => setTimeout(r, Number(process.env.HOLD)));
  await stop(install.child);
} finally {
  spawnSync(process.execPath, ['bin/bosun.js', 'destroy', '--data-dir', dataDir], { cwd: '/work/wt-lean', stdio: 'inherit' });
  rmSync(dataDir, { recursive: true, force: true });
}
