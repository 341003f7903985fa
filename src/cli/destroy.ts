// `bosun destroy`: removes a local cluster — its machines (and any of their processes a crashed
// start left running), state, certificates and releases — unless a `bosun start` is using it.
import type { Command } from 'commander';
import { existsSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { holder } from '../cluster/install/data-dir-lock.js';

/** Processes whose working directory is inside `dir` (pods run in their machine's root). */
function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cwd = readlinkSync(join('/proc', entry, 'cwd'));
      if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

export function register(program: Command): void {
  program
    .command('destroy')
    .description('remove a local cluster: its machines, state, certificates and releases')
    .option('--data-dir <dir>', 'the cluster to remove', '.bosun')
    .addHelpText('after', `
Refused while a bosun start is using the directory (stop it first with Ctrl-C).

Example:
  $ bosun destroy
  destroyed the cluster in .bosun (5 machines)`)
    .action((opts: { dataDir: string }) => {
      const dir = resolve(opts.dataDir);
      if (!existsSync(dir)) {
        console.log(`nothing to destroy: ${opts.dataDir} does not exist`);
        return;
      }
      const pid = holder(dir);
      if (pid !== undefined) throw new Error(`${opts.dataDir} is in use by bosun start (pid ${pid}); stop it first (Ctrl-C, or kill ${pid})`);
      const machinesDir = join(dir, 'machines');
      const machines = existsSync(machinesDir) ? readdirSync(machinesDir).length : 0;
      const strays = existsSync(machinesDir) ? processesIn(machinesDir) : [];
      for (const p of strays) {
        try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
      }
      rmSync(dir, { recursive: true, force: true });
      console.log(`destroyed the cluster in ${opts.dataDir} (${machines} machine${machines === 1 ? '' : 's'}${strays.length ? `; stopped ${strays.length} leftover process${strays.length === 1 ? '' : 'es'}` : ''})`);
    });
}
