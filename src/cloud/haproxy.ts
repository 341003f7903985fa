// The local cloud's load balancers on haproxy, as Cluster API's docker provider runs them: one
// haproxy in master-worker mode per cloud, started when the first balancer is stored and stopped
// (by its pid) with the cloud or when the last balancer goes; its files — configuration, master
// socket, pid file, log, saved server state — in DIR/cloud/haproxy, 0700, created under umask 077.
//
// Each balancer port is a `listen` section on the balancer's VIP: round-robin over the targets'
// private IPs on the target port, a refused connection tried again on the next target (`option
// redispatch 1`), clients outside the source ranges closed at once (`tcp-request content reject`:
// a plain close, as the Node proxy does). With a health check, every target is a checked server
// (GET <path> on the check port, HTTP or HTTPS without verifying the certificate, every 2 s, one
// failure takes it out, one 200 brings it back, a target marked down has its connections shut, as
// `on-marked-down shutdown-sessions` does) plus an unchecked backup of itself: when no target
// passes, `option allbackups` sends to every target — the balancer fails open as cloud balancers do.
//
// Changes, cheapest first:
//  - targets only (nodes joining and leaving, the frequent case): applied to the running worker
//    through the runtime API (`add server`, `enable server`/`health`; a target that leaves is put in
//    maintenance — no new connections — and deleted once its connections have ended, its
//    connections shut after DRAIN_MAX_MS if they have not: a cloud balancer's deregistration delay).
//    Every change of one sync goes to the master CLI as one line of `;`-separated commands (one
//    round trip, not one per command), and so do the drain checks. The configuration file is
//    rewritten to match, for the next start or reload, without `haproxy -c`: its server lines are
//    the very specs the worker has just accepted. No reload.
//  - anything else (a balancer or port added or removed, source ranges, health check): the
//    configuration is written, checked (`haproxy -c`) and the master reloaded (`reload` on its
//    CLI): the new worker takes the listening sockets over without refusing a connection and the
//    old one keeps its connections until they end (at most HARD_STOP_AFTER). The servers' health is
//    saved before and loaded by the new worker, so a reload does not send to targets known down.
//
// A port another program holds on a balancer's address is left out (and said in the log) rather
// than failing the whole reload; it is tried again at the next sync. If the cloud stops without
// closing (a crash), its haproxy keeps carrying traffic; the next cloud on the same data directory
// finds it by its pid file (checking the process is haproxy run from that directory) and takes it
// over. If haproxy dies, the next sync starts it again.
//
// Tuned for a small machine shared with the cluster it serves: one thread (`nbthread 1`: with two
// cores and the clients and backends on them, a second haproxy thread only adds cross-thread
// wake-ups and memory; bench:lb on the shared machine, two paired runs at load 3–7: new
// connections 0.69–0.76 of direct against 0.49–0.64 with the default two threads, keep-alive
// 0.64–0.87 against 0.81–0.84), no per-connection log, and in the cloud's session (see spawn()).
// Where its CPU goes (perf, bench:lb's loads): 81–86% in the kernel, the syscalls a proxy cannot
// do without — a recv and a send each way per request with keep-alive; accept, socket, connect,
// two closes, sends and recvs per new connection, the second TCP connection being the cost of a
// new one — and its own code 11–16%. So options that save userspace work change nothing
// measurable; tried on bench:lb's loads (CPU per request, wrk, loaded shared machine), none
// better than noise: `option splice-auto` (the messages are small: a splice through a pipe costs
// more calls than the copy it saves), `nbthread 2`, `cpu-map`, `tune.fd.edge-triggered`, no TCP
// keep-alive probes. Left out for what they would break: `option tcp-smart-connect` and
// `tcp-smart-accept`/`defer-accept` save a packet or a wake-up per new connection by waiting for
// the client's first bytes, which delays protocols where the server speaks first (SSH, SMTP,
// databases) behind a general TCP balancer by a delayed ACK or a second; `option nolinger`
// (resets instead of closes) can cut off the last bytes sent.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync, constants } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../common/log.js';
import { PRIVATE_FILE_MODE, ensurePrivateDir } from '../common/private-files.js';
import { sleep } from '../common/sleep.js';
import { portHealthCheck, targetAddress } from './requests.js';
import type { LoadBalancerEngine } from './types.js';
import type { LoadBalancer } from './types.js';

