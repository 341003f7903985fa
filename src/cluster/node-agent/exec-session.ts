// `kubectl exec` on the node agent: the kubelet's /exec/<namespace>/<pod>/<container> endpoint,
// reached through the API server's pods/exec proxy (apiserver/nodes/pod-exec.ts), speaking the
// Kubernetes channel protocol over a WebSocket (v5.channel.k8s.io, or v4): every binary message
// starts with its channel's number — 0 stdin, 1 stdout, 2 stderr, 3 the error channel (the
// command's end as a metav1.Status), 4 terminal resizes — and in v5 the client ends stdin with
// the message [255, 0]. The session opens with an empty message on its lowest writable channel (the
// kubelet's signal that the streams are up) and ends with the Status on channel 3: Success, or
// Failure with reason NonZeroExitCode and the exit code as the cause kubectl exits with.
//
// A container here is processes on the machine, not an image's filesystem: the command runs as
// the node agent's user, with the container's environment, in its root directory — as its exec
// probes do. With a terminal (`-t`) it runs under a pseudo-terminal from util-linux's `script`,
// stderr joined to stdout as a terminal joins them; resizes are not passed on.
import { spawn, type ChildProcess } from 'node:child_process';
import type { WebSocket } from 'ws';
import type { Logger } from '../../common/log.js';

/** The channel protocols served, preferred first (kubectl 1.30+ offers both). */
export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

/** Where a command exec'd in a container runs. */
export interface ExecTarget {
  env: Record<string, string>;
  cwd: string;
}

/** What the client asked for: the command and which streams (kube's ExecOptions as query parameters). */
export interface ExecOptions {
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

const flag = (query: URLSearchParams, name: string) => ['1', 'true', 'True', 'TRUE', 't', 'T'].includes(query.get(name) ?? '');

/** The options of an exec request's query (`command` repeated, one per argument). */
export function execOptions(query: URLSearchParams): ExecOptions {
  return { command: query.getAll('command'), stdin: flag(query, 'stdin'), stdout: flag(query, 'stdout'), stderr: flag(query, 'stderr'), tty: flag(query, 'tty') };
}

/** A word as the shell reads it back unchanged (for `script -c`, which hands its command to a shell). */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The end of a command as the error channel carries it (kubelet's remotecommand). */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null, command: string[]): object {
  if (code === 0) return { metadata: {}, status: 'Success' };
  const exitCode = code ?? 128 + (signal ? (({ SIGKILL: 9, SIGTERM: 15, SIGINT: 2, SIGHUP: 1 }) as Record<string, number>)[signal] ?? 0 : 0);
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** Runs the command of `options` in `target` and carries its streams over `ws` until it ends (or the client goes). */
export function runExecSession(ws: WebSocket, target: ExecTarget, options: ExecOptions, log: Logger): void {
  const v5 = ws.protocol === 'v5.channel.k8s.io';
  const send = (channel: number, data: Buffer | string) => {
    if (ws.readyState !== ws.OPEN) return;
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    ws.send(Buffer.concat([Buffer.from([channel]), body]));
  };
  const finish = (status: object) => {
    send(ERROR, JSON.stringify(status));
    ws.close(1000);
  };
  // The kubelet's "streams are up": an empty message on the lowest channel written to.
  send(options.stdout ? STDOUT : options.stderr ? STDERR : ERROR, Buffer.alloc(0));

  const [file, ...args] = options.tty ? ['script', '-qfec', options.command.map(shellQuote).join(' '), '/dev/null'] : options.command;
  let child: ChildProcess;
  try {
    child = spawn(file, args, { env: { ...target.env, ...(options.tty ? { TERM: target.env.TERM ?? 'xterm' } : {}) }, cwd: target.cwd, stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return finish(startFailure(e as Error, options.command));
  }
  let started = true;
  child.on('error', (e) => {
    started = false;
    finish(startFailure(e, options.command));
  });
  child.stdout!.on('data', (d: Buffer) => options.stdout && send(STDOUT, d));
  // Under a terminal there is no stderr of its own: what the command writes there is on the terminal.
  child.stderr!.on('data', (d: Buffer) => (options.tty ? options.stdout && send(STDOUT, d) : options.stderr && send(STDERR, d)));
  child.stdin?.on('error', () => undefined);
  child.on('close', (code, signal) => {
    if (started) finish(exitStatus(code, signal, options.command));
  });

  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length === 0) return;
    const channel = data[0];
    if (channel === STDIN) child.stdin?.write(data.subarray(1));
    else if (channel === CLOSE && v5 && data[1] === STDIN) child.stdin?.end();
    else if (channel === RESIZE) return;
  });
  ws.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  ws.on('error', (e) => log.debug({ err: e.message }, 'an exec session\'s connection failed'));
}

/** A command that could not be started, as the runtime reports it. */
function startFailure(error: Error, command: string[]): object {
  return { metadata: {}, status: 'Failure', message: `error executing command in container: failed to exec [${command.join(' ')}]: ${error.message}`, reason: 'InternalError', code: 500 };
}
