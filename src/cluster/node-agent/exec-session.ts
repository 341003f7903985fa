// `kubectl exec` on the node agent: the kubelet's /exec/<namespace>/<pod>/<container> endpoint,
// reached through the API server's pods/exec proxy (apiserver/nodes/pod-exec.ts). Over SPDY
// (spdy.ts) for kubectl up to 1.29: a stream per standard stream (runExecOverSpdy). Over a
// WebSocket for kubectl 1.30+: the Kubernetes channel protocol (v5.channel.k8s.io, or v4): every binary message
// starts with its channel's number — 0 stdin, 1 stdout, 2 stderr, 3 the error channel (the
// command's end as a metav1.Status), 4 terminal resizes — and in v5 the client ends stdin with
// the message [255, 0]. The session opens with an empty message on its lowest writable channel (the
// kubelet's signal that the streams are up) and ends with the Status on channel 3: Success, or
// Failure with reason NonZeroExitCode and the exit code as the cause kubectl exits with.
//
// A container here is processes on the machine, not an image's filesystem: the command runs as
// the node agent's user, with the container's environment, in its root directory — as its exec
// probes do. With a terminal (`-t`) it runs under a pseudo-terminal from util-linux's `script`,
// stderr joined to stdout as a terminal joins them; the client's terminal size (kubectl sends it
// at the start and whenever its own terminal is resized: `{"Width":…,"Height":…}` on channel 4,
// or on the SPDY resize stream) is set on that pseudo-terminal with stty, and the kernel tells the
// command (SIGWINCH), as the kubelet's runtime resizes a container's terminal.
//
// Both directions keep to the slower side's pace, as the kubelet's streams do: once the
// connection holds more than HIGH_WATER bytes of output the client has not taken, the command's
// output is no longer read (it blocks on its full pipe) until the connection has sent them; and
// while the command does not take its stdin, the client's messages are no longer read. So a
// command writing faster than its client reads costs the node a bounded buffer, not its memory.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { constants } from 'node:os';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import type { WebSocket } from 'ws';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import { HIGH_WATER, SpdySession, type SpdyStream } from './spdy.js';

const run = promisify(execFile);

/** The channel protocols served, preferred first (kubectl 1.30+ offers both). */
export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

/** A terminal's size in characters, as kube's remotecommand.TerminalSize carries it. */
export interface TerminalSize {
  width: number;
  height: number;
}

/** The size a resize message holds (`{"Width":120,"Height":40}`), undefined when it holds none. */
export function terminalSize(text: string): TerminalSize | undefined {
  let message: { Width?: unknown; Height?: unknown } | undefined;
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    return undefined;
  }
  const { Width: width, Height: height } = message ?? {};
  const fits = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 0xffff;
  return fits(width) && fits(height) ? { width, height } : undefined;
}

/** The pseudo-terminal `script` (process `pid`) gave the command: its child's stdin, once it has one. */
function terminalOf(pid: number): string | undefined {
  try {
    const child = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    const tty = child ? readlinkSync(`/proc/${child}/fd/0`) : '';
    return tty.startsWith('/dev/pts/') ? tty : undefined;
  } catch {
    return undefined;
  }
}

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
  // Killed by a signal: the shell's 128 + its number.
  const exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/**
 * The streams of one exec as a transport carries them: where stdout and stderr go (absent when
 * not asked for; false once the transport holds HIGH_WATER bytes, and `drained` says when it has
 * sent them), the end's Status (the transport closes after it), the client's stdin (`data` false:
 * the command is not taking it, so the transport stops reading until `more` is called) and
 * departure.
 */
export interface ExecStreams {
  stdout?: (data: Buffer) => boolean;
  stderr?: (data: Buffer) => boolean;
  drained(then: () => void): void;
  finish(status: object): void;
  onStdin(data: (chunk: Buffer, more: () => void) => boolean, end: () => void): void;
  /** The client's terminal sizes, as they come (with a terminal only). */
  onResize(resize: (size: TerminalSize) => void): void;
  onGone(gone: () => void): void;
}

