// The kubelet's HTTPS endpoint on <nodeIP>:10250: the container logs the API server proxies
// `kubectl logs` to (GET /containerLogs/<namespace>/<pod>/<container> with follow, previous,
// tailLines, timestamps and limitBytes, read from the container's log files under /var/log/pods in
// the machine root), and the node's metrics (/metrics and /metrics/resource, metrics.ts). Callers
// are authenticated as the kubelet does: a client certificate from the client CA the
// KubeletConfiguration names (its subject: CN user, O groups), else a bearer token (TokenReview);
// then authorised with a SubjectAccessReview of `nodes/<subresource>` on this node, the
// subresource from the path as the kubelet's auth.go maps it (metrics, stats, log, spec, else
// proxy) — the API server's kubelet-client certificate may `get nodes/proxy`, the monitoring
// identity `get nodes/metrics`. No credentials is a 401, not allowed a 403. The serving
// certificate can be replaced while running (the signed one from the kubelet-serving CSR replaces
// the self-signed one). And the streaming endpoints the API server proxies upgrades to (as
// `nodes/proxy`, as the kubelet's): /exec/<namespace>/<pod>/<container> for `kubectl exec`
// (exec-session.ts: a WebSocket, or SPDY), /portForward/<namespace>/<pod> for `kubectl
// port-forward` (port-forward.ts: SPDY, or SPDY tunnelled in a WebSocket).
import { existsSync, readdirSync, readFileSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { parseTarget, REQUEST_LIMITS } from '../../common/http-limits.js';
import { closeServer, listenOn, responseOnSocket } from '../../common/http-server.js';
import type { Duplex } from 'node:stream';
import { createWebSocketStream, WebSocketServer } from 'ws';
import { EXEC_PROTOCOLS, EXEC_SPDY_PROTOCOLS, execOptions, runExecOverSpdy, runExecSession, type ExecTarget } from './exec-session.js';
import { PORT_FORWARD_PROTOCOL, PORT_FORWARD_TUNNEL_PROTOCOL, runPortForward } from './port-forward.js';
import { offeredProtocols, spdyUpgradeResponse } from './spdy.js';
import { containerKind } from './pod-spec.js';
import type { Logger } from '../../common/log.js';
import type * as api from '../../api/index.js';
import { verbForMethod } from '../../kube/index.js';
import type { NodeMetrics } from './metrics.js';

/** A bearer token's verdict: its user allowed, or 401/403 with the reason. */
export type TokenVerdict = { allowed: true } | { allowed: false; status: 401 | 403; message: string };

export interface LogSource {
  /** The pod bound to this node, if any. */
  pod(namespace: string, name: string): api.Pod | undefined;
  /** Whether the user may `verb` nodes/<subresource> of this node. */
  authorize(user: { name: string; groups: string[] }, verb: string, subresource: string): Promise<boolean>;
  /** The Authorization header's bearer token reviewed and its user asked about `verb nodes/<subresource>` of this node. */
  authorizeToken(authorization: string | undefined, verb: string, subresource: string): Promise<TokenVerdict>;
  /** The node's metrics; without them /metrics is a 404. */
  metrics?: NodeMetrics;
  /** Where a command exec'd in a running container of a pod here runs; undefined when it is not running. */
  execTarget?(namespace: string, name: string, container: string): ExecTarget | undefined;
}

/** The kubelet's subresource for a path (pkg/kubelet/server/auth.go): what `nodes/<subresource>` a caller needs. */
export function kubeletSubresource(path: string): string {
  const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  if (under('/stats')) return 'stats';
  if (under('/metrics')) return 'metrics';
  if (under('/logs')) return 'log';
  if (under('/spec')) return 'spec';
  if (under('/checkpoint')) return 'checkpoint';
  return 'proxy';
}

/** The log files of a container, oldest restart first. */
export function logFiles(root: string, pod: api.Pod, container: string): string[] {
  const dir = join(root, 'var/log/pods', `${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`, container);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => /^\d+\.log$/.test(n)).sort((a, b) => parseInt(a) - parseInt(b)).map((n) => join(dir, n));
}

/** CRI log lines as `kubectl logs` shows them: the message, with its timestamp when asked. */
export function formatCriLines(text: string, timestamps: boolean): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/.exec(line);
    if (!m) continue;
    const msg = m[3] === 'F' ? `${m[4]}\n` : m[4];
    out.push(timestamps ? `${m[1]} ${msg}` : msg);
  }
  return out;
}

function problem(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'content-type': 'text/plain' }).end(`${message}\n`);
}

