// The fallback data plane of the local cloud's load balancers, when haproxy is not installed
// (load-balancer-engine.ts; haproxy.ts is the engine otherwise): for every stored balancer and each of its
// ports, a userspace TCP proxy listening on the balancer's virtual IP (127.0.200.M:port) that
// forwards each connection to one of its targets' private IPs on the port's targetPort (a
// Service's NodePort) — round-robin, trying the next target when one refuses — and refuses
// clients outside the balancer's sourceRanges; a balancer with a health check sends only to the
// targets passing it (load-balancer-health.ts). The cloud service runs it, so balancers carry
// traffic as long as the cloud runs, whoever created them (as a real cloud's do), and survive a
// restart of the cloud-controller-manager. `sync` reconciles the listeners by diff against the
// stored balancers: unchanged listeners keep their connections. A connection is spliced as TCP
// is: each side's FIN is passed on as a half-close (the other direction keeps flowing, so a
// client that ends its request still gets the whole response, and a backend that closes after
// its last byte has every byte delivered first); only a reset or an error tears both down.
//
// A target that leaves the balancer (removed, or failing its health check) has its connections
// drained, as HAProxy's `on-marked-down shutdown-sessions` and a cloud balancer's deregistration
// do: each is closed at its first quiet moment (no byte either way for DRAIN_IDLE_MS — between two
// requests of a keep-alive client, never in the middle of an answer), or after DRAIN_MAX_MS
// whatever it is doing, so that reused connections move to the targets that remain.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { logger } from '../common/log.js';
import { LoadBalancerHealthChecks } from './load-balancer-health.js';
import { parseCidr } from '../common/ipv4.js';
import { targetAddress } from './requests.js';
import type { LoadBalancer } from './types.js';
import type { LoadBalancerEngine } from './types.js';

const log = logger('cloud-lb-proxy');

/** How long a target may take to accept before the next one is tried. */
const CONNECT_TIMEOUT_MS = 2_000;
/** How long a connection the target has finished may stay open without a byte from the client. */
const HALF_CLOSED_IDLE_MS = 5_000;
/** A draining connection is closed after this long without a byte either way, */
const DRAIN_IDLE_MS = 50;
/** or after this long in any case. */
const DRAIN_MAX_MS = 30_000;
/** How often connections are matched against their balancer's usable targets. */
const DRAIN_CHECK_MS = 250;

/** A spliced connection: which target it reached, and when a byte last went through. */
interface Spliced {
  client: Socket;
  upstream: Socket;
  target: string;
  lastActivity: number;
  drainingSince?: number;
}

/** True when `ip` (dotted IPv4, or IPv4-mapped IPv6) lies in one of `ranges`; empty: everyone. */
export function allowedSource(ip: string, ranges: string[]): boolean {
  if (ranges.length === 0) return true;
  const m = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m) return false;
  const value = m.slice(1, 5).map(Number).reduce((a, x) => a * 256 + x, 0);
  return ranges.some((r) => {
    const cidr = parseCidr(r);
    if (!cidr) return false;
    const size = 2 ** (32 - cidr.bits);
    return Math.floor(value / size) === Math.floor(cidr.base / size);
  });
}

interface Listener {
  server: Server;
  balancer: LoadBalancer;
  targetPort: number;
  /** The listener's own targets (instance IDs or addresses), else the balancer's. */
  targets?: string[];
  next: number;
  sockets: Set<Socket>;
  connections: Set<Spliced>;
}

export class LoadBalancerProxies implements LoadBalancerEngine {
  readonly name = 'node';

  private readonly listeners = new Map<string, Listener>();

  private readonly health: LoadBalancerHealthChecks;

  /** `resolve` gives a target instance's private IP, or undefined when it has none (gone). */
  private readonly drainTimer: NodeJS.Timeout;

  /** `reason`: why this engine carries the balancers rather than haproxy (load-balancer-engine.ts). */
  constructor(private readonly resolve: (instanceId: string) => string | undefined, readonly reason?: string) {
    this.health = new LoadBalancerHealthChecks(resolve);
    this.drainTimer = setInterval(() => this.drain(), DRAIN_CHECK_MS);
    this.drainTimer.unref();
  }

  /** Closes, at a quiet moment, the connections of targets the balancer no longer sends new ones to. */
  private drain(): void {
    const now = Date.now();
    for (const l of this.listeners.values()) {
      if (l.connections.size === 0) continue;
      const usable = new Set(l.targets ?? this.health.usable(l.balancer));
      for (const c of l.connections) {
        if (usable.has(c.target)) {
          c.drainingSince = undefined;
          continue;
        }
        c.drainingSince ??= now;
        if (now - c.lastActivity >= DRAIN_IDLE_MS || now - c.drainingSince >= DRAIN_MAX_MS) {
          l.connections.delete(c);
          c.client.destroy();
          c.upstream.destroy();
        }
      }
    }
  }

