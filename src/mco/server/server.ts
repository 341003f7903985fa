// The machine-config server: booting machines fetch `GET|HEAD /config/<pool>` over TLS (default
// port 22623) or plain HTTP (22624) and get the pool's rendered config as Ignition, at the spec
// version their Accept header asks for. Also `/healthz`; its metrics are the component manager's
// (HTTPS, authorised through the API server), never on these open listeners. Built directly on
// node:http/node:https (HTTP/1.1 only, TLS 1.2+) with bodies cached per (config, version), so
// a boot storm costs one render per pool and version, not one per request. A manager Runnable on
// every replica (no Lease): it listens once its source knows the pools, and closes on stop.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { REQUEST_LIMITS } from '../../common/http-limits.js';
import { boundPort, closeServer } from '../../common/http-server.js';
import { logger } from '../../common/log.js';
import type { Runnable } from '../../kube/manager.js';
import { negotiateVersion } from '../../ignition/accept.js';
import { ServerMetrics } from './metrics.js';
import type { RenderedConfigSource } from './rendered-config-source.js';
import { ServedBodyCache } from './served-config.js';
import type { ServingTls } from './serving-tls.js';

export const DEFAULT_TLS_PORT = 22623;
export const DEFAULT_HTTP_PORT = 22624;

export interface Listen { host: string; port: number }

export interface MachineConfigServerOptions {
  source: RenderedConfigSource;
  /** Serving certificate for the TLS listener; omit together with `listenTls` to run plain HTTP only. */
  tls?: ServingTls;
  listenTls?: Listen | null;
  listenHttp?: Listen | null;
  /** The kubelet's bootstrap kubeconfig, served at /etc/kubernetes/kubeconfig (omitted when absent). */
  bootstrapKubeconfig?: string;
}

const POOL_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const log = logger('machine-config-server');

export class MachineConfigServer implements Runnable {
  readonly name = 'machine-config-server';
  readonly needsLeaderElection = false;
  readonly metrics = new ServerMetrics();
  private readonly cache: ServedBodyCache;
  private readonly servers: { name: 'tls' | 'http'; server: Server; listen: Listen }[] = [];
  private markListening!: () => void;
  /** Resolves once the listeners are bound (their ports known, with port 0). */
  readonly listening = new Promise<void>((resolve) => (this.markListening = resolve));

  constructor(private readonly options: MachineConfigServerOptions) {
    this.cache = new ServedBodyCache(options.bootstrapKubeconfig);
    const listenTls = options.listenTls === undefined ? { host: '0.0.0.0', port: DEFAULT_TLS_PORT } : options.listenTls;
    const listenHttp = options.listenHttp === undefined ? { host: '0.0.0.0', port: DEFAULT_HTTP_PORT } : options.listenHttp;
    if (listenTls) {
      if (!options.tls) throw new Error('the TLS listener needs a serving certificate');
      const server = createHttpsServer({
        ...REQUEST_LIMITS,
        cert: options.tls.cert,
        key: options.tls.key,
        minVersion: 'TLSv1.2',
        ALPNProtocols: ['http/1.1'],
      }, (req, res) => this.handle('tls', req, res));
      this.servers.push({ name: 'tls', server, listen: listenTls });
    }
    if (listenHttp) {
      this.servers.push({ name: 'http', server: createHttpServer(REQUEST_LIMITS, (req, res) => this.handle('http', req, res)), listen: listenHttp });
    }
    for (const { server } of this.servers) {
      server.keepAliveTimeout = 30_000;
      server.on('clientError', (_err, socket) => socket.destroy());
    }
  }

  /** Listens (once the source has synced); returns when listening. */
  async start(signal?: AbortSignal): Promise<void> {
    await this.options.source.waitForSync?.(signal);
    if (signal?.aborted) return;
    await Promise.all(this.servers.map(({ server, listen }) => new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => { server.off('error', reject); resolve(); });
    })));
    for (const s of this.servers) log.info({ listener: s.name, address: this.address(s.name) }, 'listening');
    this.markListening();
  }

  /** "host:port" the listener is bound to (useful with port 0). */
  address(listener: 'tls' | 'http'): string | undefined {
    const s = this.servers.find((x) => x.name === listener);
    const a = s?.server.address() as AddressInfo | null | undefined;
    return a ? `${a.address}:${a.port}` : undefined;
  }

  port(listener: 'tls' | 'http'): number | undefined {
    return boundPort(this.servers.find((x) => x.name === listener)?.server);
  }

  /** Closes the listeners and the source. */
  async stop(): Promise<void> {
    this.options.source.close?.();
    await this.close();
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map(({ server }) => closeServer(server)));
  }

  private handle(listener: 'tls' | 'http', req: IncomingMessage, res: ServerResponse): void {
    const started = process.hrtime.bigint();
    let pool = '';
    let version = '';
    res.on('finish', () => {
      this.metrics.requests.inc({ listener, pool, version, code: res.statusCode });
      this.metrics.duration.observe({ listener }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    const url = req.url ?? '/';
    const path = url.split('?')[0];
    const isRead = req.method === 'GET' || req.method === 'HEAD';

    if (path === '/healthz') {
      if (!isRead) return this.methodNotAllowed(res);
      return this.send(res, req, 200, 'text/plain', Buffer.from('ok\n'));
    }
    const m = /^\/config\/([^/]+)$/.exec(path);
    if (!m) return this.send(res, req, 404, 'text/plain', Buffer.from(`not found: ${path}\n`));
    if (!isRead) return this.methodNotAllowed(res);
    try { pool = decodeURIComponent(m[1]); } catch { pool = m[1]; }
    const client = req.socket.remoteAddress;
    if (!POOL_RE.test(pool)) return this.send(res, req, 404, 'text/plain', Buffer.from(`machine config pool "${pool}" not found\n`));
    const rendered = this.options.source.get(pool);
    if (!rendered) {
      log.info({ pool, client, listener }, 'config requested for unknown pool');
      return this.send(res, req, 404, 'text/plain', Buffer.from(`machine config pool "${pool}" not found\n`));
    }
    const negotiated = negotiateVersion(req.headers.accept);
    if (!negotiated.ok) {
      log.info({ pool, client, listener, accept: req.headers.accept }, negotiated.message);
      return this.send(res, req, 400, 'text/plain', Buffer.from(`${negotiated.message}\n`));
    }
    let lastError: Error | undefined;
    for (const candidate of negotiated.candidates) {
      const body = this.cache.body(rendered, candidate);
      if (body instanceof Error) { lastError = body; continue; }
      version = candidate;
      log.info({ pool, version, config: rendered.name, client, listener }, 'serving config');
      return this.send(res, req, 200, 'application/json', body);
    }
    log.error({ pool, client, listener, err: lastError?.message }, 'cannot serve config at any accepted version');
    this.send(res, req, 400, 'text/plain', Buffer.from(`${lastError?.message}\n`));
  }

  private methodNotAllowed(res: ServerResponse): void {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain', 'content-length': 19 });
    res.end('method not allowed\n');
  }

  private send(res: ServerResponse, req: IncomingMessage, status: number, type: string, body: Buffer): void {
    res.writeHead(status, { 'content-type': type, 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}
