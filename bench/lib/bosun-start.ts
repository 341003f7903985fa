// `bosun start` as a user runs it, for the benchmarks that measure a whole local cluster: start it
// (resolving when it says "bosun is up"), stop it with Ctrl-C, and read the memory and CPU of its
// process tree (the start process, the machines' agents and every pod process) from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every process below `pid` (and itself), from /proc. */
export function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const walk = (p: number) => { out.push(p); for (const c of children.get(p) ?? []) walk(c); };
  walk(pid);
  return out;
}

export function rssMiB(pids: number[]): number {
  let kib = 0;
  for (const p of pids) {
    try { kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0); } catch { /* gone */ }
  }
  return kib / 1024;
}

export interface ProcessMemory {
  pid: number;
  /** `start` (the bosun start process), a component's subcommand (a pod's process), or another program's name. */
  component: string;
  rssMiB: number;
  /** Proportional set size: pages shared with other processes (node's own code, above all) split among them. */
  pssMiB: number;
  /** CPU time it has used so far (user and system). */
  cpuSeconds: number;
}

/** Each process's memory, named by the bosun subcommand it runs (or the program). */
export function processMemory(pids: number[]): ProcessMemory[] {
  const out: ProcessMemory[] = [];
  for (const pid of pids) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const script = argv.findIndex((a) => /(bin\/bosun\.js|cli\/main\.(js|ts))$/.test(a));
      const component = script >= 0 ? (argv[script + 1] ?? 'bosun') : (argv[0] ?? '?').split('/').pop()!;
      const pss = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
      out.push({ pid, component, rssMiB: rssMiB([pid]), pssMiB: pss, cpuSeconds: cpuTicks([pid]) / TICKS_PER_SECOND });
    } catch { /* gone */ }
  }
  return out;
}

const TICKS_PER_SECOND = 100;

/** The CPU time of the processes (user and system), in clock ticks (100 a second); with
 *  `withReapedChildren`, also that of their children that have exited and been waited for. */
export function cpuTicks(pids: number[], withReapedChildren = false): number {
  let ticks = 0;
  for (const p of pids) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + (withReapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    } catch { /* gone */ }
  }
  return ticks;
}

/** A line `bosun start` printed, with the seconds since it was started when the bench read it. */
export interface OutputLine {
  at: number;
  text: string;
}

/** Runs `bosun start` and resolves when it says "bosun is up", with the seconds it took, when it
 *  was started (epoch ms) and every line it printed until then, stamped as it arrived. Its step
 *  lines ([n/N]) are echoed as they come. */
export function start(dataDir: string, ports: number[], masters: number, workers: number): Promise<{ child: ChildProcess; seconds: number; startedAt: number; lines: OutputLine[] }> {
  const [api, updates, cloud] = ports;
  const started = Date.now();
  const child = spawn(process.execPath, ['bin/bosun.js', 'start', '--data-dir', dataDir, '--listen', `127.0.0.1:${api}`, '--update-service', `127.0.0.1:${updates}`, '--cloud', `127.0.0.1:${cloud}`, '--masters', String(masters), '--workers', String(workers)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let partial = '';
    const lines: OutputLine[] = [];
    const timer = setTimeout(() => { child.kill('SIGINT'); reject(new Error(`bosun start did not finish within 6 minutes:\n${out.slice(-2000)}`)); }, 360_000);
    child.stdout!.on('data', (d: Buffer) => {
      const at = (Date.now() - started) / 1000;
      out += d.toString();
      const complete = (partial + d.toString()).split('\n');
      partial = complete.pop()!;
      for (const text of complete) lines.push({ at, text });
      process.stdout.write(d.toString().split('\n').filter((l) => /^\[\d/.test(l)).map((l) => `  ${l}\n`).join(''));
      if (/bosun is up/.test(out)) { clearTimeout(timer); resolve({ child, seconds: (Date.now() - started) / 1000, startedAt: started, lines }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`bosun start exited (${code}):\n${out.slice(-2000)}`)); });
  });
}

export function stop(child: ChildProcess): Promise<number> {
  const t = Date.now();
  return new Promise((resolve) => { child.removeAllListeners('exit'); child.once('exit', () => resolve((Date.now() - t) / 1000)); child.kill('SIGINT'); });
}

