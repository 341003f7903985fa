// The local cloud's load balancers in the kernel, on nftables, as kube-proxy's nftables mode carries
// Services: for every balancer port a destination-NAT rule on the host's output path that sends a
// new connection for VIP:port to one of the targets' private IPs on the target port, round-robin
// (`numgen inc mod N`), and conntrack carries the rest of the connection — no process copies a
// byte, so traffic costs what it costs between two local sockets. Chosen with `BOSUN_LB_ENGINE=
// nftables` (load-balancer-engine.ts): it needs the `nft` program and the right to change the
// network namespace's rules (root, or CAP_NET_ADMIN in a namespace of one's own).
//
// All of one cloud's rules are one table, `bosun_lb_<hash of the data directory>`, replaced whole
// in one nft transaction at every change (`table …; delete table …; table … {…}` read by `nft -f`
// is atomic): connections already open keep their translation in conntrack, so a change of targets
// or ports keeps them, as a haproxy reload does. A cloud that stops deletes its table; one that
// crashed leaves it carrying traffic, and the next cloud on the same data directory replaces it.
//
// What a userspace proxy does per connection, the kernel cannot; the engine makes up for it with
// checks, as cloud network balancers do:
//  - a balancer with a health check: every target is asked GET <path> on the check port (HTTP or
//    HTTPS, load-balancer-health.ts's probe) every CHECK_INTERVAL_MS; targets not answering 200
//    get no new connections; when none passes, all of them do (failing open, as the other engines);
//  - without one, a target refusing TCP connections on its target port is taken out until it
//    accepts again (haproxy and the Node proxy try the next target at once instead: here a new
//    connection to a target that stopped listening is refused until the next check, at most
//    CHECK_INTERVAL_MS — which is why the default engine stays haproxy);
//  - clients outside the source ranges are refused (a TCP reset, before the translation);
//  - a target that leaves keeps the connections it has until they end (no forced drain).
// Only connections made on this machine's output path are balanced (the local cluster's processes
// share one network namespace); the VIPs need no address of their own.
import { spawnSync, execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import type { Logger } from '../common/log.js';
import { findProgram } from '../common/programs.js';
import { parseCidr } from '../common/ipv4.js';
import { probe } from './load-balancer-health.js';
import { portHealthCheck, targetAddress } from './requests.js';
import type { LoadBalancer, LoadBalancerEngine } from './types.js';

/** How often targets are checked (health check, or a TCP connect to the target port). */
export const CHECK_INTERVAL_MS = 1_000;
/** How often a sync makes sure the table is still there (someone may flush the ruleset). */
const VERIFY_INTERVAL_MS = 10_000;
const CHECK_TIMEOUT_MS = 1_000;

/** The nft program: `binary` (a path, or a name looked up on PATH), else `nft` on PATH or in /usr/sbin. */
export function findNft(binary = 'nft'): string | undefined {
  return findProgram(binary);
}

/** The table holding the balancers of the cloud whose data lives in `dir`. */
export function tableName(dir: string): string {
  return `bosun_lb_${createHash('sha256').update(resolvePath(dir)).digest('hex').slice(0, 12)}`;
}

/** One balancer port as the kernel carries it. */
export interface NatListener {
  key: string;
  address: string;
  port: number;
  targetPort: number;
  /** The source CIDRs allowed (empty: everyone). */
  sourceRanges: string[];
  /** Every target's address, in the balancer's order. */
  targets: string[];
  /** How a target is checked: the balancer's HTTP(S) check, or a TCP connect to the target port. */
  check: { kind: 'http'; port: number; path: string; protocol: 'HTTP' | 'HTTPS' } | { kind: 'tcp' };
}

/** The listeners for `balancers`, targets resolved to addresses (instances gone left out). */
export function planNat(balancers: LoadBalancer[], resolve: (id: string) => string | undefined): NatListener[] {
  const out: NatListener[] = [];
  for (const lb of balancers) {
    for (const p of lb.ports) {
      const hc = portHealthCheck(lb, p);
      const targets = [...new Set((p.targets ?? lb.targets).map((t) => targetAddress(t, resolve)).filter((a): a is string => a !== undefined))];
      out.push({
        key: `${lb.address}:${p.port}`,
        address: lb.address,
        port: p.port,
        targetPort: p.targetPort,
        sourceRanges: lb.sourceRanges,
        targets,
        check: hc ? { kind: 'http', port: hc.port, path: hc.path, protocol: hc.protocol ?? 'HTTP' } : { kind: 'tcp' },
      });
    }
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}

/** What a target's check is keyed by: the same target checked the same way shares one result. */
export const checkKey = (l: NatListener, target: string) => (l.check.kind === 'http' ? `http ${l.check.protocol} ${target}:${l.check.port}${l.check.path}` : `tcp ${target}:${l.targetPort}`);

/** The targets that get new connections: those passing their check (a TCP target not checked yet passes), or all when none does. */
export function usableTargets(l: NatListener, passed: ReadonlyMap<string, boolean>): string[] {
  const ok = l.targets.filter((t) => passed.get(checkKey(l, t)) ?? l.check.kind === 'tcp');
  return ok.length > 0 ? ok : l.targets;
}

/** The nft script replacing the table with these listeners (atomic when read by `nft -f`). */
export function nftScript(table: string, listeners: NatListener[], passed: ReadonlyMap<string, boolean>): string {
  const filter: string[] = [];
  const nat: string[] = [];
  for (const l of listeners) {
    const match = `ip daddr ${l.address} tcp dport ${l.port}`;
    const ranges = l.sourceRanges.filter((r) => parseCidr(r) !== undefined);
    if (l.sourceRanges.length > 0) {
      // Ranges that are not IPv4 allow no IPv4 client: with none left, everyone is refused.
      filter.push(ranges.length > 0 ? `    ${match} ip saddr != { ${ranges.join(', ')} } reject with tcp reset` : `    ${match} reject with tcp reset`);
    }
    const targets = usableTargets(l, passed);
    if (targets.length === 0) {
      filter.push(`    ${match} reject with tcp reset`);
    } else if (targets.length === 1) {
      nat.push(`    ${match} dnat to ${targets[0]}:${l.targetPort}`);
    } else {
      const map = targets.map((t, i) => `${i} : ${t}`).join(', ');
      nat.push(`    ${match} dnat to numgen inc mod ${targets.length} map { ${map} }:${l.targetPort}`);
    }
  }
  return [
    `table ip ${table} {}`,
    `delete table ip ${table}`,
    `table ip ${table} {`,
    '  chain refuse {',
    // Before the translation (dstnat is -100), so the rules see the balancer's address.
    '    type filter hook output priority -200; policy accept;',
    ...filter,
    '  }',
    '  chain balance {',
    '    type nat hook output priority -100; policy accept;',
    ...nat,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** True when a TCP connection to host:port is accepted within the timeout. */
function accepts(host: string, port: number, timeoutMs = CHECK_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => { s.destroy(); resolve(ok); };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

export interface NftablesOptions {
  binary: string;
  /** The cloud's data directory for balancers (names the table). */
  dir: string;
  resolve: (instanceId: string) => string | undefined;
  log: Logger;
  /** How often a sync makes sure the table is still there (default 10 s). */
  verifyIntervalMs?: number;
}

/** Why the kernel engine cannot run here (nft missing, or no right to change the rules), or undefined when it can. */
export function nftablesUnusable(binary: string | undefined, dir: string): string | undefined {
  if (!binary) return 'nftables is not installed (nft not found; apt-get install nftables)';
  const table = tableName(dir);
  // A check-only transaction (`nft -c`): the kernel validates it — NAT support, permission — and drops it.
  const r = spawnSync(binary, ['-c', '-f', '-'], { input: nftScript(table, [{ key: '127.0.0.1:1', address: '127.0.0.1', port: 1, targetPort: 1, sourceRanges: [], targets: ['127.0.0.1'], check: { kind: 'tcp' } }], new Map()), encoding: 'utf8', timeout: 10_000 });
  if (r.error) return `nft could not run: ${r.error.message}`;
  if (r.status !== 0) return `nft refused a balancing table (${(r.stderr || '').trim().split('\n')[0] || `exit ${r.status}`}): the kernel engine needs root or CAP_NET_ADMIN`;
  return undefined;
}

export class NftablesBalancers implements LoadBalancerEngine {
  readonly name = 'nftables' as const;
  readonly table: string;
  private listeners: NatListener[] = [];
  /** Each check's last result (checkKey → passed). */
  private readonly passed = new Map<string, boolean>();
  /** The script last applied (a sync or check that would write the same does nothing). */
  private applied: string | undefined;
  private applying: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private closed = false;
  private verifiedAt = 0;

  constructor(private readonly opts: NftablesOptions) {
    this.table = tableName(opts.dir);
  }

  listening(): string[] {
    return this.applied === undefined ? [] : this.listeners.map((l) => l.key);
  }

  async sync(balancers: LoadBalancer[]): Promise<void> {
    if (this.closed) return;
    this.listeners = planNat(balancers, this.opts.resolve);
    const wanted = new Set(this.listeners.flatMap((l) => l.targets.map((t) => checkKey(l, t))));
    for (const k of this.passed.keys()) if (!wanted.has(k)) this.passed.delete(k);
    if (this.listeners.length > 0 && !this.timer) {
      this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
      this.timer.unref();
      void this.check();
    } else if (this.listeners.length === 0 && this.timer) {
      // Nothing to check until a balancer comes back.
      clearInterval(this.timer);
      this.timer = undefined;
    }
    if (this.applied !== undefined && Date.now() - this.verifiedAt >= (this.opts.verifyIntervalMs ?? VERIFY_INTERVAL_MS)) await this.verify();
    await this.apply();
  }

  /** A table removed behind the cloud's back (a flushed ruleset) is written again by the next apply. */
  private async verify(): Promise<void> {
    this.verifiedAt = Date.now();
    const present = await new Promise<boolean>((resolve) => execFile(this.opts.binary, ['list', 'table', 'ip', this.table], { timeout: 10_000 }, (err) => resolve(!err)));
    if (!present && !this.closed) {
      this.opts.log.warn({ table: this.table }, 'load balancers: the nftables table was removed by something else; writing it again');
      this.applied = undefined;
    }
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.applying;
    await this.nft(`table ip ${this.table} {}\ndelete table ip ${this.table}\n`).catch((e: Error) => this.opts.log.warn({ err: e.message, table: this.table }, 'load balancers: the nftables table could not be deleted'));
    this.applied = undefined;
  }

  /** One round of checks; the rules rewritten when a result changed. */
  private async check(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      const jobs = new Map<string, () => Promise<boolean>>();
      for (const l of this.listeners) {
        for (const t of l.targets) {
          const c = l.check;
          jobs.set(checkKey(l, t), c.kind === 'http' ? () => probe(t, c.port, c.path, CHECK_TIMEOUT_MS, c.protocol) : () => accepts(t, l.targetPort));
        }
      }
      const changed: string[] = [];
      await Promise.all([...jobs].map(async ([key, run]) => {
        const ok = await run();
        const was = this.passed.get(key);
        if (was !== ok) changed.push(`${key}: ${ok ? 'passing' : 'failing'}`);
        this.passed.set(key, ok);
      }));
      if (changed.length > 0) {
        this.opts.log.info({ table: this.table, checks: changed.sort() }, 'load balancers: targets changed state');
        await this.apply();
      }
    } catch (e) {
      this.opts.log.error({ err: (e as Error).message, table: this.table }, 'load balancers: a check\'s change could not be applied');
    } finally {
      this.checking = false;
    }
  }

  /** Writes the rules for the current listeners and check results, one change at a time. */
  private apply(): Promise<void> {
    const run = this.applying.then(async () => {
      if (this.closed) return;
      const script = nftScript(this.table, this.listeners, this.passed);
      if (script === this.applied) return;
      await this.nft(script);
      this.applied = script;
      this.opts.log.debug({ table: this.table, listeners: this.listeners.length }, 'load balancers: nftables rules replaced');
    });
    // A refused change must not stop the later ones.
    this.applying = run.catch(() => undefined);
    return run;
  }

  private nft(script: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = execFile(this.opts.binary, ['-f', '-'], { timeout: 10_000 }, (err, _out, stderr) => {
        if (err) reject(new Error(`nft refused the balancers' rules: ${String(stderr).trim() || err.message}`));
        else resolve();
      });
      child.stdin?.end(script);
    });
  }
}
