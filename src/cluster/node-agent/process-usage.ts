// What a container's process tree uses, read from /proc as a local machine can measure it: CPU
// seconds from /proc/<pid>/stat (utime + stime of every live process in the tree, plus cutime +
// cstime, what each one's finished children used), and the working set as the tree's resident
// memory (VmRSS of /proc/<pid>/status; shared pages are counted once per process, so this is an
// upper bound of what a cgroup would report). The parsers are pure; readProcesses() is the one
// read of /proc that a scrape shares between all its containers.
import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports CPU times in USER_HZ ticks, 100 a second on every architecture's user ABI. */
export const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in seconds. */
  cpuSeconds: number;
}

/**
 * /proc/<pid>/stat: `pid (comm) state ppid …`, with utime, stime, cutime, cstime as fields 14–17.
 * The command may hold spaces and parentheses, so fields are counted from the last `)`.
 */
export function parseStat(text: string): ProcessStat | undefined {
  const close = text.lastIndexOf(')');
  const pid = Number.parseInt(text, 10);
  if (close < 0 || !Number.isInteger(pid)) return undefined;
  // After the command: state (field 3) is rest[0], so field n is rest[n - 3].
  const rest = text.slice(close + 2).trim().split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const ticks = field(14) + field(15) + field(16) + field(17);
  if (!Number.isFinite(ticks) || !Number.isFinite(field(4))) return undefined;
  return { pid, ppid: field(4), cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND };
}

/** A thread's own CPU time (utime + stime of /proc/<pid>/task/<tid>/stat, in seconds): a task's
 *  cutime and cstime are its process's, not its own. */
export function parseThreadCpuSeconds(text: string): number | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const rest = text.slice(close + 2).trim().split(/\s+/);
  const ticks = Number(rest[14 - 3]) + Number(rest[15 - 3]);
  return Number.isFinite(ticks) ? ticks / CLOCK_TICKS_PER_SECOND : undefined;
}

/** VmRSS of /proc/<pid>/status in bytes (0 for a process without one, such as a zombie). */
export function parseRssBytes(status: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

export interface Usage {
  cpuSeconds: number;
  memoryBytes: number;
}

/** Every process's stat now (processes that end while being read are skipped). */
export function readProcesses(proc = '/proc'): Map<number, ProcessStat> {
  const out = new Map<number, ProcessStat>();
  for (const name of readdirSync(proc)) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = parseStat(readFileSync(`${proc}/${name}/stat`, 'utf8'));
      if (stat) out.set(stat.pid, stat);
    } catch {
      // Gone since the directory was read.
    }
  }
  return out;
}

/** The pids of `root` and all its live descendants in `processes`. */
export function processTree(root: number, processes: Map<number, ProcessStat>): number[] {
  const children = new Map<number, number[]>();
  for (const p of processes.values()) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const tree: number[] = [];
  const queue = processes.has(root) ? [root] : [];
  while (queue.length) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** What the tree under `root` uses now; undefined when the process is gone. */
export function treeUsage(root: number, processes: Map<number, ProcessStat>, proc = '/proc'): Usage | undefined {
  const tree = processTree(root, processes);
  if (tree.length === 0) return undefined;
  let cpuSeconds = 0;
  let memoryBytes = 0;
  for (const pid of tree) {
    cpuSeconds += processes.get(pid)!.cpuSeconds;
    try {
      memoryBytes += parseRssBytes(readFileSync(`${proc}/${pid}/status`, 'utf8'));
    } catch {
      // Ended since its stat was read: its CPU time is in its parent's cutime from now on.
    }
  }
  return { cpuSeconds, memoryBytes };
}
