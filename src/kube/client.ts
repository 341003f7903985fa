// A small JSON client for the Kubernetes API, for the toolkit's informers, apply helpers and event
// recorder. client-node's typed clients re-serialise every object through their models (dropping
// what a model does not know: CRD schema keys, fields newer than the model); this one sends and
// receives the wire JSON unchanged, over the kubeconfig's TLS settings, credentials and the
// keep-alive agent `loadKubeConfig` installs.
import { BosunError } from '../common/errors.js';
import { sleep } from '../common/sleep.js';
import type { KubeConfigLike } from './kubeconfig.js';
import type { List, Unstructured } from '../api/index.js';

/** A metav1.Status, as the API server answers an error (or a delete). */
export interface Status {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: { type?: string; message?: string; field?: string }[] };
}

/** One entry of an API group version's discovery document. */
interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced?: boolean;
}
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';

/**
 * Raw JSON of any shape, for tests that read what kubectl or the API server print. src/ uses the
 * typed kinds of src/api, or api.Unstructured where the kind is known only at run time.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

/**
 * A resource as the API serves it: group ('' for core), version, plural, namespaced or not. `T` is
 * the type of its objects (src/api), so that reads through a typed reference return typed objects:
 * `client.get(resources.machines, name, ns)` is a `Machine`. It exists only for the type checker.
 */
export interface ResourceRef<T = Unstructured> {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
  readonly objectType?: T;
}

/** A JSON merge patch or a request body: JSON data leaving for the server. */
export type Patch = Record<string, unknown>;

/** An error the API server answered with, carrying its Status; its reason is the Status reason. */
export class KubeApiError extends BosunError {
  constructor(
    readonly code: number,
    reason: string,
    message: string,
    readonly status?: Status,
  ) {
    super(reason, message);
  }
}

export function isNotFound(e: unknown): boolean {
  return (e as { code?: number })?.code === 404;
}
export function isConflict(e: unknown): boolean {
  return (e as { code?: number })?.code === 409;
}
export function isAlreadyExists(e: unknown): boolean {
  return e instanceof KubeApiError && e.code === 409 && e.reason === 'AlreadyExists';
}

/** The namespace and name of an object about to be sent. */
function metadataOf(object: unknown): { namespace?: string; name?: string } {
  return (object as { metadata?: { namespace?: string; name?: string } }).metadata ?? {};
}

