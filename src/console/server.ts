// The web console's server: one HTTPS listener that serves the page and speaks to the API server
// for the person using it.
//   /                         the page (index.html; every other path that is not below /static
//                             or /api is the page too, so a reload of any view works);
//   /static/app.js, app.css   the page's code and style (bundle.ts);
//   /api/kubernetes/…         the API server, proxied with the caller's own `Authorization:
//                             Bearer` header and nothing of the console's: RBAC judges the user,
//                             not the console. Watches stream through unchanged. Without a bearer
//                             token: 401 with a Kubernetes Status, and the page shows its login form;
//   /api/prometheus/api/v1/…  thanos-querier (the cluster's Prometheus API), with the caller's
//                             token as well; 503 with a Status saying why when the cluster has none.
// HTTP/2 (with HTTP/1.1 for clients that do not speak it): a page holds a watch open per live
// list, and a browser opens at most six HTTP/1.1 connections to a server — a seventh request (a
// click's PATCH) would wait behind them. Over HTTP/2 they are streams of one connection.
// The console's own credentials (its kubeconfig) are used only to find thanos-querier and the CA
// that verifies it, never to answer a user. Responses carry a strict Content-Security-Policy: the
// page loads only its own code and style, and talks only to this server.
import { request as httpsRequest, Agent } from 'node:https';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage, ServerResponse, OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfigLike } from '../kube/kubeconfig.js';
import type { KubeClient } from '../kube/client.js';
import type { ServingCertificate } from '../kube/serving-certificate.js';
import { logger } from '../common/log.js';
import type { ConsoleBundle } from './bundle.js';
import { prometheusTarget, type PrometheusTarget } from './prometheus.js';

const log = logger('console');

export interface ConsoleServerOptions {
  /** Where the API server is and the CA that verifies it (its credentials are not used for users). */
  kubeconfig: KubeConfigLike;
  /** The console's own client: finds thanos-querier. */
  client: KubeClient;
  listen: { host: string; port: number };
  certificate: ServingCertificate;
  bundle: ConsoleBundle;
  /** Where Prometheus's API is; default: Service openshift-monitoring/thanos-querier, port 9091. */
  prometheus?: PrometheusTarget;
}

