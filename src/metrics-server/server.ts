// The metrics.k8s.io/v1beta1 API as metrics-server serves it behind the aggregator: discovery
// (`/apis/metrics.k8s.io/v1beta1`), NodeMetrics (`/nodes`, `/nodes/<name>`) and PodMetrics
// (`/pods`, `/namespaces/<ns>/pods`, `/namespaces/<ns>/pods/<name>`), with labelSelector; each
// item's usage is CPU in nanocores and memory in Ki, over the window between two scrapes.
//
// Who asks: the aggregator's front-proxy client certificate (verified against the request-header
// CA of kube-system/extension-apiserver-authentication, its CN among the allowed names) carries the
// user in X-Remote-User/X-Remote-Group; a bearer token is the other way in (TokenReview). Either way
// the user is then authorised with a SubjectAccessReview for the metrics.k8s.io resource, as
// metrics-server's delegated authorization does. /healthz, /livez and /readyz answer anyone.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as api from '../api/index.js';
import { matchesLabels, parseLabelSelector, type LabelSelector } from '../common/label-selectors.js';
import { parseTarget } from '../common/http-limits.js';
import { boundPort, closeServer, failureStatus, listenOn, sendJson, type JsonAnswer } from '../common/http-server.js';
import type { Logger } from '../common/log.js';
import { rfc3339 } from '../common/time.js';
import { DelegatedAuth, type KubeClient, type RequestHeaderAuth, type ResourceAttributes, aggregatedApiRefusal, aggregatedServerOptions } from '../kube/index.js';
import type { PodUsage, Scraper } from './scraper.js';
import { formatCpu, formatMemory, formatWindow, type Usage } from './usage.js';

export const GROUP = 'metrics.k8s.io';
export const VERSION = 'v1beta1';
const GROUP_VERSION = `${GROUP}/${VERSION}`;

export interface MetricsApiOptions {
  tls: { certPem: string; keyPem: string };
  requestHeader?: RequestHeaderAuth;
  log: Logger;
}

/** The APIResourceList metrics-server publishes. */
export const RESOURCE_LIST = {
  kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION,
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

function nodeMetrics(node: api.Node, usage: Usage) {
  return {
    metadata: { name: node.metadata.name, creationTimestamp: rfc3339(), labels: node.metadata.labels ?? {} },
    timestamp: rfc3339(new Date(usage.timestampMs)),
    window: formatWindow(usage.windowMs),
    usage: { cpu: formatCpu(usage.cpuCores), memory: formatMemory(usage.memoryBytes) },
  };
}

function podMetrics(pod: api.Pod, usage: PodUsage) {
  return {
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, creationTimestamp: rfc3339(), labels: pod.metadata.labels ?? {} },
    timestamp: rfc3339(new Date(usage.timestampMs)),
    window: formatWindow(usage.windowMs),
    containers: usage.containers.map((c) => ({ name: c.name, usage: { cpu: formatCpu(c.usage.cpuCores), memory: formatMemory(c.usage.memoryBytes) } })),
  };
}