  /** Makes the listeners match `balancers`: new ones opened, changed ones updated, others closed. */
  async sync(balancers: LoadBalancer[]): Promise<void> {
    this.health.sync(balancers);
    const wanted = new Map<string, { balancer: LoadBalancer; port: number; targetPort: number; targets?: string[] }>();
    for (const lb of balancers) for (const p of lb.ports) wanted.set(`${lb.address}:${p.port}`, { balancer: lb, port: p.port, targetPort: p.targetPort, targets: p.targets });
    for (const [key, l] of this.listeners) {
      const w = wanted.get(key);
      if (!w || w.balancer.name !== l.balancer.name) await this.close(key);
    }
    for (const [key, w] of wanted) {
      const existing = this.listeners.get(key);
      if (existing) {
        // Targets, source ranges and target port apply to new connections without reopening.
        existing.balancer = w.balancer;
        existing.targetPort = w.targetPort;
        existing.targets = w.targets;
        continue;
      }
      await this.open(key, w.balancer, w.port, w.targetPort, w.targets);
    }
  }

  /** The addresses listened on (address:port), for tests and `bosun cloud` output. */
  listening(): string[] {
    return [...this.listeners.keys()].sort();
  }

  async closeAll(): Promise<void> {
    this.health.stop();
    clearInterval(this.drainTimer);
    for (const key of [...this.listeners.keys()]) await this.close(key);
  }

  private async open(key: string, balancer: LoadBalancer, port: number, targetPort: number, targets?: string[]): Promise<void> {
    const listener: Listener = { server: createServer({ allowHalfOpen: true }), balancer, targetPort, targets, next: 0, sockets: new Set(), connections: new Set() };
    listener.server.on('connection', (client) => this.accept(listener, client));
    try {
      await new Promise<void>((resolve, reject) => {
        listener.server.once('error', reject);
        listener.server.listen({ host: balancer.address, port }, () => resolve());
      });
    } catch (e) {
      // A port taken by something else on this address: reported, tried again on the next sync.
      log.warn({ err: e }, `load balancer ${balancer.name}: cannot listen on ${key}`);
      return;
    }
    listener.server.on('error', (e) => log.warn({ err: e }, `load balancer ${balancer.name} on ${key}`));
    this.listeners.set(key, listener);
  }

  private async close(key: string): Promise<void> {
    const l = this.listeners.get(key);
    if (!l) return;
    this.listeners.delete(key);
    for (const s of l.sockets) s.destroy();
    await new Promise<void>((resolve) => l.server.close(() => resolve()));
  }

  private accept(l: Listener, client: Socket): void {
    if (!allowedSource(client.remoteAddress ?? '', l.balancer.sourceRanges)) {
      client.destroy();
      return;
    }
    l.sockets.add(client);
    client.on('close', () => l.sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    // A port's own targets are used as they are; the balancer's pass its health check, if it has one.
    const targets = (l.targets ?? this.health.usable(l.balancer)).flatMap((t) => {
      const ip = targetAddress(t, this.resolve);
      return ip === undefined ? [] : [{ target: t, ip }];
    });
    const start = l.next++;
    const attempt = (i: number) => {
      if (client.destroyed) return;
      if (i >= targets.length) {
        client.destroy();
        return;
      }
      const { target, ip: host } = targets[(start + i) % targets.length];
      const upstream = connect({ host, port: l.targetPort, allowHalfOpen: true });
      const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), CONNECT_TIMEOUT_MS);
      let connected = false;
      upstream.once('error', () => {
        clearTimeout(timer);
        if (!connected) attempt(i + 1);
      });
      upstream.once('connect', () => {
        connected = true;
        clearTimeout(timer);
        // The client went while the target was being reached: its close has been and gone.
        if (client.destroyed) {
          upstream.destroy();
          return;
        }
        l.sockets.add(upstream);
        const spliced: Spliced = { client, upstream, target, lastActivity: Date.now() };
        l.connections.add(spliced);
        const active = () => { spliced.lastActivity = Date.now(); };
        client.on('data', active);
        upstream.on('data', active);
        client.once('close', () => l.connections.delete(spliced));
        upstream.on('error', () => client.destroy());
        // A clean close has already ended the client through the pipe, which flushes what is
        // still buffered for it; only a broken one is passed on as such.
        upstream.on('close', (hadError) => {
          l.sockets.delete(upstream);
          if (hadError) client.destroy();
        });
        // Once the target has finished sending (its FIN passed on), only the client's side is
        // left, which a client that never closes would hold, with the target's socket, for good:
        // it gets HALF_CLOSED_IDLE_MS of silence, as HAProxy's `timeout client-fin`.
        upstream.once('end', () => client.setTimeout(HALF_CLOSED_IDLE_MS, () => {
          client.destroy();
          upstream.destroy();
        }));
        client.on('close', (hadError) => {
          if (hadError) upstream.destroy();
          else upstream.end();
        });
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  }
}