/** Headers passed from the browser to the API server (and nothing else: no cookies, no proxies' headers). */
const FORWARDED_REQUEST_HEADERS = ['authorization', 'accept', 'content-type', 'impersonate-user', 'impersonate-group'];
/** Headers passed back. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'content-disposition', 'warning', 'audit-id', 'retry-after'];

const SECURITY_HEADERS: OutgoingHttpHeaders = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

/** A Kubernetes Status reply, the shape every API error has, so the page shows one kind of error. */
export function writeStatus(res: Response, code: number, reason: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(code, { ...SECURITY_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

/** The caller's bearer token header, or undefined. */
function bearer(req: Request): string | undefined {
  const header = req.headers.authorization;
  return header && /^Bearer \S+$/.test(header) ? header : undefined;
}

/** The API server's URL and TLS options (CA, server name) from a kubeconfig, without its credentials. */
async function apiServerTarget(kc: KubeConfigLike): Promise<{ url: URL; agent: Agent }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  const options: { ca?: Buffer | string; rejectUnauthorized?: boolean; servername?: string; headers?: Record<string, string> } = {};
  await kc.applyToHTTPSOptions(options);
  return {
    url: new URL(cluster.server),
    agent: new Agent({ keepAlive: true, maxSockets: 256, ca: options.ca, rejectUnauthorized: options.rejectUnauthorized ?? true, servername: options.servername }),
  };
}

/** Streams a request to `target` and its response back; `headers` are what is sent upstream. */
function proxy(req: Request, res: Response, target: URL, agent: Agent, headers: OutgoingHttpHeaders, unreachable: string): void {
  const upstream = httpsRequest(target, { method: req.method, headers, agent }, (answer) => {
    const out: OutgoingHttpHeaders = { ...SECURITY_HEADERS, 'cache-control': 'no-store' };
    for (const name of FORWARDED_RESPONSE_HEADERS) if (answer.headers[name] !== undefined) out[name] = answer.headers[name];
    res.writeHead(answer.statusCode ?? 502, out);
    // A watch: the headers go out at once (HTTP/2's writeHead sends them already), then each event as it comes.
    (res as { flushHeaders?: () => void }).flushHeaders?.();
    answer.pipe(res);
    answer.on('error', () => res.destroy());
  });
  upstream.on('error', (e) => writeStatus(res, 502, 'ServiceUnavailable', `${unreachable}: ${e.message}`));
  // The browser went away (a watch closed, a page left): so does the upstream request.
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

export class ConsoleServer {
  private server?: Http2SecureServer;
  /** Open connections (HTTP/2 sessions and HTTP/1.1 sockets), ended at stop: watches never end by themselves. */
  private readonly connections = new Set<{ destroy(): void }>();
  private api?: { url: URL; agent: Agent };
  private readonly prometheus: PrometheusTarget;

  constructor(private readonly o: ConsoleServerOptions) {
    this.prometheus = o.prometheus ?? prometheusTarget(o.client);
  }

  /** The address it serves on (https://host:port). */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('the console is not listening');
    return `https://${this.o.listen.host}:${address.port}`;
  }

  async start(): Promise<void> {
    this.api = await apiServerTarget(this.o.kubeconfig);
    const server = createSecureServer({ ...this.o.certificate.current(), allowHTTP1: true }, (req, res) => this.handle(req, res));
    this.o.certificate.onChange((pair) => server.setSecureContext(pair));
    server.on('secureConnection', (socket: TLSSocket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.listen.port, this.o.listen.host, () => resolve());
    });
    this.server = server;
    log.info({ url: this.url, apiServer: this.api.url.origin }, 'console serving');
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const connection of this.connections) connection.destroy();
    });
    this.api?.agent.destroy();
  }

  private handle(req: Request, res: Response): void {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (path.startsWith('/api/kubernetes/')) return this.proxyApi(req, res);
      if (path.startsWith('/api/prometheus/')) return void this.proxyPrometheus(req, res);
      if (path.startsWith('/api/')) return writeStatus(res, 404, 'NotFound', `no such console API: ${path}`);
      if (req.method !== 'GET' && req.method !== 'HEAD') return writeStatus(res, 405, 'MethodNotAllowed', `${req.method} is not served here`);
      const file = this.o.bundle.file(path);
      if (path.startsWith('/static/') && !file) return writeStatus(res, 404, 'NotFound', `no such file: ${path}`);
      const served = file ?? this.o.bundle.file('/index.html')!;
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': served.contentType, 'cache-control': file && path !== '/index.html' ? 'no-cache' : 'no-store', etag: served.etag });
      if (req.method === 'HEAD') res.end();
      else res.end(served.body);
    } catch (e) {
      log.error({ err: (e as Error).message, path }, 'console request failed');
      writeStatus(res, 500, 'InternalError', (e as Error).message);
    }
  }

  private proxyApi(req: Request, res: Response): void {
    const token = bearer(req);
    if (!token) return writeStatus(res, 401, 'Unauthorized', 'log in: the console sends every request to the API server as you, with your bearer token');
    const api = this.api!;
    const rest = (req.url ?? '').slice('/api/kubernetes'.length);
    const target = new URL(api.url.pathname.replace(/\/$/, '') + rest, api.url.origin);
    const headers: OutgoingHttpHeaders = { 'user-agent': `bosun-console (${req.headers['user-agent'] ?? 'browser'})` };
    for (const name of FORWARDED_REQUEST_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name];
    headers.authorization = token;
    if (req.headers['content-length'] !== undefined) headers['content-length'] = req.headers['content-length'];
    proxy(req, res, target, api.agent, headers, 'the API server cannot be reached');
  }

  private async proxyPrometheus(req: Request, res: Response): Promise<void> {
    const token = bearer(req);
    if (!token) return writeStatus(res, 401, 'Unauthorized', 'log in: Prometheus is asked as you, with your bearer token');
    if (req.method !== 'GET') return writeStatus(res, 405, 'MethodNotAllowed', 'only GET is served for Prometheus');
    const rest = (req.url ?? '').slice('/api/prometheus'.length);
    if (!/^\/api\/v1\/(query|query_range|alerts|rules)(\?|$)/.test(rest)) return writeStatus(res, 404, 'NotFound', `not a Prometheus query: ${rest}`);
    let found: Awaited<ReturnType<PrometheusTarget>>;
    try {
      found = await this.prometheus();
    } catch (e) {
      return writeStatus(res, 503, 'ServiceUnavailable', (e as Error).message);
    }
    const target = new URL(rest, found.url);
    proxy(req, res, target, found.agent, { authorization: token, accept: 'application/json' }, `thanos-querier (${found.url.origin}) cannot be reached`);
  }
}
