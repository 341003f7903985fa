// One `bosun start` per data directory: the running one's pid is in <data-dir>/bosun.pid. A
// second start, or `bosun destroy`, on a directory in use is refused, naming the pid; a pid file
// left by a process that is gone (a crash, a kill -9) is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { secureDataDir } from '../../common/private-files.js';

function pidFile(dataDir: string): string {
  return join(dataDir, 'bosun.pid');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a live `bosun start` holding the directory, if any. */
export function holder(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(dataDir), 'utf8').trim());
  } catch {
    return undefined;
  }
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : undefined;
}

/**
 * Takes the directory for this process — private to this user, what other users could read in it
 * tightened or refused (common/private-files.ts) — and returns the function that gives it back.
 */
export function holdDataDir(dataDir: string): () => void {
  const other = holder(dataDir);
  if (other !== undefined) throw new Error(`${dataDir} is in use by bosun start (pid ${other}); stop it first (Ctrl-C, or kill ${other})`);
  secureDataDir(dataDir);
  writeFileSync(pidFile(dataDir), `${process.pid}\n`);
  return () => {
    try {
      if (Number(readFileSync(pidFile(dataDir), 'utf8').trim()) === process.pid) rmSync(pidFile(dataDir), { force: true });
    } catch {
      // already gone
    }
  };
}
