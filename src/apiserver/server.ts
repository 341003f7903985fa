// The embedded Kubernetes-compatible API server: HTTPS (fastify) in front of the object
// semantics in resources.ts and the SQLite storage. It serves discovery, /version, health,
// OpenAPI (openapi.ts), metrics, and the resource endpoints of every built-in
// and custom type — including watches — with bearer-token authentication and a pluggable
// authorization hook.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Counter, Gauge, Histogram, Registry as MetricsRegistry } from 'prom-client';
import YAML from 'yaml';
import { logger } from '../common/log.js';
import { createCA, issueClientCert, issueServingCert, loadOrCreate } from '../common/pki.js';
import type { TLSSocket } from 'node:tls';
import { certificateUser } from './client-certificates.js';
import { podLogLocation, streamPodLogs } from './nodes/pod-logs.js';
import { strategyFor } from './kinds/index.js';
import { openSqliteStorage } from './storage/sqlite.js';
import { StorageError, type KubeObject, type Storage, type WatchEvent } from './storage/types.js';
import { ApiError, errors } from './errors.js';
import { apiVersionOf, Registry, storageVersionHash, VERBS, type ResourceType } from './registry.js';
import { Resources, type PatchType } from './resources.js';
import { applyJsonPatch, applyMergePatch } from './patch.js';
import { decodeKubernetesProtobuf, ProtobufError } from './protobuf.js';
import { crdHooks, loadCrds } from './crds.js';
import { formatLabelSelector, fromLabelSelectorObject, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import { crdTable, tableFor, type Table, type TableOptions } from './tables.js';
import { namespaceHooks, cleanUpTerminatingNamespaces } from './namespaces.js';
import { managerFromUserAgent } from './server-side-apply.js';
import { OpenApi, type OpenApiDocument } from './openapi.js';

type Obj = Record<string, any>;

export const KUBERNETES_VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0+bosun' };
const BODY_LIMIT = 3 * 1024 * 1024;
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface User {
  name: string;
  groups: string[];
  uid?: string;
}

export interface RequestAttributes {
  user: User;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path: string;
  resourceRequest: boolean;
  /** The raw field selector of a list or watch (kube's GetFieldSelector). */
  fieldSelector?: string;
}

/** Finds who is calling from the bearer token, or undefined when no authenticator knows it. */
export type Authenticator = (token: string) => User | undefined;
/** Returns undefined to allow, or the reason to refuse (becomes a 403). */
export type Authorizer = (attributes: RequestAttributes) => string | undefined;

/** A finished resource request, for the audit trail. */
export interface CompletedRequest {
  attributes: RequestAttributes;
  code: number;
  userAgent: string;
  requestId: string;
}

/** A POST to an endpoint the object store does not serve itself (`pods/eviction`, `selfsubjectaccessreviews`, ...). */
export interface PostRequest {
  user: User;
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  body: Record<string, any>;
  dryRun: boolean;
}
/** Answers the POST (`{code, body}`), or undefined when the endpoint is not this handler's. Throw ApiError to refuse. */
export type PostHandler = (request: PostRequest) => Promise<{ code: number; body: unknown } | undefined>;

export interface ApiServerOptions {
  dataDir: string;
  host?: string;
  port?: number;
  /** Keep this many revisions in the log (default 10,000); older watches get 410. */
  compactKeep?: number;
  /** How often compaction runs (default 60 s). */
  compactIntervalMs?: number;
  /** How often watches that asked for them get a BOOKMARK (default 60 s). */
  bookmarkIntervalMs?: number;
  logLevel?: string;
}

export interface ApiServer {
  url: string;
  port: number;
  host: string;
  kubeconfigPath: string;
  caPem: string;
  token: string;
  storage: Storage;
  registry: Registry;
  /** Adds an authenticator tried after the admin token. */
  addAuthenticator(authenticator: Authenticator): void;
  /** Replaces the authorizer (default: every authenticated user may do everything). */
  setAuthorizer(authorizer: Authorizer): void;
  /** The object semantics (create/update/delete with hooks), for endpoints served beside the store. */
  resources: Resources;
  /** Adds a handler for POSTs to subresources and virtual resources; authorization has been checked for subresources of stored types. */
  addPostHandler(handler: PostHandler): void;
  /** Calls `listener` after every resource request has been answered. */
  onCompleted(listener: (request: CompletedRequest) => void): void;
  stop(): Promise<void>;
}

interface RequestPath {
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  watchPrefix: boolean;
}

/** Parses `/api/v1/...` and `/apis/<g>/<v>/...` paths into their parts, or undefined. */
export function parseResourcePath(path: string): RequestPath | 'groupVersion' | undefined {
  const segments = path.split('/').filter((s) => s !== '');
  let group = '';
  let version: string;
  let rest: string[];
  if (segments[0] === 'api') {
    if (segments.length < 2) return undefined;
    version = segments[1];
    rest = segments.slice(2);
  } else if (segments[0] === 'apis') {
    if (segments.length < 3) return undefined;
    group = segments[1];
    version = segments[2];
    rest = segments.slice(3);
  } else return undefined;
  if (rest.length === 0) return 'groupVersion';
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  rest = rest.map(decodeURIComponent);
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && ['status', 'finalize'].includes(rest[2]))) {
    return { group, version, namespace: rest[1], resource: rest[2], name: rest[3], subresource: rest[4], watchPrefix, ...(rest.length > 5 ? { resource: '' } : {}) };
  }
  if (rest.length > 3) return undefined;
  return { group, version, resource: rest[0], name: rest[1], subresource: rest[2], watchPrefix };
}

