// An API server as a process of its own (`bosun apiserver`), supervised as a kubelet supervises a
// static pod: started on a fixed port, restarted whenever it exits without being asked to (after
// a back-off that doubles from 1 s to 10 s, and starts over once it has stayed up for a minute),
// stopped with SIGTERM (SIGKILL after 10 s), and gone when its host process dies. The HA control plane (etcd-control-plane.ts) runs its
// second and later API servers so, so that one of them dying — a crash, an OOM kill, a SIGKILL —
// takes nothing else with it and comes back by itself while the others serve.
import { spawn, type ChildProcess } from 'node:child_process';
import { logger } from '../common/log.js';
import { bosunCommand } from './node-agent/runtime.js';

const log = logger('apiserver-process');
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;
const STABLE_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export class SupervisedApiServer {
  private child?: ChildProcess;
  private stopping = false;
  private backoffMs = FIRST_BACKOFF_MS;
  private restartTimer?: NodeJS.Timeout;
  /** Times it was started again after it exited by itself. */
  restarts = 0;
  /** The host:port it serves on. */
  readonly listen: string;

  /** `args`: `bosun apiserver`'s flags; `--listen host:port` among them, the port fixed. */
  constructor(readonly name: string, private readonly args: string[], private readonly env: NodeJS.ProcessEnv = {}) {
    this.listen = args[args.indexOf('--listen') + 1];
  }

  /** The running process's id, if one runs. */
  pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  /** Starts it and resolves once it listens (rejects if the first start fails). */
  start(): Promise<void> {
    const [command, ...argv] = bosunCommand(['apiserver', ...this.args]);
    // stdin is its lifeline (src/common/lifeline.ts): it stops when this process dies, however that happens.
    const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...this.env, BOSUN_LIFELINE: 'stdin' } });
    this.child = child;
    const startedAt = Date.now();
    let out = '';
    const listening = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        if (out.length < 10_000) out += d.toString();
        if (/API server listening on /.test(out)) resolve();
      });
      child.stderr!.on('data', (d: Buffer) => { if (out.length < 10_000) out += d.toString(); });
      child.once('exit', (code, signal) => reject(new Error(`${this.name} exited (${signal ?? code}) before it listened: ${out.slice(-2000)}`)));
    });
    child.once('exit', (code, signal) => {
      if (this.stopping || this.child !== child) return;
      if (Date.now() - startedAt > STABLE_MS) this.backoffMs = FIRST_BACKOFF_MS;
      log.warn({ server: this.name, code, signal, restartInMs: this.backoffMs }, 'API server process exited; restarting it');
      this.restartTimer = setTimeout(() => {
        this.restarts++;
        this.start().catch((e: Error) => log.error({ server: this.name, err: e.message }, 'API server process did not start'));
      }, this.backoffMs);
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    });
    return listening;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }
}
