// One run of a container as a thread of the node agent's process instead of a process of its own,
// for the bosun components a machine runs one of on every node (the machine-config daemon and
// server, DaemonSets' pods): a node process costs some 42 MiB of RSS before any of bosun's code
// runs (35 MiB of it the node binary's pages, counted again in every process), a thread some 13-18
// MiB with the same component loaded. The thread runs the same `bosun <subcommand>` entry
// (component-thread.ts) in its own V8 isolate, with the container's argv and environment as its
// own process.argv and process.env (the pod's paths, $BOSUN_IN_CLUSTER_ROOT, work as in a
// process), at the containers' lower CPU priority, its stdout and stderr written to the
// container's log file as a process's are. The kubelet's stop is kept: SIGTERM (delivered to the
// thread's signal handlers as a message: a thread gets no signals of its own), then, after the
// grace period, the thread is terminated — reported as a SIGKILL (137), as a killed process is.
// An uncaught error ends the thread alone, with its stack in the container's log and exit code 1.
// Its usage for the resource metrics: the thread's own CPU time (/proc/self/task/<tid>), and the
// memory of its isolate (heap, external and array buffers) as the thread reports it every 10 s.
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { CONTAINER_NICE, criTimestamp, writeCriLog, type ContainerRun, type ProcessExit } from './container-process.js';
import { parseThreadCpuSeconds, type Usage } from './process-usage.js';

export interface ThreadSpec {
  /** The bosun subcommand line (without `bosun`). */
  argv: string[];
  env: Record<string, string>;
  logFile: string;
}

/** What the thread entry is told (component-thread.ts). */
export interface ComponentThreadData {
  /** The bosun command's entry module (a file URL). */
  main: string;
  /** How much nicer than the agent's process the thread runs. */
  nice: number;
  /** How often it reports its memory. */
  reportMs: number;
}

/** What the thread tells the agent: its id (once), its isolate's memory (every reportMs). */
export interface ThreadReport {
  tid?: number;
  memoryBytes?: number;
}

const REPORT_MS = 10_000;
let threadsStarted = 0;

/** The thread's entry: compiled, component-thread.js; from source, component-thread.ts through tsx. */
function entry(): { filename: string | URL; evaluate: boolean; main: string } {
  const compiled = import.meta.url.endsWith('.js');
  const ext = compiled ? 'js' : 'ts';
  const file = new URL(`./component-thread.${ext}`, import.meta.url);
  const main = new URL(`../../cli/main.${ext}`, import.meta.url).href;
  if (compiled) return { filename: file, evaluate: false, main };
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return { filename: `import(${tsx}).then(({ register }) => { register(); return import(${JSON.stringify(file.href)}); });`, evaluate: true, main };
}

export class ContainerThread implements ContainerRun {
  readonly exited: Promise<ProcessExit>;
  readonly startedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  readonly pid = undefined;
  readonly usageKey = -++threadsStarted;
  private readonly worker: Worker;
  private readonly log: WriteStream;
  private done = false;
  private killed = false;
  private tid?: number;
  private memoryBytes = 0;

  constructor(spec: ThreadSpec) {
    mkdirSync(dirname(spec.logFile), { recursive: true });
    this.log = createWriteStream(spec.logFile, { flags: 'a' });
    const { filename, evaluate, main } = entry();
    const workerData: ComponentThreadData = { main, nice: CONTAINER_NICE, reportMs: REPORT_MS };
    this.worker = new Worker(filename, { eval: evaluate, argv: spec.argv, env: { ...spec.env }, execArgv: [], stdout: true, stderr: true, workerData });
    this.worker.on('message', (report: ThreadReport) => {
      if (report.tid !== undefined) this.tid = report.tid;
      if (report.memoryBytes !== undefined) this.memoryBytes = report.memoryBytes;
    });
    const stdout = this.worker.stdout;
    const stderr = this.worker.stderr;
    writeCriLog(stdout, 'stdout', this.log);
    writeCriLog(stderr, 'stderr', this.log);
    const ended = (s: Readable) => new Promise<void>((resolve) => (s.readableEnded ? resolve() : (s.once('end', resolve), s.once('close', resolve))));
    this.exited = new Promise((resolve) => {
      let uncaught = false;
      // What a process would print on an uncaught error: its stack, on stderr.
      this.worker.on('error', (e) => {
        uncaught = true;
        for (const line of String(e.stack ?? e.message).split('\n')) this.log.write(`${criTimestamp()} stderr F ${line}\n`);
      });
      this.worker.on('exit', (code) => {
        if (this.done) return;
        this.done = true;
        const exit = this.killed ? { exitCode: 137, signal: 'SIGKILL' } : { exitCode: uncaught && code === 0 ? 1 : code };
        // What it wrote last reaches the log before the run is reported finished (a bound, so a stream that never ends holds nothing up).
        void Promise.race([Promise.all([ended(stdout), ended(stderr)]), new Promise((r) => setTimeout(r, 1000).unref())]).then(() =>
          this.log.end(() => resolve({ ...exit, finishedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') })),
        );
      });
    });
  }

  /** The thread's CPU time and its isolate's memory; undefined before it has said which thread it is, or once it ended. */
  usage(): Usage | undefined {
    if (this.tid === undefined || this.done) return undefined;
    try {
      const cpuSeconds = parseThreadCpuSeconds(readFileSync(`/proc/self/task/${this.tid}/stat`, 'utf8'));
      return cpuSeconds === undefined ? undefined : { cpuSeconds, memoryBytes: this.memoryBytes };
    } catch {
      return undefined;
    }
  }

  /** SIGTERM (to the thread's handlers), then terminated after `graceMs`; resolves when it is gone. */
  async stop(graceMs: number): Promise<ProcessExit> {
    if (!this.done) {
      const kill = () => {
        this.killed = true;
        void this.worker.terminate();
      };
      if (graceMs > 0) this.worker.postMessage({ signal: 'SIGTERM' });
      else kill();
      const timer = setTimeout(kill, graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exited;
  }
}