/** The answer to a GET of `path` (below /apis/metrics.k8s.io/v1beta1) from the scraper's figures. Pure over the scraper. */
export function answer(scraper: Pick<Scraper, 'nodes' | 'pods'>, path: string, query: URLSearchParams): JsonAnswer {
  let selector: LabelSelector = [];
  try {
    selector = parseLabelSelector(query.get('labelSelector') ?? '');
  } catch (e) {
    return failureStatus(400, 'BadRequest', (e as Error).message);
  }
  const list = (kind: string, items: unknown[]) => ({ code: 200, body: { kind, apiVersion: GROUP_VERSION, metadata: {}, items } });
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 0) return { code: 200, body: RESOURCE_LIST };
  if (parts[0] === 'nodes' && parts.length <= 2) {
    const nodes = scraper.nodes().filter(({ node }) => matchesLabels(selector, node.metadata.labels));
    if (parts.length === 1) return list('NodeMetricsList', nodes.map(({ node, usage }) => nodeMetrics(node, usage)));
    const found = nodes.find(({ node }) => node.metadata.name === parts[1]);
    return found ? { code: 200, body: { kind: 'NodeMetrics', apiVersion: GROUP_VERSION, ...nodeMetrics(found.node, found.usage) } } : failureStatus(404, 'NotFound', `nodemetrics.metrics.k8s.io "${parts[1]}" not found`);
  }
  const namespace = parts[0] === 'namespaces' ? parts[1] : undefined;
  const rest = namespace === undefined ? parts : parts.slice(2);
  if (rest[0] === 'pods' && rest.length <= (namespace === undefined ? 1 : 2)) {
    const pods = scraper.pods().filter(({ pod }) => (namespace === undefined || pod.metadata.namespace === namespace) && matchesLabels(selector, pod.metadata.labels));
    if (rest.length === 1) return list('PodMetricsList', pods.map(({ pod, usage }) => podMetrics(pod, usage)));
    const found = pods.find(({ pod }) => pod.metadata.name === rest[1]);
    return found ? { code: 200, body: { kind: 'PodMetrics', apiVersion: GROUP_VERSION, ...podMetrics(found.pod, found.usage) } } : failureStatus(404, 'NotFound', `podmetrics.metrics.k8s.io "${namespace}/${rest[1]}" not found`);
  }
  return failureStatus(404, 'NotFound', `the server could not find the requested resource`);
}

/** The attributes a path below the group-version stands for (nodes or pods, get or list). Pure. */
export function attributesOf(path: string): ResourceAttributes | undefined {
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 0) return undefined;
  const namespace = parts[0] === 'namespaces' ? parts[1] : undefined;
  const rest = namespace === undefined ? parts : parts.slice(2);
  if (rest[0] !== 'nodes' && rest[0] !== 'pods') return undefined;
  return { verb: rest.length > 1 ? 'get' : 'list', group: GROUP, version: VERSION, resource: rest[0], ...(namespace ? { namespace } : {}), ...(rest[1] ? { name: rest[1] } : {}) };
}

export class MetricsApiServer {
  private server?: Server;
  private readonly auth: DelegatedAuth;
  readonly name = 'metrics-api';
  readonly needsLeaderElection = false;

  constructor(private readonly client: KubeClient, private readonly scraper: Pick<Scraper, 'nodes' | 'pods'>, private readonly o: MetricsApiOptions & { host: string; port: number }) {
    this.auth = new DelegatedAuth(client);
  }

  /** Listening at start (the manager runs it as a runnable). */
  async start(signal?: AbortSignal): Promise<void> {
    this.server = createServer(aggregatedServerOptions(this.o.tls, this.o.requestHeader), (req, res) => {
      this.handle(req, res).catch((e) => sendJson(res, failureStatus(500, 'InternalError', (e as Error).message)));
    });
    await listenOn(this.server, this.o.port, this.o.host);
    this.o.log.info({ address: this.address }, 'serving metrics.k8s.io');
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  get address(): string {
    const a = this.server?.address();
    return a && typeof a === 'object' ? `${a.address}:${a.port}` : '';
  }

  get port(): number {
    return boundPort(this.server) ?? 0;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await closeServer(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseTarget(req, 'https://metrics-server');
    if (!url) return sendJson(res, failureStatus(400, 'BadRequest', `the request target is not a URL: ${JSON.stringify(req.url?.slice(0, 200))}`));
    if (/^\/(healthz|livez|readyz)$/.test(url.pathname)) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    const prefix = `/apis/${GROUP_VERSION}`;
    if (url.pathname === `/apis/${GROUP}`) {
      const version = { groupVersion: GROUP_VERSION, version: VERSION };
      return sendJson(res, { code: 200, body: { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [version], preferredVersion: version } });
    }
    if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return sendJson(res, failureStatus(404, 'NotFound', 'the server could not find the requested resource'));
    if (req.method !== 'GET') return sendJson(res, failureStatus(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`));
    const path = url.pathname.slice(prefix.length);
    const attributes = attributesOf(path);
    const refusal = await aggregatedApiRefusal(req, { auth: this.auth, requestHeader: this.o.requestHeader }, attributes, url.pathname);
    if (refusal) return sendJson(res, refusal);
    sendJson(res, answer(this.scraper, path, url.searchParams));
  }
}
