// The local cloud as a running service: the instances (cloud.ts), the network objects
// (network.ts) and the HTTP API on a loopback address, with the endpoint file written for clients;
// the load balancers' data plane (load-balancer-engine.ts: haproxy, or the Node proxy without it) follows the stored balancers while it runs.
// Callers need a credential (credentials.ts): the root one is made on the first start and kept in
// cloud/root.credential; what they do is appended to cloud/audit.log.
import type { FastifyInstance } from 'fastify';
import { join, resolve } from 'node:path';
import { buildCloudApi } from './api.js';
import { CloudAuditLog, auditLogFile } from './audit.js';
import { LocalCloud, type CloudOptions } from './cloud.js';
import { rootCredentialPath } from './client.js';
import { CredentialStore, credentialsFile } from './credentials.js';
import { removeEndpoint, writeEndpoint } from './endpoint.js';
import { loadBalancerEngine, type EngineOptions, type LoadBalancerEngine } from './load-balancer-engine.js';
import { bounded } from '../common/bounded.js';
import { boundPort } from '../common/http-server.js';
import { logger, type Logger } from '../common/log.js';
import { sleep } from '../common/sleep.js';
import { Network } from './network.js';

/** How often the balancers are synced again without a change to them. */
const RESYNC_MS = 2_000;
/** The bound of each step of close(): the machines' pods get their shutdown grace (5 s) each, in parallel. */
const CLOSE_BOUNDS = { api: 10_000, machines: 60_000, loadBalancers: 15_000, store: 10_000 };

export interface ServeOptions extends CloudOptions {
  /** What carries the load balancers: `auto` (haproxy when installed, else the Node proxy), `haproxy`, `nftables` (the kernel) or `node`. */
  loadBalancerEngine?: EngineOptions['engine'];
  /** The haproxy program (default: haproxy on PATH or in /usr/sbin). */
  haproxyBinary?: string;
  host?: string;
  /** 0: a free port. */
  port?: number;
}

export class CloudService {
  readonly cloud: LocalCloud;
  readonly network: Network;
  /** The load balancers' data plane: haproxy, or the Node proxy when haproxy is missing. */
  readonly proxies: LoadBalancerEngine;
  readonly credentials: CredentialStore;
  private readonly audit: CloudAuditLog;
  private app: FastifyInstance;
  private proxySync: Promise<void> = Promise.resolve();
  /** Syncs the balancers again now and then: instances that went, a port that was taken, an engine process that died. */
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  url = '';
  /** The root identity's credential (also in cloud/root.credential): everything is allowed with it. */
  readonly rootCredential: string;

  constructor(private readonly opts: ServeOptions) {
    this.cloud = new LocalCloud(opts);
    this.log = opts.log ?? logger('cloud');
    this.proxies = loadBalancerEngine({
      engine: opts.loadBalancerEngine ?? engineFromEnv(),
      haproxyBinary: opts.haproxyBinary,
      dir: join(resolve(opts.dataDir), 'cloud', 'haproxy'),
      log: this.log,
      resolve: (id) => {
        const instance = this.cloud.store.instances.get(id);
        return instance && instance.state !== 'terminated' ? instance.privateIp : undefined;
      },
    });
    this.network = new Network(this.cloud.store, () => this.syncProxies(), () => ({ name: this.proxies.name, ...(this.proxies.reason ? { reason: this.proxies.reason } : {}) }));
    this.credentials = new CredentialStore(credentialsFile(resolve(opts.dataDir)));
    this.rootCredential = this.credentials.ensureRoot(rootCredentialPath(resolve(opts.dataDir)));
    this.audit = new CloudAuditLog(auditLogFile(resolve(opts.dataDir)));
    this.app = buildCloudApi(this.cloud, this.network, { credentials: this.credentials, audit: this.audit });
  }