/** Runs the command of `options` in `target`, its streams carried by `streams`, until it ends (or the client goes). */
export function runExec(streams: ExecStreams, target: ExecTarget, options: ExecOptions): void {
  const [file, ...args] = options.tty ? ['script', '-qfec', options.command.map(shellQuote).join(' '), '/dev/null'] : options.command;
  let child: ChildProcess;
  try {
    child = spawn(file, args, { env: { ...target.env, ...(options.tty ? { TERM: target.env.TERM ?? 'xterm' } : {}) }, cwd: target.cwd, stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return streams.finish(startFailure(e as Error, options.command));
  }
  let started = true;
  child.on('error', (e) => {
    started = false;
    streams.finish(startFailure(e, options.command));
  });
  // Output the client has not taken holds the command's output (see the header).
  let held = false;
  const output = (write: ((data: Buffer) => boolean) | undefined) => (d: Buffer) => {
    if (!write || write(d) || held) return;
    held = true;
    child.stdout!.pause();
    child.stderr!.pause();
    streams.drained(() => {
      held = false;
      child.stdout!.resume();
      child.stderr!.resume();
    });
  };
  child.stdout!.on('data', output(streams.stdout));
  // Under a terminal there is no stderr of its own: what the command writes there is on the terminal.
  child.stderr!.on('data', output(options.tty ? streams.stdout : streams.stderr));
  child.stdin?.on('error', () => undefined);
  child.on('close', (code, signal) => {
    if (started) streams.finish(exitStatus(code, signal, options.command));
  });
  streams.onStdin((chunk, more) => {
    const stdin = child.stdin;
    if (!stdin || stdin.destroyed || stdin.write(chunk)) return true;
    // Drained, or closed by a command that ends without reading it all: the client is read again.
    const again = () => {
      stdin.off('drain', again);
      stdin.off('close', again);
      more();
    };
    stdin.once('drain', again);
    stdin.once('close', again);
    return false;
  }, () => child.stdin?.end());
  if (options.tty) streams.onResize(resizer(child));
  streams.onGone(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}

/**
 * Sets the sizes a client sends on the terminal of `script` (`child`), the latest one winning;
 * the first may come before `script` has given its command the terminal, so it is tried again
 * for up to 2 s.
 */
function resizer(child: ChildProcess): (size: TerminalSize) => void {
  let wanted: TerminalSize | undefined;
  let busy = false;
  const apply = async () => {
    busy = true;
    try {
      for (let tries = 0; wanted && tries < 40 && child.exitCode === null && child.pid; ) {
        const size = wanted;
        const tty = terminalOf(child.pid);
        if (!tty) {
          tries++;
          await sleep(50);
          continue;
        }
        await run('stty', ['-F', tty, 'cols', String(size.width), 'rows', String(size.height)]).catch(() => undefined);
        if (wanted === size) wanted = undefined;
      }
    } finally {
      busy = false;
    }
  };
  return (size) => {
    wanted = size;
    if (!busy) void apply();
  };
}

/** An exec over a WebSocket (the channel protocol, v5 or v4: see the header). */
export function runExecSession(ws: WebSocket, target: ExecTarget, options: ExecOptions, log: Logger): void {
  const v5 = ws.protocol === 'v5.channel.k8s.io';
  // Told once every message sent so far has gone to the socket (see the header).
  let drained: (() => void) | undefined;
  const sent = () => {
    if (!drained || ws.bufferedAmount > 0) return;
    const then = drained;
    drained = undefined;
    then();
  };
  const send = (channel: number, data: Buffer | string): boolean => {
    if (ws.readyState !== ws.OPEN) return true;
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    ws.send(Buffer.concat([Buffer.from([channel]), body]), sent);
    return ws.bufferedAmount < HIGH_WATER;
  };
  // The kubelet's "streams are up": an empty message on the lowest channel written to.
  send(options.stdout ? STDOUT : options.stderr ? STDERR : ERROR, Buffer.alloc(0));
  ws.on('error', (e) => log.debug({ err: e.message }, 'an exec session\'s connection failed'));
  runExec({
    ...(options.stdout ? { stdout: (d: Buffer) => send(STDOUT, d) } : {}),
    ...(options.stderr ? { stderr: (d: Buffer) => send(STDERR, d) } : {}),
    drained: (then) => {
      drained = then;
      sent();
    },
    finish: (status) => {
      send(ERROR, JSON.stringify(status));
      ws.close(1000);
    },
    onStdin: (data, end) => ws.on('message', (message: Buffer, isBinary: boolean) => {
      if (!isBinary || message.length === 0) return;
      if (message[0] === STDIN) {
        if (!data(message.subarray(1), () => ws.resume())) ws.pause();
      } else if (message[0] === CLOSE && v5 && message[1] === STDIN) end();
    }),
    onResize: (resize) => ws.on('message', (message: Buffer, isBinary: boolean) => {
      if (!isBinary || message[0] !== RESIZE) return;
      const size = terminalSize(message.subarray(1).toString());
      if (size) resize(size);
    }),
    onGone: (gone) => ws.on('close', gone),
  }, target, options);
}

/** A command that could not be started, as the runtime reports it. */
function startFailure(error: Error, command: string[]): object {
  return { metadata: {}, status: 'Failure', message: `error executing command in container: failed to exec [${command.join(' ')}]: ${error.message}`, reason: 'InternalError', code: 500 };
}

/** The SPDY stream protocols an exec is served over (remotecommand; v5 is v4 over SPDY). */
export const EXEC_SPDY_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

/**
 * An exec over SPDY (spdy.ts: kubectl up to 1.29): the client opens an error stream and one
 * stream per stream asked for (`streamtype` error, stdin, stdout, stderr, and resize with a
 * terminal); once all are open the command runs; the Status goes on the error stream, and every
 * stream and the session end after it. Streams that do not come within 30 s end the session.
 */
export function runExecOverSpdy(socket: Duplex, target: ExecTarget, options: ExecOptions, log: Logger): void {
  const wanted = ['error', ...(options.stdin ? ['stdin'] : []), ...(options.stdout ? ['stdout'] : []), ...(options.stderr && !options.tty ? ['stderr'] : []), ...(options.tty ? ['resize'] : [])];
  const streams = new Map<string, SpdyStream>();
  let running = false;
  const session = new SpdySession(socket, (stream) => {
    const type = stream.headers.get('streamtype') ?? '';
    if (running || !wanted.includes(type) || streams.has(type)) return stream.reset();
    streams.set(type, stream);
    if (streams.size < wanted.length) return;
    running = true;
    clearTimeout(timer);
    const out = (name: string) => {
      const s = streams.get(name);
      return s ? (d: Buffer) => s.write(d) : undefined;
    };
    runExec({
      stdout: out('stdout'),
      stderr: out('stderr'),
      drained: (then) => session.whenDrained(then),
      finish: (status) => {
        streams.get('error')!.write(Buffer.from(JSON.stringify(status)));
        for (const s of streams.values()) s.end();
        session.close();
      },
      onStdin: (data, end) => {
        const stdin = streams.get('stdin');
        stdin?.on('data', (chunk: Buffer) => {
          if (!data(chunk, () => session.resumeReading())) session.pauseReading();
        });
        stdin?.on('end', end);
      },
      onResize: (resize) => {
        // A JSON object per size, one after another (Go's json.Encoder: each ends with a newline).
        let pending = '';
        streams.get('resize')?.on('data', (chunk: Buffer) => {
          pending += chunk.toString();
          const lines = pending.split('\n');
          pending = lines.pop()!.slice(-4096);
          for (const line of lines) {
            const size = terminalSize(line);
            if (size) resize(size);
          }
        });
      },
      onGone: (gone) => session.on('close', gone),
    }, target, options);
  });
  const timer = setTimeout(() => {
    log.debug({ wanted, opened: [...streams.keys()] }, 'an exec\'s streams did not all come: closing it');
    session.close();
  }, 30_000);
  timer.unref();
  session.on('close', () => clearTimeout(timer));
}