function wantsTable(accept: string | undefined): boolean {
  return Boolean(accept && /as=Table/.test(accept));
}

/** kubectl asks for protobuf first for some calls; JSON is fine unless JSON is not acceptable at all. */
function checkAcceptable(accept: string | undefined): void {
  if (!accept) return;
  const types = accept.split(',').map((t) => t.trim().split(';')[0]);
  if (types.some((t) => t === '*/*' || t === 'application/json' || t === 'application/*' || t === 'application/yaml' || t === '')) return;
  throw errors.notAcceptable(`only the following media types are accepted: application/json, application/yaml`);
}

/**
 * Which form of an OpenAPI document an Accept header asks for: the first listed type that is
 * JSON (or a wildcard) or one of the `protobuf` media types; undefined when none is served.
 */
function negotiateOpenApi(accept: string | undefined, protobufTypes: string[]): 'json' | 'protobuf' | undefined {
  if (!accept) return 'json';
  for (const part of accept.split(',')) {
    const type = part.trim().split(';')[0].trim();
    if (protobufTypes.includes(type)) return 'protobuf';
    if (type === 'application/json' || type === '*/*' || type === 'application/*' || type === '') return 'json';
  }
  return undefined;
}

function parseBody(raw: Buffer | undefined, contentType: string | undefined): unknown {
  if (!raw || raw.length === 0) throw errors.badRequest('the request body is empty');
  const text = raw.toString('utf8');
  const type = (contentType ?? 'application/json').split(';')[0].trim();
  if (type === 'application/vnd.kubernetes.protobuf') {
    try {
      return decodeKubernetesProtobuf(raw);
    } catch (e) {
      if (e instanceof ProtobufError) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request could not be decoded as protobuf: ${e.message}`);
      throw e;
    }
  }
  if (type === 'application/cbor') {
    throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got "${type}")`);
  }
  try {
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'text/yaml') return YAML.parse(text);
    return JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`the request body could not be decoded: ${(e as Error).message.split('\n')[0]}`);
  }
}

function patchTypeOf(contentType: string | undefined): PatchType {
  const type = (contentType ?? '').split(';')[0].trim();
  switch (type) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
      return 'apply';
    default:
      throw errors.unsupportedMediaType(type);
  }
}

function verbOf(method: string, path: RequestPath, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : path.name ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return path.name ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

function encodeContinue(revision: number, after: string): string {
  return Buffer.from(JSON.stringify({ rv: revision, start: after })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof value.rv === 'number' && typeof value.start === 'string') return value;
  } catch {
    // fall through
  }
  throw errors.badRequest('continue key is not valid: the token is malformed');
}

function writeKubeconfig(path: string, server: string, caPem: string, token: string): void {
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'bosun', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'admin@bosun', context: { cluster: 'bosun', user: 'admin', namespace: 'default' } }],
    'current-context': 'admin@bosun',
    preferences: {},
  };
  writeFileSync(path, YAML.stringify(kubeconfig), { mode: 0o600 });
}