/**
 * What to say of a container whose image is simulated (Running with no process: only bosun.local
 * images run processes on the local machines), `what` it therefore lacks; undefined for any other.
 */
function simulatedContainer(pod: api.Pod, container: string, what: string): string | undefined {
  const image = pod.spec?.containers?.find((c) => c.name === container)?.image ?? '';
  if (containerKind(image) !== 'simulated') return undefined;
  return `container ${container} in pod ${pod.metadata?.name} ${what}: its image ${image} is simulated on bosun's local machines (only bosun.local images run)`;
}

export class LogsServer {
  private server?: Server;
  private clientCaPem?: string;

  constructor(
    private readonly root: string,
    private readonly source: LogSource,
    private readonly log: Logger,
  ) {}

  async start(address: string, port: number, tls: { certPem: string; keyPem: string; clientCaPem?: string }): Promise<void> {
    this.clientCaPem = tls.clientCaPem;
    this.server = createServer({
      ...REQUEST_LIMITS,
      cert: tls.certPem, key: tls.keyPem,
      // Certificates are asked for, not required: bearer tokens are the other way in (checked per request).
      ...(tls.clientCaPem ? { ca: tls.clientCaPem, requestCert: true, rejectUnauthorized: false } : { requestCert: false }),
    }, (req, res) => this.serve(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.serve(req, responseOnSocket(req, socket), { socket, head }));
    await listenOn(this.server, port, address);
  }

  private serve(req: IncomingMessage, res: ServerResponse, upgrade?: { socket: Duplex; head: Buffer }): void {
    if (!parseTarget(req, 'https://node')) return problem(res, 400, `the request target is not a URL: ${JSON.stringify(req.url?.slice(0, 200))}`);
    this.authorized(req, res).then((ok) => (ok ? this.handle(req, res, upgrade) : undefined), (e) => problem(res, 500, `authorization failed: ${(e as Error).message}`))
      .catch((e) => {
        this.log.warn({ err: (e as Error).message }, 'serving a kubelet request failed');
        // (a path that does not decode, …): answered, so that neither a request nor an upgrade hangs.
        if (!res.headersSent && res.socket) problem(res, 400, (e as Error).message);
      });
  }

  /** Serves with a new certificate from now on (connections already open keep theirs). */
  setServingCertificate(certPem: string, keyPem: string): void {
    this.server?.setSecureContext({ cert: certPem, key: keyPem, ...(this.clientCaPem ? { ca: this.clientCaPem } : {}) });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await closeServer(server);
  }

  /**
   * A verified client certificate's subject, else the bearer token's user, asked about the
   * kubelet's attributes for the path; 401 without credentials (or with a certificate the client
   * CA did not sign), 403 when not allowed.
   */
  private async authorized(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const socket = req.socket as TLSSocket;
    const verb = verbForMethod(req.method ?? 'GET');
    const subresource = kubeletSubresource(new URL(req.url ?? '/', 'https://node').pathname);
    const cert = socket.getPeerCertificate?.();
    const presented = cert !== undefined && Object.keys(cert).length > 0;
    if (presented) {
      const subject = cert.subject as Record<string, string | string[]> | undefined;
      const name = socket.authorized ? [subject?.CN].flat()[0] : undefined;
      const groups = [subject?.O ?? []].flat();
      if (name && (await this.source.authorize({ name, groups }, verb, subresource))) return true;
      problem(res, name ? 403 : 401, name ? `Forbidden (user=${name}, verb=${verb}, resource=nodes, subresource=${subresource})` : 'Unauthorized');
      return false;
    }
    const verdict = await this.source.authorizeToken(req.headers.authorization, verb, subresource);
    if (verdict.allowed) return true;
    problem(res, verdict.status, verdict.message);
    return false;
  }

  private handle(req: IncomingMessage, res: ServerResponse, upgrade?: { socket: Duplex; head: Buffer }): void {
    const url = new URL(req.url ?? '/', 'https://node');
    if (url.pathname === '/metrics' || url.pathname === '/metrics/resource') return void this.serveMetrics(req, res, url.pathname);
    const exec = /^\/exec\/([^/]+)\/([^/]+)\/(?:[^/]+\/)?([^/]+)\/?$/.exec(url.pathname);
    if (exec) return this.serveExec(req, res, exec.slice(1).map(decodeURIComponent) as [string, string, string], url.searchParams, upgrade);
    const forward = /^\/portForward\/([^/]+)\/([^/]+)(?:\/[^/]+)?\/?$/.exec(url.pathname);
    if (forward) return this.servePortForward(req, res, forward[1], forward[2], upgrade);
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) return problem(res, 404, `404 page not found: ${url.pathname}`);
    const [namespace, name, container] = m.slice(1).map(decodeURIComponent);
    const pod = this.source.pod(namespace, name);
    if (!pod) return problem(res, 404, `pod ${namespace}/${name} is not on this node`);
    if (!(pod.spec?.containers ?? []).some((c) => c.name === container)) return problem(res, 400, `container ${container} is not valid for pod ${name}`);
    const q = url.searchParams;
    const flag = (k: string) => q.get(k) === 'true' || q.get(k) === '1';
    const files = logFiles(this.root, pod, container);
    const file = flag('previous') ? files[files.length - 2] : files[files.length - 1];
    if (!file) {
      const simulated = simulatedContainer(pod, container, 'writes no log');
      if (simulated && !flag('previous')) return problem(res, 400, simulated);
      return problem(res, 400, flag('previous') ? `previous terminated container "${container}" in pod "${name}" not found` : `container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
    }
    const timestamps = flag('timestamps');
    let lines = formatCriLines(readFileSync(file, 'utf8'), timestamps);
    const tail = q.get('tailLines');
    if (tail !== null && /^\d+$/.test(tail)) lines = Number(tail) === 0 ? [] : lines.slice(-Number(tail));
    let body = lines.join('');
    const limit = q.get('limitBytes');
    if (limit !== null && /^\d+$/.test(limit)) body = body.slice(0, Number(limit));
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write(body);
    if (!flag('follow')) return void res.end();
    this.follow(file, statSync(file).size, timestamps, pod, container, req, res);
  }

  /** `kubectl exec` (exec-session.ts): the WebSocket upgrade, once the container is found running. */
  private serveExec(req: IncomingMessage, res: ServerResponse, [namespace, name, container]: [string, string, string], query: URLSearchParams, upgrade?: { socket: Duplex; head: Buffer }): void {
    const pod = this.source.pod(namespace, name);
    if (!pod) return problem(res, 404, `pod ${namespace}/${name} is not on this node`);
    if (!(pod.spec?.containers ?? []).some((c) => c.name === container)) return problem(res, 400, `container ${container} is not valid for pod ${name}`);
    const target = this.source.execTarget?.(namespace, name, container);
    if (!target) return problem(res, 400, simulatedContainer(pod, container, 'runs no process to exec beside') ?? `container ${container} in pod ${name} is not running`);
    const options = execOptions(query);
    if (options.command.length === 0) return problem(res, 400, 'you must specify at least 1 command');
    if (!options.stdin && !options.stdout && !options.stderr) return problem(res, 400, 'you must specify at least 1 of stdin, stdout, stderr');
    if (!upgrade) return problem(res, 400, 'Upgrade request required');
    const transport = (req.headers.upgrade ?? '').toLowerCase();
    if (transport === 'spdy/3.1') {
      const protocol = this.negotiate(req, res, EXEC_SPDY_PROTOCOLS);
      if (!protocol) return;
      this.log.info({ pod: `${namespace}/${name}`, container, command: options.command, protocol: `SPDY/3.1 ${protocol}` }, 'exec');
      return runExecOverSpdy(this.switchToSpdy(res, upgrade, protocol), target, options, this.log);
    }
    if (transport !== 'websocket') return problem(res, 400, `exec is served over a WebSocket (${EXEC_PROTOCOLS.join(', ')}) or SPDY/3.1, not ${JSON.stringify(req.headers.upgrade)}`);
    const offered = offeredProtocols(req.headers['sec-websocket-protocol']);
    if (!EXEC_PROTOCOLS.some((p) => offered.includes(p))) return problem(res, 400, `none of the WebSocket subprotocols offered (${offered.join(', ') || 'none'}) is served: ${EXEC_PROTOCOLS.join(', ')}`);
    res.detachSocket(upgrade.socket as Parameters<ServerResponse['detachSocket']>[0]);
    const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => EXEC_PROTOCOLS.find((p) => protocols.has(p)) ?? false });
    wss.handleUpgrade(req, upgrade.socket, upgrade.head, (ws) => {
      this.log.info({ pod: `${namespace}/${name}`, container, command: options.command, protocol: ws.protocol }, 'exec');
      runExecSession(ws, target, options, this.log);
    });
  }

  /** `kubectl port-forward` (port-forward.ts): SPDY, or SPDY tunnelled in a WebSocket. */
  private servePortForward(req: IncomingMessage, res: ServerResponse, namespace: string, name: string, upgrade?: { socket: Duplex; head: Buffer }): void {
    [namespace, name] = [namespace, name].map(decodeURIComponent);
    const pod = this.source.pod(namespace, name);
    if (!pod) return problem(res, 404, `pod ${namespace}/${name} is not on this node`);
    const podIP = pod.status?.podIP;
    if (!podIP) return problem(res, 400, `pod ${name} has no IP yet`);
    const target = { podIP, pod: `${namespace}/${name}`, uid: pod.metadata.uid ?? '' };
    if (!upgrade) return problem(res, 400, 'Upgrade request required');
    const transport = (req.headers.upgrade ?? '').toLowerCase();
    if (transport === 'spdy/3.1') {
      const protocol = this.negotiate(req, res, [PORT_FORWARD_PROTOCOL]);
      if (!protocol) return;
      this.log.info({ pod: target.pod, protocol: 'SPDY/3.1' }, 'port-forward');
      return void runPortForward(this.switchToSpdy(res, upgrade, protocol), target, this.log);
    }
    const offered = offeredProtocols(req.headers['sec-websocket-protocol']);
    if (transport !== 'websocket' || !offered.includes(PORT_FORWARD_TUNNEL_PROTOCOL)) {
      return problem(res, 400, `port forwarding is served over SPDY/3.1 (${PORT_FORWARD_PROTOCOL}) or a WebSocket (${PORT_FORWARD_TUNNEL_PROTOCOL}), not ${JSON.stringify(req.headers.upgrade)}`);
    }
    res.detachSocket(upgrade.socket as Parameters<ServerResponse['detachSocket']>[0]);
    // The subprotocol has a '/', which the ws library refuses in a subprotocol: it is chosen here.
    delete req.headers['sec-websocket-protocol'];
    const wss = new WebSocketServer({ noServer: true });
    wss.on('headers', (headers) => headers.push(`Sec-WebSocket-Protocol: ${PORT_FORWARD_TUNNEL_PROTOCOL}`));
    wss.handleUpgrade(req, upgrade.socket, upgrade.head, (ws) => {
      this.log.info({ pod: target.pod, protocol: PORT_FORWARD_TUNNEL_PROTOCOL }, 'port-forward');
      const tunnel = createWebSocketStream(ws);
      tunnel.on('error', () => undefined);
      runPortForward(tunnel, target, this.log);
    });
  }

  /** The first of `served` the SPDY upgrade request offers (X-Stream-Protocol-Version); else answers 400 and returns undefined. */
  private negotiate(req: IncomingMessage, res: ServerResponse, served: string[]): string | undefined {
    const offered = offeredProtocols(req.headers['x-stream-protocol-version']);
    const chosen = served.find((p) => offered.includes(p));
    if (!chosen) problem(res, 400, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${served.join(' ')}]`);
    return chosen;
  }

  /** Answers the SPDY upgrade with `protocol` and hands back the connection (with what was read past the request). */
  private switchToSpdy(res: ServerResponse, upgrade: { socket: Duplex; head: Buffer }, protocol: string): Duplex {
    res.detachSocket(upgrade.socket as Parameters<ServerResponse['detachSocket']>[0]);
    upgrade.socket.write(spdyUpgradeResponse(protocol));
    if (upgrade.head.length > 0) upgrade.socket.unshift(upgrade.head);
    return upgrade.socket;
  }

  private async serveMetrics(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const metrics = this.source.metrics;
    if (req.method !== 'GET' || !metrics) return problem(res, 404, `404 page not found: ${path}`);
    try {
      const text = path === '/metrics' ? await metrics.text() : metrics.resourceText();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
    } catch (e) {
      problem(res, 500, `collecting metrics failed: ${(e as Error).message}`);
    }
  }

  /** Streams what is appended to the file until the client goes or the container restarts. */
  private follow(file: string, from: number, timestamps: boolean, pod: api.Pod, container: string, req: IncomingMessage, res: ServerResponse): void {
    let offset = from;
    let partial = '';
    const timer = setInterval(() => {
      try {
        const size = statSync(file).size;
        if (size > offset) {
          const buf = Buffer.alloc(size - offset);
          const fd = openSync(file, 'r');
          readSync(fd, buf, 0, buf.length, offset);
          closeSync(fd);
          offset = size;
          const text = partial + buf.toString('utf8');
          const cut = text.lastIndexOf('\n') + 1;
          partial = text.slice(cut);
          res.write(formatCriLines(text.slice(0, cut), timestamps).join(''));
        }
        const files = logFiles(this.root, pod, container);
        if (files[files.length - 1] !== file || !this.server) end();
      } catch (e) {
        this.log.debug({ err: (e as Error).message }, 'log follow ended');
        end();
      }
    }, 250);
    const end = () => {
      clearInterval(timer);
      res.end();
    };
    req.on('close', () => clearInterval(timer));
  }
}