/** How long a target may take to accept before the next one is tried (as the Node proxy). */
const CONNECT_TIMEOUT = '2s';
/** Idle connections are kept (watches through a balancer are quiet for minutes); TCP keep-alive finds dead peers. */
const IDLE_TIMEOUT = '24h';
/** A half-closed connection (one side has sent its FIN) may stay this long without a byte (as the Node proxy). */
const HALF_CLOSED_TIMEOUT = '5s';
/** An old worker's connections, after a reload, are closed at the latest this long after it. */
const HARD_STOP_AFTER = '5m';
const CHECK_INTERVAL = '2s';
const CHECK_TIMEOUT = '1s';
/** A removed target's connections are shut after this long if they have not ended by themselves. */
export const DRAIN_MAX_MS = 30_000;
/** How often removed targets are looked at (deleted once their connections have ended). */
const DRAIN_CHECK_MS = 250;

const CONFIG = 'haproxy.cfg';
const PID_FILE = 'haproxy.pid';
const MASTER_SOCKET = 'master.sock';
const LOG_FILE = 'haproxy.log';
const STATE_FILE = 'servers.state';

/** One server line of a listener: a target (checked, or not) or the fail-open backup of one. */
export interface PlannedServer {
  name: string;
  address: string;
  port: number;
  /** The options written after the address, the same in the configuration and on `add server`. */
  options: string;
  checked: boolean;
}

/** One listener (a balancer's port) as haproxy runs it. */
export interface PlannedListener {
  /** address:port, the section's name. */
  key: string;
  balancer: string;
  address: string;
  port: number;
  /** The section's lines but its servers: what a reload is needed to change. */
  shape: string[];
  servers: PlannedServer[];
}

