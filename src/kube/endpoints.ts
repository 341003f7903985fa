// The HTTP endpoints a component manager serves beside its work, as Kubernetes components serve
// them: `/metrics` (Prometheus text from the toolkit's registry and the component's own), and
// `/healthz` (alias `/livez`) and `/readyz`, each the conjunction of named checks. A check returns
// undefined when it passes or a sentence saying why not. Answers follow kube-apiserver's: 200
// "ok", or 500 listing each check as `[+]name ok` / `[-]name failed: why`; `?verbose` lists them
// on success too. Metrics and health may share a listener or have one each.
//
// /metrics is served as OpenShift's components serve it (kube-rbac-proxy, controller-runtime's
// secure metrics): over HTTPS only, with the serving certificate given (reloaded when it changes),
// and only to a caller the `authorize` hook lets in — the manager's is the API server's
// TokenReview + SubjectAccessReview of `get` on the non-resource URL /metrics (delegated-auth.ts):
// 401 without a token or with one the API server does not know, 403 when it is not allowed. Health
// on a listener of its own stays plain HTTP (probes); on the metrics listener it is HTTPS, and
// open, as kube's /healthz is to anyone.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { REQUEST_LIMITS } from '../common/http-limits.js';
import { closeServer } from '../common/http-server.js';
import { type AuthDecision, writeRefusal } from './delegated-auth.js';
import type { ServingCertificate } from './serving-certificate.js';

export type HealthCheck = () => string | undefined;

/** Named checks, evaluated in the order they were added. */
export class HealthChecks {
  private readonly checks = new Map<string, HealthCheck>();

  add(name: string, check: HealthCheck): void {
    if (this.checks.has(name)) throw new Error(`a health check named "${name}" exists already`);
    this.checks.set(name, check);
  }

  /** Runs every check: whether all passed, and one line per check. */
  evaluate(): { ok: boolean; lines: string[] } {
    let ok = true;
    const lines: string[] = [];
    for (const [name, check] of this.checks) {
      let failure: string | undefined;
      try {
        failure = check();
      } catch (e) {
        failure = (e as Error).message;
      }
      if (failure === undefined) lines.push(`[+]${name} ok`);
      else {
        ok = false;
        lines.push(`[-]${name} failed: ${failure}`);
      }
    }
    return { ok, lines };
  }
}

export interface Listen {
  host: string;
  port: number;
}

/** Decides whether a request for /metrics may have it. */
export type MetricsAuthorizer = (req: IncomingMessage) => Promise<AuthDecision>;

export interface EndpointsOptions {
  metrics?: { listen: Listen; registries: () => Registry[]; certificate: ServingCertificate; authorize: MetricsAuthorizer };
  health?: { listen: Listen; live: HealthChecks; ready: HealthChecks };
}

/** A health endpoint's answer as Kubernetes components give it: `ok`, or every check's line with `?verbose` or on failure. */
export function healthAnswer(req: IncomingMessage, res: ServerResponse, checks: HealthChecks, what: string): void {
  const { ok, lines } = checks.evaluate();
  const verbose = new URL(req.url ?? '/', 'http://x').searchParams.has('verbose');
  const body = ok ? (verbose ? `${lines.join('\n')}\n${what} check passed\n` : 'ok') : `${lines.join('\n')}\n${what} check failed\n`;
  res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end(req.method === 'HEAD' ? undefined : body);
}

async function metricsAnswer(req: IncomingMessage, res: ServerResponse, registries: Registry[]): Promise<void> {
  try {
    // Each registry rendered on its own: metrics registered after start show up, and one
    // component's registry may be shared by several managers in a process.
    const texts = await Promise.all(registries.map((r) => r.metrics()));
    res.writeHead(200, { 'content-type': registries[0].contentType }).end(req.method === 'HEAD' ? undefined : texts.join('\n'));
  } catch (e) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${(e as Error).message}\n`);
  }
}

async function securedMetricsAnswer(req: IncomingMessage, res: ServerResponse, authorize: MetricsAuthorizer, registries: Registry[]): Promise<void> {
  let decision: AuthDecision;
  try {
    decision = await authorize(req);
  } catch (e) {
    // The API server could not be asked: nobody is let in, and the caller is told why.
    return void res.writeHead(503, { 'content-type': 'text/plain' }).end(`cannot authorise the request through the API server: ${(e as Error).message}\n`);
  }
  if (!decision.allowed) return writeRefusal(res, decision);
  await metricsAnswer(req, res, registries);
}

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** Starts the listeners; resolves with the servers, keyed by what they serve. */
export async function serveEndpoints(options: EndpointsOptions): Promise<{ metrics?: Server; health?: Server; close(): Promise<void> }> {
  const byAddress = new Map<string, { listen: Listen; routes: Map<string, Route>; certificate?: ServingCertificate }>();
  const routesAt = (listen: Listen) => {
    const key = `${listen.host}:${listen.port}`;
    // Port 0 means "any free port": never share one.
    let entry = listen.port === 0 ? undefined : byAddress.get(key);
    if (!entry) {
      entry = { listen, routes: new Map() };
      byAddress.set(listen.port === 0 ? `${key}#${byAddress.size}` : key, entry);
    }
    return entry;
  };
  let metricsEntry: ReturnType<typeof routesAt> | undefined;
  let healthEntry: ReturnType<typeof routesAt> | undefined;
  if (options.metrics) {
    const { registries, authorize, certificate } = options.metrics;
    metricsEntry = routesAt(options.metrics.listen);
    metricsEntry.certificate = certificate;
    metricsEntry.routes.set('/metrics', (req, res) => void securedMetricsAnswer(req, res, authorize, registries()));
  }
  if (options.health) {
    const { live, ready } = options.health;
    healthEntry = routesAt(options.health.listen);
    healthEntry.routes.set('/healthz', (req, res) => healthAnswer(req, res, live, 'healthz'));
    healthEntry.routes.set('/livez', (req, res) => healthAnswer(req, res, live, 'livez'));
    healthEntry.routes.set('/readyz', (req, res) => healthAnswer(req, res, ready, 'readyz'));
  }
  const servers = new Map<object, Server>();
  try {
    for (const entry of byAddress.values()) {
      const handle = (req: IncomingMessage, res: ServerResponse) => {
        const path = (req.url ?? '/').split('?')[0];
        const route = entry.routes.get(path);
        if (!route) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path} (served here: ${[...entry.routes.keys()].join(', ')})\n`);
        if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
        route(req, res);
      };
      const { certificate } = entry;
      let server: Server;
      if (certificate) {
        const https = createHttpsServer({ ...REQUEST_LIMITS, ...certificate.current() }, handle);
        certificate.onChange((pair) => https.setSecureContext(pair));
        server = https;
      } else server = createServer(REQUEST_LIMITS, handle);
      servers.set(entry, server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', (e: NodeJS.ErrnoException) => reject(new Error(`cannot listen on ${entry.listen.host}:${entry.listen.port}: ${e.message}`)));
        server.listen(entry.listen.port, entry.listen.host, () => resolve());
      });
    }
  } catch (e) {
    await closeAll([...servers.values()]);
    throw e;
  }
  return {
    metrics: metricsEntry && servers.get(metricsEntry),
    health: healthEntry && servers.get(healthEntry),
    close: () => closeAll([...servers.values()]),
  };
}

async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map(closeServer));
}

/** "host:port" a server is bound to. */
export function boundAddress(server: Server | undefined): string | undefined {
  const a = server?.address() as AddressInfo | null | undefined;
  return a ? `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` : undefined;
}
