// One run of a container as a child process: spawned with its environment, its stdout and stderr
// written to the container's log file in the CRI log format the kubelet's log files use
// (`<RFC3339Nano> <stream> F <line>`), and stopped the way the kubelet stops a container: SIGTERM,
// then SIGKILL once the grace period is over. Containers run at a lower CPU priority (nice
// CONTAINER_NICE) than the process that hosts the machines: on one machine that host carries what
// a real cluster keeps off its workloads' CPUs — the API server, the cloud's load balancers, the
// node agents' service proxies — and a kubelet reserves CPU for the system the same way
// (system-reserved); without it, a burst of pods starting during an upgrade starves the API.
import { spawn, type ChildProcess } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';

export interface ProcessSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
}

export interface ProcessExit {
  exitCode: number;
  signal?: string;
  finishedAt: string;
  /** Why it could not start (spawn error), when it did not. */
  error?: string;
}

/** Go's RFC3339Nano as CRI log lines use it (nanoseconds padded from milliseconds). */
export function criTimestamp(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

/** How much nicer than their host containers run (the host's own priority is unchanged; making one's own children nicer needs no privilege). */
export const CONTAINER_NICE = 10;

/** Every container process alive in this process: they die with it (a machine's processes do not outlive its host). */
const alive = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
});

/** One run of a container, as the pod worker drives it: a process (below) or a thread (container-thread.ts). */
export interface ContainerRun {
  readonly exited: Promise<ProcessExit>;
  readonly startedAt: string;
  /** Its process, when it runs as one (a thread of the agent's process has none of its own). */
  readonly pid: number | undefined;
  /** Asks it to stop (SIGTERM), kills it after `graceMs`; resolves when it is gone. */
  stop(graceMs: number): Promise<ProcessExit>;
  /** What it uses, when it is no process of its own (a process's usage is read from /proc by its pid). */
  usage?(): { cpuSeconds: number; memoryBytes: number } | undefined;
  /** With usage: a key of its own among the node's processes for the CPU total (negative). */
  readonly usageKey?: number;
}

/** Writes a stream's lines to a container's log file in the CRI format (a last line without newline marked P, partial). */
export function writeCriLog(stream: Readable, name: 'stdout' | 'stderr', log: WriteStream): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) log.write(`${criTimestamp()} ${name} F ${line}\n`);
  });
  stream.on('end', () => {
    if (partial) log.write(`${criTimestamp()} ${name} P ${partial}\n`);
  });
}

export class ContainerProcess implements ContainerRun {
  readonly exited: Promise<ProcessExit>;
  readonly startedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  private readonly child: ChildProcess;
  private readonly log: WriteStream;
  private done = false;

  constructor(spec: ProcessSpec) {
    mkdirSync(dirname(spec.logFile), { recursive: true });
    this.log = createWriteStream(spec.logFile, { flags: 'a' });
    // stdin is the process's lifeline (src/common/lifeline.ts): it closes when this process dies.
    this.child = spawn(spec.argv[0], spec.argv.slice(1), { cwd: spec.cwd, env: { ...spec.env, BOSUN_LIFELINE: 'stdin' }, stdio: ['pipe', 'pipe', 'pipe'] });
    alive.add(this.child);
    if (this.child.pid !== undefined) {
      try {
        setPriority(this.child.pid, Math.min(19, getPriority() + CONTAINER_NICE));
      } catch {
        // Gone already (its exit is reported below), or a system that refuses: it runs at the host's priority.
      }
    }
    writeCriLog(this.child.stdout!, 'stdout', this.log);
    writeCriLog(this.child.stderr!, 'stderr', this.log);
    this.exited = new Promise((resolve) => {
      const finish = (exit: Omit<ProcessExit, 'finishedAt'>) => {
        if (this.done) return;
        this.done = true;
        alive.delete(this.child);
        this.log.end(() => resolve({ ...exit, finishedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }));
      };
      this.child.on('error', (e) => finish({ exitCode: 128, error: e.message }));
      this.child.on('close', (code, signal) => finish(signal ? { exitCode: 128 + signalNumber(signal), signal } : { exitCode: code ?? 0 }));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }


  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs: number): Promise<ProcessExit> {
    if (!this.done) {
      this.child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exited;
  }
}

/** The number of a signal by its name (0 for one this does not know). */
export function signalNumber(signal: string): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}
