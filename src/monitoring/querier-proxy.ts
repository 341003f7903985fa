// `bosun thanos-querier`: the authorising HTTPS proxy in front of Prometheus's HTTP API, as
// OpenShift's thanos-querier pod serves its `web` port (9091) through kube-rbac-proxy-web.
//   - Only Prometheus's HTTP API (/api/v1/…: query, query_range, series, labels, rules, alerts,
//     targets, metadata, status) is served; anything else is 404.
//   - A caller is let through when the API server authenticates its bearer token (TokenReview)
//     and authorises it (SubjectAccessReview) for the attributes kube-rbac-proxy-web is configured
//     with on OpenShift: verb from the HTTP method (GET/HEAD → get, POST → create), resource
//     `prometheuses`, subresource `api`, group `monitoring.coreos.com`, namespace
//     `openshift-monitoring`, name `k8s` — what ClusterRole cluster-monitoring-view grants.
//     Otherwise 401 (no token, or one the API server does not know) or 403.
//   - The serving certificate and key are files (Secret thanos-querier-tls, issued by the service
//     CA); the proxy waits for them to exist before it listens, and picks up a renewed pair.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { parseTarget, REQUEST_LIMITS } from '../common/http-limits.js';
import { boundPort, closeServer, listenOn } from '../common/http-server.js';
import { DelegatedAuth, verbForMethod, writeRefusal } from '../kube/delegated-auth.js';
import type { KubeClient } from '../kube/index.js';
import { QUERIER_RESOURCE_ATTRIBUTES } from './names.js';

export interface QuerierProxyOptions {
  client: KubeClient;
  /** Prometheus's HTTP address (http://host:port). */
  upstream: string;
  listen: { host: string; port: number };
  certFile: string;
  keyFile: string;
  /** How often to look for the certificate (to start, and to pick up a renewal). */
  pollMs?: number;
  log?: (event: Record<string, unknown>, message: string) => void;
  signal?: AbortSignal;
}

const API_PATH = /^\/api\/v1\/[a-z_/A-Za-z0-9.:-]+$/;

/** The SubjectAccessReview attributes of a request (the same for every API path, as kube-rbac-proxy-web's config). */
export function querierAttributes(method: string): { resource: typeof QUERIER_RESOURCE_ATTRIBUTES & { verb: string } } {
  return { resource: { ...QUERIER_RESOURCE_ATTRIBUTES, verb: verbForMethod(method) } };
}

export class QuerierProxy {
  private server?: Server;
  private certStamp = '';
  private timer?: NodeJS.Timeout;
  private readonly auth: DelegatedAuth;
  private readonly upstream: URL;

  constructor(private readonly o: QuerierProxyOptions) {
    this.auth = new DelegatedAuth(o.client);
    this.upstream = new URL(o.upstream);
    if (this.upstream.protocol !== 'http:') throw new Error(`--upstream must be an http:// URL (Prometheus in the same pod), got "${o.upstream}"`);
  }

  private log(event: Record<string, unknown>, message: string): void {
    (this.o.log ?? ((e, m) => console.log(JSON.stringify({ ...e, msg: m }))))(event, message);
  }

  private stamp(): string | undefined {
    if (!existsSync(this.o.certFile) || !existsSync(this.o.keyFile)) return undefined;
    return `${statSync(this.o.certFile).mtimeMs}/${statSync(this.o.keyFile).mtimeMs}/${readFileSync(this.o.certFile, 'utf8').length}`;
  }

  /** Listens once the certificate exists; resolves with the address. */
  async start(): Promise<{ host: string; port: number }> {
    let waited = false;
    while (!this.stamp()) {
      if (!waited) this.log({ cert: this.o.certFile }, 'waiting for the serving certificate (Secret thanos-querier-tls, from the service CA)');
      waited = true;
      if (this.o.signal?.aborted) throw new Error('stopped before the serving certificate appeared');
      await new Promise((r) => setTimeout(r, this.o.pollMs ?? 2000));
    }
    this.certStamp = this.stamp()!;
    const server = createServer({ ...REQUEST_LIMITS, cert: readFileSync(this.o.certFile), key: readFileSync(this.o.keyFile) }, (req, res) => {
      this.handle(req, res).catch((e: Error) => {
        if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' });
        res.end(`cannot authorise the request: ${e.message}\n`);
      });
    });
    this.server = server;
    await listenOn(server, this.o.listen.port, this.o.listen.host);
    this.timer = setInterval(() => {
      const now = this.stamp();
      if (!now || now === this.certStamp) return;
      try {
        server.setSecureContext({ cert: readFileSync(this.o.certFile), key: readFileSync(this.o.keyFile) });
        this.certStamp = now;
        this.log({}, 'serving certificate renewed');
      } catch (e) {
        this.log({ err: (e as Error).message }, 'cannot load the renewed serving certificate; keeping the old one');
      }
    }, this.o.pollMs ?? 2000);
    const port = boundPort(server) ?? this.o.listen.port;
    this.log({ listen: `${this.o.listen.host}:${port}`, upstream: this.o.upstream }, 'thanos-querier proxy serving');
    return { host: this.o.listen.host, port };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseTarget(req, 'https://querier');
    if (!url) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`400 bad request: the request target is not a URL: ${JSON.stringify(req.url?.slice(0, 200))}\n`);
      return;
    }
    if (!API_PATH.test(url.pathname)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found: this proxy serves the Prometheus HTTP API (/api/v1/…)\n');
      return;
    }
    const decision = await this.auth.check(req.headers.authorization, querierAttributes(req.method ?? 'GET'));
    if (!decision.allowed) {
      writeRefusal(res, decision);
      return;
    }
    // Gone while it was being authorised: nothing to pass on (its close has been and gone).
    if (req.destroyed) return;
    const headers = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    const upstream = httpRequest({ host: this.upstream.hostname, port: this.upstream.port || 80, method: req.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`Prometheus is not answering: ${e.message}\n`);
    });
    // A client gone before the exchange is complete (its answer, or its own request's body)
    // takes the request to Prometheus with it, as Go's reverse proxy does: an unfinished request
    // would hold a connection there.
    res.on('close', () => {
      if (!res.writableFinished || !req.complete) upstream.destroy();
    });
    req.pipe(upstream);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.server) await closeServer(this.server);
  }
}