/** The listeners for `balancers`, targets resolved to addresses (instances gone left out). */
export function planListeners(balancers: LoadBalancer[], resolve: (id: string) => string | undefined): PlannedListener[] {
  const out: PlannedListener[] = [];
  for (const lb of balancers) {
    for (const p of lb.ports) {
      const check = portHealthCheck(lb, p);
      const shape = [
        `  # balancer ${lb.name}${p.name ? `, port ${p.name}` : ''}`,
        `  bind ${lb.address}:${p.port}`,
        ...(lb.sourceRanges.length ? [`  tcp-request content reject unless { src ${lb.sourceRanges.join(' ')} }`] : []),
        '  balance roundrobin',
        ...(check ? [
          `  option httpchk GET ${check.path}`,
          '  http-check expect status 200',
          // No target passing: every target, as the Node proxy and cloud balancers fail open.
          '  option allbackups',
        ] : []),
      ];
      const checkOptions = check ? `check port ${check.port}${check.protocol === 'HTTPS' ? ' check-ssl verify none' : ''} inter ${CHECK_INTERVAL} fall 1 rise 1 on-marked-down shutdown-sessions` : '';
      const servers: PlannedServer[] = [];
      const seen = new Set<string>();
      for (const t of p.targets ?? lb.targets) {
        const address = targetAddress(t, resolve);
        if (address === undefined || seen.has(t)) continue;
        seen.add(t);
        if (check) {
          servers.push({ name: `t-${t}`, address, port: p.targetPort, options: checkOptions, checked: true });
          servers.push({ name: `open-${t}`, address, port: p.targetPort, options: 'backup', checked: false });
        } else {
          servers.push({ name: `t-${t}`, address, port: p.targetPort, options: '', checked: false });
        }
      }
      out.push({ key: `${lb.address}:${p.port}`, balancer: lb.name, address: lb.address, port: p.port, shape, servers });
    }
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}

/** The whole configuration for these listeners. */
export function haproxyConfig(listeners: PlannedListener[]): string {
  const lines = [
    '# Written by the bosun local cloud (src/cloud/haproxy.ts) from its stored load balancers; rewritten on every change.',
    'global',
    '  nbthread 1',
    `  hard-stop-after ${HARD_STOP_AFTER}`,
    `  server-state-file ${STATE_FILE}`,
    '',
    'defaults',
    '  mode tcp',
    `  timeout connect ${CONNECT_TIMEOUT}`,
    `  timeout client ${IDLE_TIMEOUT}`,
    `  timeout server ${IDLE_TIMEOUT}`,
    `  timeout client-fin ${HALF_CLOSED_TIMEOUT}`,
    `  timeout server-fin ${HALF_CLOSED_TIMEOUT}`,
    `  timeout check ${CHECK_TIMEOUT}`,
    '  option clitcpka',
    '  option srvtcpka',
    // A refused connection is tried on the next target (each retry redispatched).
    '  retries 3',
    '  option redispatch 1',
    '  load-server-state-from-file global',
  ];
  for (const l of listeners) {
    lines.push('', `listen ${l.key}`, ...l.shape);
    for (const s of l.servers) lines.push(`  server ${s.name} ${s.address}:${s.port}${s.options ? ` ${s.options}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

const serverSpec = (s: PlannedServer) => `${s.address}:${s.port} ${s.options}`;

/** One command on haproxy's master CLI (`@1 …`: passed to the current worker); its answer. */
function masterCommand(socket: string, command: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let out = '';
    s.setTimeout(timeoutMs, () => s.destroy(new Error(`haproxy's master CLI did not answer "${command}" within ${timeoutMs} ms`)));
    s.on('connect', () => s.end(`${command}\n`));
    s.on('data', (d) => (out += d));
    s.on('error', reject);
    s.on('close', (hadError) => { if (!hadError) resolve(out); });
  });
}

/** The longest line of commands sent at once (the CLI reads a line into one buffer, tune.bufsize 16 KiB). */
const MAX_BATCH_LINE = 8_000;

/** Runtime-API commands for the current worker joined into as few `@1 a; @1 b; …` lines as fit. */
export function batchLines(commands: string[]): string[] {
  const lines: string[] = [];
  let line = '';
  for (const c of commands) {
    const part = `@1 ${c}`;
    if (line && line.length + 2 + part.length > MAX_BATCH_LINE) {
      lines.push(line);
      line = '';
    }
    line = line ? `${line}; ${part}` : part;
  }
  if (line) lines.push(line);
  return lines;
}

/** What the runtime API answers a command that worked: nothing, or these. */
const BATCH_OK = /^(New server registered\.|Server deleted\.)?$/;

/** The lines of a batch's answer that are no success (an error of one of its commands). */
export function batchErrors(answer: string, alsoOk?: RegExp): string[] {
  return answer.split('\n').map((l) => l.trim()).filter((l) => !BATCH_OK.test(l) && !(alsoOk && alsoOk.test(l)));
}

/** `backend/server` of every server in a `show servers state` answer. */
export function serversInState(answer: string): Set<string> {
  const out = new Set<string>();
  for (const line of answer.split('\n')) {
    const f = line.split(' ');
    if (f.length > 4 && /^\d+$/.test(f[0]) && /^\d+$/.test(f[2])) out.add(`${f[1]}/${f[3]}`);
  }
  return out;
}

/** True when something else listens on address:port (so haproxy could not bind it). */
function portTaken(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen({ host: address, port, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** True while the process runs (a zombie, exited but not yet reaped by its parent, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

export interface HaproxyOptions {
  binary: string;
  dir: string;
  resolve: (instanceId: string) => string | undefined;
  log: Logger;
  /** A removed target's connections are shut after this long (default DRAIN_MAX_MS). */
  drainMaxMs?: number;
}

interface Draining { listener: string; server: string; since: number }

export class HaproxyBalancers implements LoadBalancerEngine {
  readonly name = 'haproxy';
  readonly reason?: string;
  private readonly dir: string;
  private readonly log: Logger;
  /** The master's pid while haproxy runs (ours, or one taken over after a crash of the cloud). */
  private pid: number | undefined;
  private child: ChildProcess | undefined;
  /** What the running worker carries, listener by listener. */
  private running = new Map<string, PlannedListener>();
  private readonly draining = new Map<string, Draining>();
  /** The listeners of a haproxy taken over (from its configuration file), until it is reloaded. */
  private readonly adopted = new Set<string>();
  /** Listeners left out because something else holds their port (warned about once). */
  private readonly portsTaken = new Set<string>();
  private readonly drainTimer: NodeJS.Timeout;
  private draintick: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly opts: HaproxyOptions) {
    this.dir = opts.dir;
    this.log = opts.log;
    this.drainTimer = setInterval(() => { this.draintick = this.draintick.then(() => this.drainStep()).catch(() => undefined); }, DRAIN_CHECK_MS);
    this.drainTimer.unref();
  }

  /** The master process's pid, while haproxy runs. */
  get masterPid(): number | undefined {
    return this.pid;
  }

  private path(file: string): string {
    return join(this.dir, file);
  }

  listening(): string[] {
    return [...this.running.keys()].sort();
  }

  async sync(balancers: LoadBalancer[]): Promise<void> {
    if (this.closed) return;
    let wanted = planListeners(balancers, this.opts.resolve);
    if (this.pid !== undefined && !alive(this.pid)) {
      this.log.warn({ pid: this.pid }, 'haproxy exited; starting it again');
      this.forget();
    }
    if (this.pid === undefined) this.adopt();
    if (wanted.length === 0) {
      // Nothing to carry: no haproxy (also not one a crashed cloud left behind).
      await this.stop();
      return;
    }
    // A port something else holds is left out (else the whole configuration fails to load).
    const kept: PlannedListener[] = [];
    for (const l of wanted) {
      if (!this.running.has(l.key) && !this.adopted.has(l.key) && await portTaken(l.address, l.port)) {
        if (!this.portsTaken.has(l.key)) this.log.warn(`load balancer ${l.balancer}: cannot listen on ${l.key}: the port is in use; tried again every few seconds`);
        this.portsTaken.add(l.key);
      } else {
        this.portsTaken.delete(l.key);
        kept.push(l);
      }
    }
    wanted = kept;
    if (wanted.length === 0) return;
    if (this.pid === undefined) {
      await this.writeConfig(wanted);
      await this.spawn();
      this.running = new Map(wanted.map((l) => [l.key, l]));
      await this.markUnchecked(wanted, new Set());
      return;
    }
    const sameShape = this.running.size === wanted.length && wanted.every((l) => sameShapes(this.running.get(l.key), l));
    if (sameShape && this.running.size > 0) {
      if (wanted.every((l) => sameServers(this.running.get(l.key)!, l))) return;
      await this.applyServers(wanted.map((l) => [this.running.get(l.key)!, l]));
      this.running = new Map(wanted.map((l) => [l.key, l]));
      this.writeConfigUnchecked(wanted);
      return;
    }
    await this.writeConfig(wanted);
    const carried = await this.reload(wanted);
    this.adopted.clear();
    await this.markUnchecked(wanted, carried);
    for (const key of [...this.draining.keys()]) if (!wanted.some((l) => key.startsWith(`${l.key}/`))) this.draining.delete(key);
    this.running = new Map(wanted.map((l) => [l.key, l]));
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.drainTimer);
    await this.draintick;
    await this.stop();
  }

  /** Writes the configuration (0600) as it is, for a change the running worker has accepted. */
  private writeConfigUnchecked(listeners: PlannedListener[]): void {
    renameSync(this.writeNextConfig(listeners), this.path(CONFIG));
  }

  /** The configuration for `listeners` written (0600) beside the current one; its path. */
  private writeNextConfig(listeners: PlannedListener[]): string {
    ensurePrivateDir(this.dir);
    const next = this.path(`${CONFIG}.next`);
    writeFileSync(next, haproxyConfig(listeners), { mode: PRIVATE_FILE_MODE });
    return next;
  }

  /** Writes the configuration (0600) after checking it with `haproxy -c`. */
  private async writeConfig(listeners: PlannedListener[]): Promise<void> {
    const next = this.writeNextConfig(listeners);
    const problem = await new Promise<string | undefined>((resolve) => {
      execFile(this.opts.binary, ['-c', '-q', '-f', next], { cwd: this.dir }, (err, stdout, stderr) => resolve(err ? `${stdout}${stderr}`.trim() || err.message : undefined));
    });
    if (problem) {
      rmSync(next, { force: true });
      throw new Error(`haproxy refused the configuration written for the load balancers: ${problem}`);
    }
    renameSync(next, this.path(CONFIG));
  }

  /** Starts haproxy on the written configuration, under umask 077, and waits for its master CLI. */
  private async spawn(): Promise<void> {
    // A sync still under way when the cloud closes starts nothing (it would outlive the cloud).
    if (this.closed) throw new Error('the load balancers are closed');
    ensurePrivateDir(this.dir);
    rmSync(this.path(MASTER_SOCKET), { force: true });
    rmSync(this.path(PID_FILE), { force: true });
    const logFd = openSync(this.path(LOG_FILE), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, PRIVATE_FILE_MODE);
    const args = ['-W', '-S', `unix@${MASTER_SOCKET},mode,600`, '-f', CONFIG, '-p', PID_FILE];
    // `exec`: the pid is haproxy's master. Not detached: it stays in the cloud's session, and so in
    // the scheduler's autogroup of the cluster's other processes (a new session is a group of its
    // own, and every hand-off between the balancer and a client or backend in another group waits
    // for the scheduler to switch groups: bench:lb on the shared 2-core machine, haproxy in its own
    // session carried about half of what it carries in the session of the client and backends at
    // load 13-19, 0.85-1.0 of it at load 6). A
    // crash of the cloud (SIGKILL) still leaves the balancers up: no pipe ties haproxy to it. A
    // Ctrl-C in the cloud's terminal reaches haproxy too, as it reaches every process `bosun start`
    // runs; the cloud, stopping on it, stops haproxy in any case.
    const child = spawn('/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', this.opts.binary, ...args], { cwd: this.dir, stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error(`haproxy (${this.opts.binary}) could not be started`);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.once('exit', (code, signal) => {
      if (this.pid === pid && !this.closed) this.log.warn({ pid, code, signal }, `haproxy exited; see ${this.path(LOG_FILE)}`);
    });
    this.child = child;
    this.pid = pid;
    const started = Date.now();
    for (;;) {
      const early = await Promise.race([exited, sleep(20).then(() => 'waiting' as const)]);
      if (early !== 'waiting') {
        this.forget();
        throw new Error(`haproxy exited (${early}) at start: ${this.logTail()}`);
      }
      if (existsSync(this.path(PID_FILE)) && (await this.command('show proc').catch(() => '')).includes('worker')) break;
      if (Date.now() - started > 10_000) throw new Error(`haproxy did not start within 10 s: ${this.logTail()}`);
    }
    this.log.info({ pid, config: this.path(CONFIG) }, 'haproxy started for the load balancers');
    // closeAll() ran while it started (its stop() found no pid yet): stopped here instead.
    if (this.closed) await this.stop();
  }

  /** Takes over a haproxy left running by a previous cloud on this data directory, if there is one. */
  private adopt(): void {
    let pid: number;
    try {
      pid = Number(readFileSync(this.path(PID_FILE), 'utf8').trim());
    } catch {
      return;
    }
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('haproxy') || readlinkSync(`/proc/${pid}/cwd`) !== this.dir) return;
    } catch {
      return;
    }
    this.pid = pid;
    // Whatever it carries is replaced by a reload at this sync.
    this.running = new Map();
    try {
      for (const m of readFileSync(this.path(CONFIG), 'utf8').matchAll(/^listen (\S+)$/gm)) this.adopted.add(m[1]);
    } catch { /* no configuration: nothing known */ }
    this.log.info({ pid }, 'took over the haproxy a previous run of the cloud left running');
  }

  /** Reloads the master on the written configuration; resolves once the new worker runs. */
  private async reload(wanted: PlannedListener[]): Promise<Set<string>> {
    // The servers' health, for the new worker (load-server-state-from-file): of listeners and
    // servers that stay as they are only — a changed check starts from scratch.
    let kept = new Set<string>();
    try {
      const state = (await this.command('@1 show servers state')).split('\n');
      kept = new Set(wanted.flatMap((l) => {
        const r = this.running.get(l.key);
        if (!sameShapes(r, l)) return [];
        return l.servers.filter((s) => r.servers.some((x) => x.name === s.name && serverSpec(x) === serverSpec(s))).map((s) => `${l.key} ${s.name}`);
      }));
      const lines = state.filter((line) => {
        const f = line.split(' ');
        return line.startsWith('#') || /^\d+$/.test(line) || kept.has(`${f[1]} ${f[3]}`);
      });
      writeFileSync(this.path(STATE_FILE), `${lines.join('\n')}\n`, { mode: PRIVATE_FILE_MODE });
    } catch {
      rmSync(this.path(STATE_FILE), { force: true }); // no state: the new worker checks from scratch
    }
    const before = await this.reloads();
    await this.command('reload').catch(() => ''); // the master re-executes and closes the connection
    const started = Date.now();
    for (;;) {
      await sleep(20);
      const now = await this.reloads().catch(() => undefined);
      if (now && now.count > before.count && now.worker) {
        if (now.failed > before.failed) throw new Error(`haproxy failed to reload: ${this.logTail()}`);
        return new Set([...kept].map((k) => k.replace(' ', '/')));
      }
      if (!alive(this.pid!)) { this.forget(); throw new Error(`haproxy exited while reloading: ${this.logTail()}`); }
      if (Date.now() - started > 10_000) throw new Error(`haproxy did not reload within 10 s: ${this.logTail()}`);
    }
  }

  /** Checked servers whose health was not carried over start down, until their first check passes
   *  (haproxy starts them up), as the Node proxy counts a target not checked yet. */
  private async markUnchecked(listeners: PlannedListener[], carried: Set<string>): Promise<void> {
    const commands = listeners.flatMap((l) => l.servers.filter((s) => s.checked && !carried.has(`${l.key}/${s.name}`)).map((s) => `set server ${l.key}/${s.name} health down`));
    const errors = batchErrors(await this.batch(commands).catch((e: Error) => e.message));
    if (errors.length > 0) this.log.warn({ err: errors.join('; ') }, 'haproxy: could not mark servers down');
  }

  /** The master's reload count and failed reloads, from `show proc`; and whether a current worker is listed. */
  private async reloads(): Promise<{ count: number; failed: number; worker: boolean }> {
    const out = await this.command('show proc');
    const m = /^\d+\s+master\s+(\d+)\s+\[failed:\s*(\d+)\]/m.exec(out);
    if (!m) throw new Error(`unexpected "show proc" answer: ${out}`);
    const workers = out.split('# workers')[1]?.split('#')[0] ?? '';
    return { count: Number(m[1]), failed: Number(m[2]), worker: /\d+\s+worker/.test(workers) };
  }

  private command(command: string): Promise<string> {
    return masterCommand(this.path(MASTER_SOCKET), command);
  }

  /** Runtime-API commands to the current worker, one round trip per MAX_BATCH_LINE; their answers, concatenated. */
  private async batch(commands: string[]): Promise<string> {
    let out = '';
    for (const line of batchLines(commands)) out += await this.command(line);
    return out;
  }

  /**
   * Brings each listener's servers from `have` to `want` on the running worker, every command in
   * one batch (in order: a leaving server is put in maintenance before the joining ones come).
   */
  private async applyServers(changes: Array<[have: PlannedListener, want: PlannedListener]>): Promise<void> {
    const commands: string[] = [];
    const leaving: string[] = [];
    for (const [have, want] of changes) {
      const wanted = new Map(want.servers.map((s) => [s.name, s]));
      for (const s of have.servers) {
        const w = wanted.get(s.name);
        if (w && serverSpec(w) === serverSpec(s)) continue;
        // Leaves: no new connection from now; deleted once its connections end (drainStep).
        commands.push(`set server ${want.key}/${s.name} state maint`);
        leaving.push(`${want.key}/${s.name}`);
      }
      const had = new Map(have.servers.map((s) => [s.name, s]));
      // Fail-open backups first: a listener never has a moment with nothing to send to.
      for (const s of [...want.servers].sort((a, b) => Number(a.checked) - Number(b.checked))) {
        const h = had.get(s.name);
        if (h && serverSpec(h) === serverSpec(s)) continue;
        const id = `${want.key}/${s.name}`;
        if (this.draining.has(id) || leaving.includes(id)) {
          // Coming back (or changed) while its old connections drain: the old server goes now.
          this.draining.delete(id);
          commands.push(`shutdown sessions server ${id}`, `del server ${id}`);
        }
        commands.push(`add server ${id} ${serverSpec(s)}`);
        if (s.checked) commands.push(`enable health ${id}`);
        commands.push(`enable server ${id}`);
        // Not checked yet: down until its first check passes, as the Node proxy counts it.
        if (s.checked) commands.push(`set server ${id} health down`);
      }
    }
    if (commands.length === 0) return;
    const since = Date.now();
    const answer = await this.batch(commands);
    for (const id of leaving) {
      const [listener, server] = [id.slice(0, id.lastIndexOf('/')), id.slice(id.lastIndexOf('/') + 1)];
      if (!changes.some(([, want]) => want.key === listener && want.servers.some((s) => s.name === server))) this.draining.set(id, { listener, server, since });
    }
    // A server deleted while it drains may still hold connections (then its add fails too) or be gone already.
    const errors = batchErrors(answer, /^(No such server\.|Server still has connections attached to it, cannot remove it\.)$/);
    if (errors.length > 0) throw new Error(`haproxy refused changes of the load balancers' targets: ${errors.join('; ')}`);
  }

  /** Deletes removed servers whose connections have ended; shuts the others' after the drain time. One round trip. */
  private async drainStep(): Promise<void> {
    if (this.pid === undefined || this.draining.size === 0) return;
    const maxMs = this.opts.drainMaxMs ?? DRAIN_MAX_MS;
    const ids = [...this.draining.keys()];
    const commands = ids.flatMap((id) => [...(Date.now() - this.draining.get(id)!.since >= maxMs ? [`shutdown sessions server ${id}`] : []), `del server ${id}`]);
    const answer = await this.batch([...commands, 'show servers state']).catch(() => undefined);
    if (answer === undefined) return;
    const present = serversInState(answer);
    for (const id of ids) if (!present.has(id)) this.draining.delete(id);
  }

  /** Stops haproxy (SIGTERM to the master, which stops its workers) and waits for it to go. */
  private async stop(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    const child = this.child;
    this.forget();
    const exited = child && child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined;
    try { process.kill(pid, 'SIGTERM'); } catch { /* already gone */ }
    const deadline = Date.now() + 5_000;
    while (alive(pid) && Date.now() < deadline) {
      if (exited) await Promise.race([exited, sleep(50)]);
      else await sleep(20);
      // A child that exited is a zombie until Node reaps it: `exited` says it is gone.
      if (exited && (child!.exitCode !== null || child!.signalCode !== null)) break;
    }
    if (alive(pid) && !(child && (child.exitCode !== null || child.signalCode !== null))) {
      this.log.warn({ pid }, 'haproxy did not stop within 5 s; killing it');
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
    rmSync(this.path(PID_FILE), { force: true });
    rmSync(this.path(MASTER_SOCKET), { force: true });
    this.log.info({ pid }, 'haproxy stopped');
  }

  private forget(): void {
    this.pid = undefined;
    this.child = undefined;
    this.running = new Map();
    this.draining.clear();
    this.adopted.clear();
  }

  private logTail(): string {
    try {
      return readFileSync(this.path(LOG_FILE), 'utf8').trim().split('\n').slice(-5).join(' | ');
    } catch {
      return '(no log)';
    }
  }
}

/** The same section but for its servers (no reload needed between them). */
function sameShapes(a: PlannedListener | undefined, b: PlannedListener): a is PlannedListener {
  return a !== undefined && a.shape.join('\n') === b.shape.join('\n');
}

function sameServers(a: PlannedListener, b: PlannedListener): boolean {
  return a.servers.length === b.servers.length && a.servers.every((s, i) => s.name === b.servers[i].name && serverSpec(s) === serverSpec(b.servers[i]));
}