  async start(): Promise<string> {
    const host = this.opts.host ?? '127.0.0.1';
    if (!isLoopback(host)) throw new Error(`the local cloud listens on loopback only; ${host} is not a loopback address`);
    this.cloud.recover();
    await this.syncProxies();
    this.resyncTimer = setInterval(() => void this.syncProxies(), RESYNC_MS);
    this.resyncTimer.unref();
    await this.app.listen({ host, port: this.opts.port ?? 0 });
    const port = boundPort(this.app.server) ?? this.opts.port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    writeEndpoint(this.opts.dataDir, { url: this.url, pid: process.pid });
    return this.url;
  }

  /**
   * Stops the API, then the machines, then the load balancers, then the store. Each step has a
   * bound (CLOSE_BOUNDS): one that does not finish is named in the log and the next runs anyway;
   * the close then rejects naming every step it gave up on.
   */
  async close(): Promise<void> {
    removeEndpoint(this.opts.dataDir, process.pid);
    const stuck: string[] = [];
    const step = async (what: string, work: () => Promise<void>, ms: number) => {
      try {
        await bounded(work(), ms, what);
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, `cloud: ${what}: giving up; going on with the rest of the shutdown`);
        stuck.push((e as Error).message);
      }
    };
    await step('the cloud API closing (its requests in flight)', () => this.app.close(), CLOSE_BOUNDS.api);
    // Machines first: what runs on them still reaches the cluster through the balancers (api-int)
    // while it stops — pods write their last status and release their Leases.
    await step('the machines powering off (their node agents stopping their pods)', () => this.cloud.powerOff(), CLOSE_BOUNDS.machines);
    clearInterval(this.resyncTimer);
    await step('the last load-balancer sync', () => this.proxySync, CLOSE_BOUNDS.loadBalancers);
    await step(`the load balancers' ${this.proxies.name} stopping`, () => this.proxies.closeAll(), CLOSE_BOUNDS.loadBalancers);
    await step("the cloud's store closing", () => this.cloud.close(), CLOSE_BOUNDS.store);
    this.credentials.close();
    this.audit.close();
    if (stuck.length > 0) throw new Error(`the local cloud closed, but ${stuck.join('; ')}`);
  }

  /**
   * The cloud's API goes away for `downMs` and comes back on the same address, as a cloud's
   * control plane restarting: callers get connection errors meanwhile and must retry; the
   * machines and the load balancers (the data plane) run on. For fault injection (the
   * disruption tests) and operators who want to see their controllers ride it out.
   */
  async restartApi(downMs: number): Promise<void> {
    if (!this.url) throw new Error('the local cloud is not running');
    const { hostname, port } = new URL(this.url);
    await this.app.close();
    await sleep(downMs);
    this.app = buildCloudApi(this.cloud, this.network, { credentials: this.credentials, audit: this.audit });
    await this.app.listen({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
  }

  /** Brings the proxies in line with the stored balancers; syncs run one after another. */
  syncProxies(): Promise<void> {
    // A failed sync (a closed store at shutdown) must not stop later ones.
    this.proxySync = this.proxySync.then(() => this.proxies.sync(this.network.listLoadBalancers())).catch((e: Error) => {
      if (!/not open|closed/i.test(e.message)) this.log.error({ err: e.message, engine: this.proxies.name }, 'load balancers: sync failed');
    });
    return this.proxySync;
  }
}

/** BOSUN_LB_ENGINE=auto|haproxy|nftables|node chooses the engine when the caller does not. */
function engineFromEnv(): ServeOptions['loadBalancerEngine'] {
  const v = process.env.BOSUN_LB_ENGINE;
  if (v === undefined || v === '') return undefined;
  if (v === 'auto' || v === 'haproxy' || v === 'nftables' || v === 'node') return v;
  throw new Error(`BOSUN_LB_ENGINE must be auto, haproxy, nftables or node, got "${v}"`);
}

function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1' || host === 'localhost';
}