export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? '127.0.0.1';
  const log = logger('apiserver');
  if (options.logLevel) log.level = options.logLevel;
  mkdirSync(dataDir, { recursive: true });
  const pkiDir = join(dataDir, 'pki');
  const ca = await loadOrCreate(pkiDir, 'ca', () => createCA('bosun-ca'));
  const serving = await loadOrCreate(pkiDir, 'apiserver', () => issueServingCert(ca, 'bosun-apiserver', ['127.0.0.1', 'localhost', '::1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', host]));
  const tokenPath = join(pkiDir, 'admin.token');
  if (!existsSync(tokenPath)) writeFileSync(tokenPath, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  const adminToken = readFileSync(tokenPath, 'utf8').trim();
  // The API server's own credentials towards kubelets (kube's --kubelet-client-certificate).
  const kubeletClientCert = await loadOrCreate(pkiDir, 'apiserver-kubelet-client', () => issueClientCert(ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] }));

  const storage = openSqliteStorage(join(dataDir, 'state.db'));
  const registry = new Registry();
  loadCrds(registry, storage);
  const resources = new Resources(storage, registry);
  resources.addHooks(crdHooks(registry, storage));
  resources.addHooks(namespaceHooks(resources, registry));
  for (const ns of DEFAULT_NAMESPACES) {
    if (!storage.get(`/core/namespaces//${ns}`)) await resources.create(registry.lookup('', 'v1', 'namespaces')!, undefined, { metadata: { name: ns } });
  }
  cleanUpTerminatingNamespaces(resources, registry);

  const authenticators: Authenticator[] = [(token) => (token === adminToken ? { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] } : undefined)];
  let authorize: Authorizer = () => undefined;
  const postHandlers: PostHandler[] = [];
  const completedListeners: ((request: CompletedRequest) => void)[] = [];
  const runPostHandlers = async (request: FastifyRequest, parsed: RequestPath): Promise<{ code: number; body: unknown } | undefined> => {
    if (request.method !== 'POST' || postHandlers.length === 0) return undefined;
    const post: PostRequest = {
      user: (request as FastifyRequest & { user: User }).user, group: parsed.group, version: parsed.version,
      namespace: parsed.namespace, resource: parsed.resource, name: parsed.name, subresource: parsed.subresource,
      body: (parseBody(request.body as Buffer, request.headers['content-type']) ?? {}) as Obj,
      dryRun: (request.query as Record<string, string | undefined>).dryRun === 'All',
    };
    for (const handler of postHandlers) {
      const answer = await handler(post);
      if (answer) return answer;
    }
    return undefined;
  };

  // Metrics.
  const metrics = new MetricsRegistry();
  const requestCount = new Counter({ name: 'apiserver_request_total', help: 'API requests by verb, resource and HTTP code', labelNames: ['verb', 'resource', 'code'], registers: [metrics] });
  const requestDuration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'API request latency by verb and resource (watches excluded)',
    labelNames: ['verb', 'resource'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics],
  });
  const openWatches = new Gauge({ name: 'apiserver_registered_watchers', help: 'Watches currently open', registers: [metrics] });
  new Gauge({ name: 'apiserver_storage_revision', help: 'The current storage revision', registers: [metrics], collect() { this.set(storage.currentRevision()); } });

  const app: FastifyInstance = Fastify({
    // Client certificates are asked for, not required: tokens keep working beside them.
    https: { key: serving.keyPem, cert: serving.certPem, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false, ca: ca.certPem },
    bodyLimit: BODY_LIMIT,
    logger: false,
    return503OnClosing: true,
    forceCloseConnections: true,
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const watches = new Set<() => void>();

  // A Buffer body keeps fastify from appending '; charset=utf-8': discovery clients compare the
  // header exactly (kube-api.md, trap 1).
  const sendJson = (reply: FastifyReply, code: number, value: unknown) => reply.code(code).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(value)));
  const sendError = (reply: FastifyReply, error: ApiError) => sendJson(reply, error.code, error.toStatus());
  // Warnings reach clients as `Warning: 299 - "text"` headers (kubectl prints them).
  const withWarnings = (reply: FastifyReply, warnings: string[]) => (warnings.length > 0 ? reply.header('warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`)) : reply);

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
      return sendError(reply, errors.tooLarge(`the request body is larger than the limit of ${BODY_LIMIT} bytes`));
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return sendError(reply, errors.badRequest(error.message));
    log.warn({ err: error, method: request.method, url: request.url }, 'request failed');
    return sendError(reply, errors.internal(error.message));
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.pathNotFound(request.url.split('?')[0])));

  const OPEN_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);
  app.addHook('onRequest', async (request, reply) => {
    (request as FastifyRequest & { startedAt?: bigint }).startedAt = process.hrtime.bigint();
    const path = request.url.split('?')[0];
    if (OPEN_PATHS.has(path) || path.startsWith('/healthz/') || path.startsWith('/livez/') || path.startsWith('/readyz/')) return;
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    const user = certificateUser(request.raw.socket as TLSSocket) ?? (token ? authenticators.map((a) => a(token)).find((u) => u !== undefined) : undefined);
    if (!user) {
      sendError(reply, errors.unauthorized());
      return reply;
    }
    (request as FastifyRequest & { user?: User }).user = user;
  });
  app.addHook('onResponse', async (request, reply) => {
    const startedAt = (request as FastifyRequest & { startedAt?: bigint }).startedAt;
    const resource = (request as FastifyRequest & { resourceLabel?: string }).resourceLabel ?? '';
    const verb = (request as FastifyRequest & { verbLabel?: string }).verbLabel ?? request.method;
    requestCount.inc({ verb, resource, code: String(reply.statusCode) });
    const attributes = (request as FastifyRequest & { attributes?: RequestAttributes }).attributes;
    if (attributes) {
      const completed: CompletedRequest = { attributes, code: reply.statusCode, userAgent: request.headers['user-agent'] ?? '', requestId: String(request.id) };
      for (const listener of completedListeners) listener(completed);
    }
    if (startedAt !== undefined && verb !== 'watch') {
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      requestDuration.observe({ verb, resource }, seconds);
      log.debug({ method: request.method, url: request.url, code: reply.statusCode, ms: Math.round(seconds * 1000) }, 'request');
    }
  });

  // Health, version, metrics.
  for (const path of ['/healthz', '/livez', '/readyz']) {
    app.get(path, async (_req, reply) => reply.header('content-type', 'text/plain; charset=utf-8').send('ok'));
  }
  app.get('/version', async (_req, reply) =>
    sendJson(reply, 200, {
      ...KUBERNETES_VERSION,
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
      goVersion: `node${process.versions.node}`,
      compiler: 'gc',
      platform: `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    }),
  );
  app.get('/metrics', async (_req, reply) => reply.header('content-type', metrics.contentType).send(await metrics.metrics()));

  // OpenAPI (kube-api.md, trap 2): v3 for kubectl explain and kubectl's choice of server-side
  // field validation; v2 as JSON, and as the smallest valid protobuf document for the kubectl
  // versions that ask for it in that form only (their client-side validation then defers to us).
  const openApi = new OpenApi(registry, KUBERNETES_VERSION.gitVersion);
  const sendDocument = (request: FastifyRequest, reply: FastifyReply, document: OpenApiDocument, contentType: string) => {
    reply.header('etag', `"${document.hash}"`).header('vary', 'Accept');
    if (request.headers['if-none-match'] === `"${document.hash}"`) return reply.code(304).send();
    return reply.code(200).header('content-type', contentType).send(document.json);
  };
  app.get('/openapi/v2', async (request, reply) => {
    const format = negotiateOpenApi(request.headers.accept, ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf']);
    if (format === 'protobuf') {
      return reply.header('content-type', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf').send(Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]));
    }
    if (format === undefined) return sendError(reply, errors.notAcceptable('only application/json and application/com.github.proto-openapi.spec.v2@v1.0+protobuf are served'));
    return sendDocument(request, reply, openApi.v2(), 'application/json');
  });
  app.get('/openapi/v3', async (request, reply) => sendDocument(request, reply, openApi.v3Index(), 'application/json'));
  app.get('/openapi/v3/*', async (request, reply) => {
    const [path, search = ''] = request.url.slice('/openapi/v3/'.length).split('?');
    const document = openApi.v3(path.replace(/\/+$/, ''));
    if (!document) return sendError(reply, errors.pathNotFound(`/openapi/v3/${path}`));
    // Only JSON is served; a client asking for protobuf alone gets 406.
    if (negotiateOpenApi(request.headers.accept, ['application/com.github.proto-openapi.spec.v3@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf']) !== 'json') {
      return sendError(reply, errors.notAcceptable('only application/json is served for OpenAPI v3 documents'));
    }
    const hash = new URLSearchParams(search).get('hash');
    if (hash !== null) {
      // An outdated hash is sent to the current document, as kube-apiserver does.
      if (hash !== document.hash) return reply.code(301).header('location', `/openapi/v3/${path}?hash=${document.hash}`).send();
      reply.header('cache-control', 'public, immutable').header('expires', new Date(Date.now() + 365 * 86400_000).toUTCString());
    }
    return sendDocument(request, reply, document, 'application/json');
  });

  // Discovery.
  const serverAddress = () => `${host}:${port}`;
  app.get('/api', async (_req, reply) =>
    sendJson(reply, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: serverAddress() }] }),
  );
  const groupInfo = (g: { name: string; versions: string[] }) => ({
    name: g.name,
    versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${g.name}/${g.versions[0]}`, version: g.versions[0] },
  });
  app.get('/apis', async (_req, reply) => sendJson(reply, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map(groupInfo) }));

  function resourceList(group: string, version: string): Obj {
    const entries: Obj[] = [];
    for (const t of registry.resources(group, version)) {
      const entry: Obj = { name: t.resource, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: VERBS };
      if (t.shortNames.length) entry.shortNames = t.shortNames;
      if (t.categories.length) entry.categories = t.categories;
      entry.storageVersionHash = storageVersionHash(t);
      entries.push(entry);
      if (t.status) entries.push({ name: `${t.resource}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
      for (const sub of Object.keys(strategyFor(t)?.subresourceUpdates ?? {})) {
        if (sub !== 'status') entries.push({ name: `${t.resource}/${sub}`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
      }
      if (t.scale) entries.push({ name: `${t.resource}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
      if (t.builtin && t.resource === 'pods' && !t.group) {
        entries.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
        entries.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
        if (postHandlers.length > 0) entries.push({ name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
      }
      if (t.builtin && t.resource === 'serviceaccounts' && !t.group && postHandlers.length > 0) {
        entries.push({ name: 'serviceaccounts/token', singularName: '', namespaced: true, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources: entries };
  }

  // Resources.
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const [pathOnly] = request.url.split('?');
    const parsed = parseResourcePath(pathOnly);
    if (parsed === undefined) return sendError(reply, errors.pathNotFound(pathOnly));
    const segments = pathOnly.split('/').filter(Boolean);
    const group = segments[0] === 'api' ? '' : segments[1];
    const version = segments[0] === 'api' ? segments[1] : segments[2];
    if (parsed === 'groupVersion') {
      if (request.method !== 'GET') return sendError(reply, errors.methodNotAllowed(request.method, pathOnly));
      if (!registry.hasGroupVersion(group, version)) return sendError(reply, errors.pathNotFound(pathOnly));
      return sendJson(reply, 200, resourceList(group, version));
    }
    const type = registry.lookup(parsed.group, parsed.version, parsed.resource);
    if (!type) {
      const answer = await runPostHandlers(request, parsed);
      return answer ? sendJson(reply, answer.code, answer.body) : sendError(reply, errors.pathNotFound(pathOnly));
    }
    const query = request.query as Record<string, string | undefined>;
    const watch = parsed.watchPrefix || query.watch === 'true' || query.watch === '1';
    const verb = verbOf(request.method, parsed, watch);
    Object.assign(request, { resourceLabel: type.resource, verbLabel: verb });
    if (!type.namespaced && parsed.namespace) return sendError(reply, errors.pathNotFound(pathOnly));

    const user = (request as FastifyRequest & { user: User }).user;
    const attributes: RequestAttributes = {
      user,
      verb,
      apiGroup: type.group,
      resource: type.resource,
      subresource: parsed.subresource,
      namespace: parsed.namespace,
      name: parsed.name,
      path: pathOnly,
      resourceRequest: true,
      fieldSelector: query.fieldSelector,
    };
    Object.assign(request, { attributes });
    const refusal = authorize(attributes);
    if (refusal) return sendError(reply, errors.forbidden(refusal));

    checkAcceptable(request.headers.accept);
    const table = wantsTable(request.headers.accept);
    const tableOptions: TableOptions = { includeObject: (query.includeObject as TableOptions['includeObject']) ?? 'Metadata' };
    const dryRun = query.dryRun === 'All';
    const OPTIONS_KIND: Record<string, string> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' };
    // Only "All" exists; anything else on a write is refused rather than quietly persisted.
    if (query.dryRun !== undefined && query.dryRun !== '' && !dryRun && OPTIONS_KIND[request.method]) {
      return sendError(reply, errors.invalid(OPTIONS_KIND[request.method], 'meta.k8s.io', '', [{ type: 'FieldValueNotSupported', field: 'dryRun', message: `Unsupported value: ${JSON.stringify(query.dryRun)}: supported values: "All"` }]));
    }
    // Unknown fields of custom resources: refused (Strict), reported in Warning headers (Warn, the default) or ignored.
    const fieldValidation = (query.fieldValidation || 'Warn') as 'Ignore' | 'Warn' | 'Strict';
    if (!['Ignore', 'Warn', 'Strict'].includes(fieldValidation) && OPTIONS_KIND[request.method]) {
      return sendError(reply, errors.invalid(OPTIONS_KIND[request.method], 'meta.k8s.io', '', [{ type: 'FieldValueNotSupported', field: 'fieldValidation', message: `Unsupported value: ${JSON.stringify(fieldValidation)}: supported values: "Ignore", "Strict", "Warn"` }]));
    }
    const warnings: string[] = [];
    // Writes without a fieldManager are recorded under the client's program name; applies must name one.
    const fieldManager = query.fieldManager || managerFromUserAgent(request.headers['user-agent']);
    const ns = parsed.namespace;
    const sub = parsed.subresource;
    const kindSubresources = Object.keys(strategyFor(type)?.subresourceUpdates ?? {});
    if (sub === 'log' && type.resource === 'pods' && !type.group) {
      if (request.method !== 'GET' || !parsed.name) return sendError(reply, errors.methodNotAllowed(request.method, pathOnly));
      const pod = resources.get(type, ns, parsed.name);
      const node = pod.spec?.nodeName ? storage.get(`/core/nodes//${pod.spec.nodeName}`)?.object : undefined;
      const location = podLogLocation(pod, node, query);
      await streamPodLogs(location, { clientCert: kubeletClientCert }, () => {
        reply.hijack();
        return reply.raw;
      }, (listener) => request.raw.on('close', listener));
      return reply;
    }
    if (sub && !['status', 'scale', 'binding', ...kindSubresources].includes(sub)) {
      const answer = await runPostHandlers(request, parsed);
      return answer ? sendJson(reply, answer.code, answer.body) : sendError(reply, errors.pathNotFound(pathOnly));
    }
    if (sub === 'status' && !type.status) return sendError(reply, errors.pathNotFound(pathOnly));
    if (sub && kindSubresources.includes(sub) && sub !== 'status' && !['GET', 'PUT', 'PATCH'].includes(request.method)) return sendError(reply, errors.methodNotAllowed(request.method, pathOnly));
    if (sub === 'scale' && !type.scale) return sendError(reply, errors.pathNotFound(pathOnly));
    if (sub === 'binding' && type.resource !== 'pods') return sendError(reply, errors.pathNotFound(pathOnly));

    const asTable = (objects: Obj[], extra: Partial<TableOptions> = {}): Table =>
      type.custom ? crdTable(type.custom.printerColumns, objects, { ...tableOptions, ...extra }) : tableFor(type.resource, objects, { ...tableOptions, ...extra });

    switch (request.method) {
      case 'GET':
      case 'HEAD': {
        if (watch) return serveWatch(request, reply, type, ns, query, table ? asTable : undefined);
        if (parsed.name) {
          const object = resources.get(type, ns, parsed.name);
          if (sub === 'scale') return sendJson(reply, 200, toScale(type, object));
          return sendJson(reply, 200, table ? asTable([object], { resourceVersion: object.metadata.resourceVersion }) : object);
        }
        return serveList(reply, type, ns, query, table ? asTable : undefined);
      }
      case 'POST': {
        if (sub === 'binding' && parsed.name) return sendJson(reply, 201, await bindPod(type, ns, parsed.name, parseBody(request.body as Buffer, request.headers['content-type']) as Obj, dryRun));
        if (parsed.name) return sendError(reply, errors.methodNotAllowed('POST', pathOnly));
        const body = parseBody(request.body as Buffer, request.headers['content-type']) as Obj;
        const created = await resources.create(type, ns, body, { dryRun, fieldManager, fieldValidation, warnings, user });
        return sendJson(withWarnings(reply, warnings), 201, created);
      }
      case 'PUT': {
        if (!parsed.name) return sendError(reply, errors.methodNotAllowed('PUT', pathOnly));
        const body = parseBody(request.body as Buffer, request.headers['content-type']) as Obj;
        if (sub === 'scale') return sendJson(reply, 200, await updateScale(type, ns, parsed.name, body, dryRun, fieldManager));
        const updated = await resources.update(type, ns, parsed.name, body, { subresource: sub, dryRun, fieldManager, fieldValidation, warnings, user });
        return sendJson(withWarnings(reply, warnings), 200, updated);
      }
      case 'PATCH': {
        if (!parsed.name) return sendError(reply, errors.methodNotAllowed('PATCH', pathOnly));
        const patchType = patchTypeOf(request.headers['content-type']);
        const patch = parseBody(request.body as Buffer, request.headers['content-type']);
        if (sub === 'scale') {
          const current = toScale(type, resources.get(type, ns, parsed.name));
          const next = patchType === 'json' ? applyJsonPatch(current, patch) : applyMergePatch(current, patch);
          return sendJson(reply, 200, await updateScale(type, ns, parsed.name, next, dryRun, fieldManager));
        }
        const force = query.force === undefined ? undefined : query.force === 'true' || query.force === '1';
        const before = storage.get(`${resources.prefix(type, ns)}${type.namespaced ? '' : '/'}${parsed.name}`);
        const manager = patchType === 'apply' ? query.fieldManager : fieldManager;
        const result = await resources.patch(type, ns, parsed.name, patchType, patch, { subresource: sub, dryRun, fieldManager: manager, force, fieldValidation, warnings, user });
        return sendJson(withWarnings(reply, warnings), patchType === 'apply' && !before ? 201 : 200, result);
      }
      case 'DELETE': {
        let deleteOptions: Obj = {};
        if (request.body && (request.body as Buffer).length > 0) deleteOptions = parseBody(request.body as Buffer, request.headers['content-type']) as Obj;
        const propagationPolicy = query.propagationPolicy ?? deleteOptions.propagationPolicy ?? (deleteOptions.orphanDependents === true ? 'Orphan' : undefined);
        const dry = dryRun || (Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun.includes('All'));
        if (parsed.name) {
          const result = await resources.delete(type, ns, parsed.name, { dryRun: dry, preconditions: deleteOptions.preconditions, propagationPolicy, user });
          return sendJson(reply, 200, result);
        }
        const matching = listMatching(type, ns, query);
        for (const item of matching) await resources.delete(type, item.metadata.namespace, item.metadata.name, { dryRun: dry, propagationPolicy, user }).catch(() => undefined);
        return sendJson(reply, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { group: type.group, kind: type.resource } });
      }
      default:
        return sendError(reply, errors.methodNotAllowed(request.method, pathOnly));
    }
  };

  function selectorFilter(type: ResourceType, query: Record<string, string | undefined>): (o: KubeObject) => boolean {
    try {
      const labels = parseLabelSelector(query.labelSelector ?? '');
      const fields = parseFieldSelector(query.fieldSelector ?? '', ['metadata.name', 'metadata.namespace', ...type.fieldSelectors]);
      if (labels.length === 0 && fields.length === 0) return () => true;
      return (o) => matchesLabels(labels, o.metadata.labels as Record<string, string>) && matchesFields(fields, (f) => resources.fieldValue(o, f));
    } catch (e) {
      if (e instanceof SelectorError) throw errors.badRequest(e.message);
      throw e;
    }
  }

  function listMatching(type: ResourceType, ns: string | undefined, query: Record<string, string | undefined>): Obj[] {
    return storage.list(resources.prefix(type, ns), { filter: selectorFilter(type, query) }).items.map((i) => i.object as Obj);
  }

  function serveList(reply: FastifyReply, type: ResourceType, ns: string | undefined, query: Record<string, string | undefined>, asTable?: (objects: Obj[], extra?: Partial<TableOptions>) => Table) {
    const filter = selectorFilter(type, query);
    const limit = query.limit !== undefined ? Number(query.limit) : undefined;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw errors.badRequest(`invalid limit: ${query.limit}`);
    let atRevision: number | undefined;
    let startAfter: string | undefined;
    if (query.continue) {
      const token = decodeContinue(query.continue);
      atRevision = token.rv;
      startAfter = token.start;
    }
    let result;
    try {
      result = storage.list(resources.prefix(type, ns), { atRevision, startAfter, limit: limit || undefined, filter });
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Expired') {
        throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      }
      throw e;
    }
    const items = result.items.map((i) => resources.present(type, i.object));
    const resourceVersion = String(result.revision);
    const continueToken = result.continueAfter ? encodeContinue(result.revision, result.continueAfter) : undefined;
    if (asTable) return sendJson(reply, 200, asTable(items, { resourceVersion, continue: continueToken }));
    return sendJson(reply, 200, {
      kind: type.listKind,
      apiVersion: apiVersionOf(type),
      metadata: { resourceVersion, ...(continueToken ? { continue: continueToken } : {}) },
      items,
    });
  }

  function serveWatch(
    request: FastifyRequest,
    reply: FastifyReply,
    type: ResourceType,
    ns: string | undefined,
    query: Record<string, string | undefined>,
    asTable?: (objects: Obj[], extra?: Partial<TableOptions>) => Table,
  ) {
    const filter = selectorFilter(type, query);
    const rvParam = query.resourceVersion;
    if (rvParam && rvParam !== '0' && !/^\d+$/.test(rvParam)) throw errors.badRequest(`invalid resource version: ${rvParam}`);
    const timeoutSeconds = query.timeoutSeconds !== undefined ? Number(query.timeoutSeconds) : 1800;
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0) throw errors.badRequest(`invalid timeoutSeconds: ${query.timeoutSeconds}`);
    const bookmarks = query.allowWatchBookmarks === 'true' || query.allowWatchBookmarks === '1';
    const prefix = resources.prefix(type, ns);

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    // Clients wait for the headers before they count a watch as established.
    res.flushHeaders();
    openWatches.inc();
    let firstTableEvent = true;
    const send = (eventType: string, object: Obj) => {
      let payload: Obj = object;
      if (asTable && eventType !== 'ERROR' && eventType !== 'BOOKMARK') {
        payload = asTable([object], { noHeaders: !firstTableEvent, resourceVersion: object.metadata?.resourceVersion });
        firstTableEvent = false;
      }
      res.write(JSON.stringify({ type: eventType, object: payload }) + '\n');
      // Slow consumers do not get to hold unbounded memory.
      if (res.writableLength > 64 * 1024 * 1024) stop();
    };
    let watcher: { stop(): void } | undefined;
    let closed = false;
    const timers: NodeJS.Timeout[] = [];
    const stop = () => {
      if (closed) return;
      closed = true;
      watcher?.stop();
      for (const t of timers) clearTimeout(t);
      watches.delete(stop);
      openWatches.dec();
      res.end();
    };
    watches.add(stop);
    request.raw.on('close', stop);
    res.on('close', stop);

    let from: number;
    if (!rvParam || rvParam === '0') {
      const current = storage.list(prefix, { filter });
      for (const item of current.items) send('ADDED', resources.present(type, item.object));
      from = current.revision;
    } else from = Number(rvParam);

    const onEvent = (event: WatchEvent) => {
      if (closed) return;
      const matchesNow = filter(event.object);
      const matchedBefore = event.previous !== undefined && filter(event.previous);
      let eventType: string = event.type;
      if (event.type === 'MODIFIED') {
        if (matchesNow && !matchedBefore) eventType = 'ADDED';
        else if (!matchesNow && matchedBefore) eventType = 'DELETED';
        else if (!matchesNow) return;
      } else if (!matchesNow) return;
      send(eventType, resources.present(type, event.object));
    };
    try {
      watcher = storage.watch(prefix, from, onEvent);
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Expired') {
        send('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${storage.compactedRevision() + 1})`, reason: 'Expired', code: 410 });
        stop();
        return;
      }
      throw e;
    }
    if (closed) watcher.stop();
    if (timeoutSeconds > 0) timers.push(setTimeout(stop, timeoutSeconds * 1000));
    if (bookmarks) {
      const interval = setInterval(() => {
        send('BOOKMARK', { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(storage.currentRevision()) } });
      }, options.bookmarkIntervalMs ?? 60_000);
      timers.push(interval as unknown as NodeJS.Timeout);
    }
  }

  function toScale(type: ResourceType, object: Obj): Obj {
    const scale = type.scale!;
    const replicas = (path: string) => {
      const parts = path.replace(/^\./, '').split('.');
      let v: any = object;
      for (const p of parts) v = v?.[p];
      return typeof v === 'number' ? v : 0;
    };
    let selector = '';
    if (scale.labelSelectorPath) {
      const parts = scale.labelSelectorPath.replace(/^\./, '').split('.');
      let v: any = object;
      for (const p of parts) v = v?.[p];
      if (typeof v === 'string') selector = v;
    }
    if (!selector && object.spec?.selector && type.builtin) {
      selector = formatLabelSelector(fromLabelSelectorObject(object.spec.selector));
    }
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: object.metadata.name, namespace: object.metadata.namespace, uid: object.metadata.uid, resourceVersion: object.metadata.resourceVersion, creationTimestamp: object.metadata.creationTimestamp },
      spec: { replicas: replicas(scale.specReplicasPath) },
      status: { replicas: replicas(scale.statusReplicasPath), ...(selector ? { selector } : {}) },
    };
  }

  async function updateScale(type: ResourceType, ns: string | undefined, name: string, scale: Obj, dryRun: boolean, fieldManager: string): Promise<Obj> {
    const replicas = scale?.spec?.replicas;
    if (!Number.isInteger(replicas) || replicas < 0) {
      throw errors.invalid('Scale', 'autoscaling', name, [{ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
    }
    const path = type.scale!.specReplicasPath.replace(/^\./, '').split('.');
    const patch: Obj = {};
    let cursor = patch;
    path.forEach((p, i) => {
      cursor[p] = i === path.length - 1 ? replicas : {};
      cursor = cursor[p];
    });
    if (scale.metadata?.resourceVersion) patch.metadata = { resourceVersion: scale.metadata.resourceVersion };
    const updated = await resources.patch(type, ns, name, 'merge', patch, { dryRun, fieldManager, managedSubresource: 'scale' });
    return toScale(type, updated);
  }

  async function bindPod(type: ResourceType, ns: string | undefined, name: string, binding: Obj, dryRun: boolean): Promise<Obj> {
    const node = binding?.target?.name;
    if (!node) throw errors.invalid('Binding', '', name, [{ type: 'FieldValueRequired', field: 'target.name', message: 'Required value' }]);
    const pod = resources.get(type, ns, name);
    if (pod.spec?.nodeName) throw errors.conflict('pods/binding', '', name);
    await resources.patch(type, ns, name, 'merge', { spec: { nodeName: node } }, { dryRun });
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }

  app.all('/api/*', handle);
  app.all('/apis/*', async (request, reply) => {
    const segments = request.url.split('?')[0].split('/').filter(Boolean);
    if (segments.length === 2 && request.method === 'GET') {
      const group = registry.groups().find((g) => g.name === segments[1]);
      if (!group) return sendError(reply, errors.pathNotFound(request.url));
      return sendJson(reply, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupInfo(group) });
    }
    return handle(request, reply);
  });

  let port = options.port ?? 6443;
  const kubeconfigPath = join(dataDir, 'kubeconfig');
  // The kubeconfig is written before the server accepts connections; with port 0 the real port
  // is only known after binding, so it is written between bind and ready below.
  if (port !== 0) writeKubeconfig(kubeconfigPath, `https://${host}:${port}`, ca.certPem, adminToken);
  await app.listen({ host, port });
  const address = app.server.address();
  if (address && typeof address === 'object') port = address.port;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if ((options.port ?? 6443) === 0) writeKubeconfig(kubeconfigPath, url, ca.certPem, adminToken);

  const compactKeep = options.compactKeep ?? 10_000;
  const compactTimer = setInterval(() => {
    try {
      storage.compact(compactKeep);
    } catch (e) {
      log.warn({ err: e }, 'compaction failed');
    }
  }, options.compactIntervalMs ?? 60_000);
  compactTimer.unref();

  log.info({ url, dataDir, revision: storage.currentRevision() }, 'API server listening');

  let stopped = false;
  return {
    url,
    port,
    host,
    kubeconfigPath,
    caPem: ca.certPem,
    token: adminToken,
    storage,
    registry,
    addAuthenticator: (a) => authenticators.push(a),
    resources,
    addPostHandler: (h) => postHandlers.push(h),
    onCompleted: (l) => completedListeners.push(l),
    setAuthorizer: (a) => {
      authorize = a;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(compactTimer);
      for (const stopWatch of [...watches]) stopWatch();
      await app.close();
      await storage.close();
      log.info({ url }, 'API server stopped');
    },
  };
}