export function apiVersionOf(ref: ResourceRef<unknown>): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/** The URL path of a collection or object: /api/v1/namespaces/ns/configmaps/name/status. */
export function resourcePath(ref: ResourceRef<unknown>, namespace?: string, name?: string, subresource?: string): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = ref.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}` : '';
  return `${base}${ns}/${ref.resource}${obj}`;
}

export interface RequestInit {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /**
   * A request that holds its connection open for minutes (a watch): sent on a connection of its
   * own, outside the pool the other requests share, so that a process with many informers on one
   * set of credentials never has its requests queued behind its watches.
   */
  longRunning?: boolean;
}

/** The agent of long-running requests beside each shared keep-alive agent: same TLS, no limit on its sockets. */
const longRunningAgents = new WeakMap<HttpsAgent, HttpsAgent>();
function longRunningAgent(shared: HttpsAgent): HttpsAgent {
  let agent = longRunningAgents.get(shared);
  if (!agent) longRunningAgents.set(shared, (agent = new HttpsAgent({ ...shared.options, keepAlive: true, maxSockets: Infinity })));
  return agent;
}

const { version: BOSUN_VERSION } = createRequire(import.meta.url)('../../package.json') as { version: string };

export interface KubeClientOptions {
  /** The component this client speaks for (e.g. machine-config-operator): it names the client to
   *  the API server as User-Agent `bosun-<component>/<version>` and field manager
   *  `bosun-<component>`. Without one: `bosun/<version>` and `bosun`, as client-go defaults both to
   *  the program's name. */
  component?: string;
  /** The version in the User-Agent (default bosun's own). */
  version?: string;
}

/** The client's identity: its User-Agent header and the field manager of its writes. */
export function clientIdentity(options: KubeClientOptions = {}): { userAgent: string; fieldManager: string } {
  const fieldManager = options.component ? `bosun-${options.component}` : 'bosun';
  return { userAgent: `${fieldManager}/${options.version ?? BOSUN_VERSION}`, fieldManager: fieldManager.slice(0, 128) };
}

const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/** How often an answer with Retry-After is retried (client-go's default maxRetries). */
export const MAX_RETRY_AFTER = 10;

/**
 * A connection reset or cut before the answer came (client-go's IsConnectionReset and
 * IsProbableEOF): node reports both as ECONNRESET ("socket hang up", "Client network socket
 * disconnected before secure TLS connection was established") or EPIPE.
 */
function isConnectionReset(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** The wait a 429 or 5xx answer asks for in its Retry-After header (whole seconds), if any. */
function retryAfterSeconds(res: IncomingMessage): number | undefined {
  const code = res.statusCode ?? 0;
  if (code !== 429 && code < 500) return undefined;
  const header = res.headers['retry-after'];
  if (header === undefined || !/^\d+$/.test(header.trim())) return undefined;
  return Math.min(Number(header), 60);
}

export class KubeClient {
  private readonly discovery = new Map<string, Promise<DiscoveredResource[]>>();
  readonly userAgent: string;
  readonly fieldManager: string;

  constructor(
    readonly kubeconfig: KubeConfigLike,
    options: KubeClientOptions = {},
  ) {
    ({ userAgent: this.userAgent, fieldManager: this.fieldManager } = clientIdentity(options));
  }

  /** Opens a request and resolves with the response (any status), for streaming callers. */
  async open(method: string, path: string, init: RequestInit = {}): Promise<IncomingMessage> {
    const cluster = this.kubeconfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig names no current cluster');
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    // Every write names its field manager unless the caller named one (an apply names its own).
    if (WRITES.has(method) && !url.searchParams.has('fieldManager')) url.searchParams.set('fieldManager', this.fieldManager);
    const opts: RequestOptions = { method, headers: { accept: 'application/json', 'user-agent': this.userAgent } };
    await this.kubeconfig.applyToHTTPSOptions(opts);
    const payload = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    if (payload !== undefined) {
      const headers = opts.headers as Record<string, string | number>;
      headers['content-type'] = init.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    if (url.protocol === 'http:') delete opts.agent;
    else if (init.longRunning && opts.agent instanceof HttpsAgent) opts.agent = longRunningAgent(opts.agent);
    const attempt = (retry: boolean) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const req = send(url, { ...opts, signal: init.signal }, resolve);
        req.on('error', (e: NodeJS.ErrnoException) => {
          // A kept-alive connection the server closed meanwhile (it restarted, or timed the idle
          // socket out): the request never reached it, so send it again on a fresh connection.
          if (retry && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) resolve(attempt(false));
          else reject(e);
        });
        req.end(payload);
      });
    return attempt(true);
  }

  /** The retries this client made, by cause (for callers that count them, such as disruption tests). */
  readonly retried = { retryAfter: 0, connectionReset: 0 };

  /**
   * Sends a request and returns the decoded JSON body; non-2xx answers throw a KubeApiError. As
   * client-go does, at most MAX_RETRY_AFTER times: an answer 429 or 5xx with a Retry-After header
   * (an API server shutting down, a busy one) is retried after that many seconds, and a GET whose
   * connection was reset or cut before an answer (a server, or the balancer's backend, going away
   * mid-handshake) is sent again after a second, as an answer 500 with `Retry-After: 1` would be.
   */
  async request<T = unknown>(method: string, path: string, init: RequestInit = {}): Promise<T> {
    for (let retries = 0; ; retries++) {
      let res: IncomingMessage;
      try {
        res = await this.open(method, path, init);
      } catch (e) {
        if (method !== 'GET' || !isConnectionReset(e) || retries >= MAX_RETRY_AFTER || init.signal?.aborted) throw e;
        this.retried.connectionReset++;
        await sleep(1000, init.signal);
        init.signal?.throwIfAborted();
        continue;
      }
      const wait = retryAfterSeconds(res);
      if (wait === undefined || retries >= MAX_RETRY_AFTER || init.signal?.aborted) return this.decode<T>(method, path, res);
      this.retried.retryAfter++;
      res.resume();
      await sleep(wait * 1000, init.signal);
      init.signal?.throwIfAborted();
    }
  }

  private async decode<T>(method: string, path: string, res: IncomingMessage): Promise<T> {
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Status | undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) {
      const message = body?.message ?? (text.slice(0, 200) || `HTTP ${code}`);
      throw new KubeApiError(code, body?.reason ?? '', `${method} ${path}: ${message}`, body);
    }
    return body as T;
  }

  get<T = Unstructured>(ref: ResourceRef<T>, name: string, namespace?: string): Promise<T> {
    return this.request<T>('GET', resourcePath(ref, namespace, name));
  }

  /** The object, or undefined when it does not exist. */
  async read<T = Unstructured>(ref: ResourceRef<T>, name: string, namespace?: string): Promise<T | undefined> {
    try {
      return await this.get(ref, name, namespace);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  list<T = Unstructured>(ref: ResourceRef<T>, namespace?: string, query: RequestInit['query'] = {}): Promise<List<T>> {
    return this.request<List<T>>('GET', resourcePath(ref, namespace), { query });
  }

  create<T = Unstructured>(ref: ResourceRef<T>, object: NoInfer<T>, query: RequestInit['query'] = {}): Promise<T> {
    return this.request<T>('POST', resourcePath(ref, metadataOf(object).namespace), { body: object, query });
  }

  update<T = Unstructured>(ref: ResourceRef<T>, object: NoInfer<T>, subresource?: string): Promise<T> {
    const { namespace, name } = metadataOf(object);
    return this.request<T>('PUT', resourcePath(ref, namespace, name, subresource), { body: object });
  }

  /** A JSON merge patch (RFC 7386) of the object or its subresource. */
  mergePatch<T = Unstructured>(ref: ResourceRef<T>, name: string, namespace: string | undefined, patch: Patch, subresource?: string): Promise<T> {
    return this.request<T>('PATCH', resourcePath(ref, namespace, name, subresource), { body: patch, contentType: 'application/merge-patch+json' });
  }

  /** Deletes; resolves with the object as the server answers (being deleted, or gone), undefined when there was none. */
  async delete<T = Unstructured>(ref: ResourceRef<T>, name: string, namespace?: string, options: Patch = {}): Promise<T | undefined> {
    try {
      return await this.request<T>('DELETE', resourcePath(ref, namespace, name), { body: { kind: 'DeleteOptions', apiVersion: 'v1', ...options } });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** The resource serving `kind` in `apiVersion`, from discovery (cached; refreshed on a miss). */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceRef> {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const find = async (fresh: boolean) => {
      if (fresh) this.discovery.delete(apiVersion);
      let pending = this.discovery.get(apiVersion);
      if (!pending) {
        pending = this.request<{ resources?: DiscoveredResource[] }>('GET', group ? `/apis/${group}/${version}` : `/api/${version}`).then((list) => list.resources ?? []);
        pending.catch(() => this.discovery.delete(apiVersion));
        this.discovery.set(apiVersion, pending);
      }
      const resources = await pending.catch((e) => {
        if (isNotFound(e)) return [] as DiscoveredResource[];
        throw e;
      });
      return resources.find((r) => r.kind === kind && !String(r.name).includes('/'));
    };
    const found = (await find(false)) ?? (await find(true));
    if (!found) throw new KubeApiError(404, 'NotFound', `the server has no resource for kind ${kind} in ${apiVersion}`);
    return { group, version, resource: found.name, namespaced: Boolean(found.namespaced) };
  }
}
