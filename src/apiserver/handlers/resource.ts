// The handler of resource requests (`/api/v1/…`, `/apis/<group>/<version>/…`): finds the type,
// checks the path (scope, `.`/`..` and other names a path cannot carry), negotiates the Accept
// header, checks the write options, and hands the request to reads, watches, writes or subresources (the
// kind's own ones, such as a CSR's approval, go through the writes with their subresource).
import { errors } from '../errors.js';
import { strategyFor } from '../kinds/index.js';
import { serveLogs } from './logs.js';
import { CONNECT_SUBRESOURCES, serveConnect } from './connect.js';
import { PROXIED, serveProxy } from './proxy.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { managerFromUserAgent } from '../apply/managed-fields.js';
import { negotiateOutput } from '../http/negotiate.js';
import { verbsOf } from './discovery.js';
import { serveGet, serveList } from './read.js';
import type { ServerState } from './state.js';
import { serveBinding, servePost, serveScale } from './subresources.js';
import { serveWatch } from './watch.js';
import { serveCreate, serveDelete, serveDeleteCollection, servePatch, serveUpdate, type WriteOptions } from './write.js';

const OPTIONS_KIND: Record<string, string> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' };
const FIELD_VALIDATION = ['Ignore', 'Strict', 'Warn'];

/** Why a namespace or name cannot be a path segment (kube's IsValidPathSegmentName), or undefined. */
export function pathSegmentProblem(segment: string): string | undefined {
  if (segment === '.' || segment === '..') return `may not be '${segment}'`;
  for (const c of ['/', '%']) if (segment.includes(c)) return `may not contain '${c}'`;
  return undefined;
}

function checkPathSegments(namespace: string, name: string): void {
  for (const [what, value] of [['Namespace', namespace], ['Name', name]] as const) {
    const problem = value === '' ? undefined : pathSegmentProblem(value);
    if (problem) throw errors.badRequest(`${what} parameter invalid: ${JSON.stringify(value)}: ${problem}`);
  }
}

function unsupported(method: string, field: string, value: string, supported: string[]) {
  return errors.invalid(OPTIONS_KIND[method], 'meta.k8s.io', '', [
    { type: 'FieldValueNotSupported', field, message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` },
  ]);
}

export function serveResource(state: ServerState) {
  return async (ctx: AuthorizedContext): Promise<void> => {
    const { info, query, request, path } = ctx;
    const method = request.method;
    const type = state.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!type) return servePost(ctx, state, query.string('dryRun') === 'All');
    ctx.metricResource = type.resource;
    ctx.onMetricResource?.();
    // `<name>/proxy/<any path>` of pods, services and nodes (proxy.ts).
    if (info.parts[2] === 'proxy' && type.group === '' && PROXIED.has(type.resource) && (type.namespaced ? info.namespace !== '' : info.namespace === '')) {
      return serveProxy(ctx, state, type, info.namespace || undefined, info.pathName);
    }
    // A cluster-scoped type under /namespaces/<ns>/ does not exist (a namespace's own path aside).
    const namespaceItself = type.resource === 'namespaces' && info.namespace === info.pathName;
    if (info.parts.length > 3 || (!type.namespaced && info.namespace !== '' && !namespaceItself)) throw errors.pathNotFound(path);
    checkPathSegments(info.namespace, info.pathName);
    const namespace = type.namespaced ? info.namespace || undefined : undefined;
    const name = info.pathName;
    const sub = info.subresource;
    // A read is a watch by path prefix or by a `watch` query value that parses as true; parsing it
    // first refuses a bad value with a 400, which request information counted as a watch.
    const reading = method === 'GET' || method === 'HEAD';
    const watchQuery = reading && query.bool('watch');
    const watching = name !== '' ? watchQuery : reading && info.verb === 'watch';
    // kubectl asks for protobuf first for some calls, and for Tables; client-go's metadata client for metadata alone.
    ctx.output = negotiateOutput(request.headers.accept, watching);

    // Only "All" exists; anything else on a write is refused rather than quietly persisted.
    const dryRunValue = query.string('dryRun');
    const dryRun = dryRunValue === 'All';
    if (dryRunValue !== undefined && dryRunValue !== '' && !dryRun && OPTIONS_KIND[method]) throw unsupported(method, 'dryRun', dryRunValue, ['All']);
    // Unknown fields of custom resources: refused (Strict), reported in Warning headers (Warn, the default) or ignored.
    const fieldValidation = (query.string('fieldValidation') || 'Warn') as WriteOptions['fieldValidation'];
    if (!FIELD_VALIDATION.includes(fieldValidation) && OPTIONS_KIND[method]) throw unsupported(method, 'fieldValidation', fieldValidation, FIELD_VALIDATION);
    // Writes without a fieldManager are recorded under the client's program name; applies must name one.
    const fieldManager = query.string('fieldManager') || managerFromUserAgent(request.headers['user-agent']);

    const kindSubresources = Object.keys(strategyFor(type)?.subresourceUpdates ?? {}).filter((s) => s !== 'status');
    const podLog = sub === 'log' && type.resource === 'pods' && type.group === '';
    const podConnect = CONNECT_SUBRESOURCES.includes(sub) && type.resource === 'pods' && type.group === '';
    if (sub !== '' && !podLog && !podConnect && !['status', 'scale', 'binding', ...kindSubresources].includes(sub)) return servePost(ctx, state, dryRun);
    if (podLog) return serveLogs(ctx, state, type, namespace, name);
    if (podConnect) return serveConnect(ctx, state, type, namespace, name, sub);
    if (kindSubresources.includes(sub) && !['GET', 'HEAD', 'PUT', 'PATCH'].includes(method)) throw errors.methodNotAllowed(method, path);
    if ((sub === 'status' && !type.status) || (sub === 'scale' && !type.scale) || (sub === 'binding' && (type.resource !== 'pods' || type.group !== ''))) throw errors.pathNotFound(path);
    if (sub === 'scale') return serveScale(ctx, state, type, namespace, name, dryRun, fieldManager);
    if (sub === 'binding') return serveBinding(ctx, state, type, namespace, name, dryRun);

    const options: WriteOptions = { dryRun, fieldManager, fieldValidation, warnings: [], user: ctx.user, viaApi: true, ...(sub !== '' ? { subresource: sub } : {}) };
    switch (method) {
      case 'GET':
      case 'HEAD':
        if (name !== '') return watching ? serveWatch(ctx, state, type, namespace, name) : serveGet(ctx, state, type, namespace, name);
        return watching ? serveWatch(ctx, state, type, namespace) : serveList(ctx, state, type, namespace);
      case 'POST':
        if (name !== '') throw errors.methodNotAllowed(method, path);
        return serveCreate(ctx, state, type, namespace, options);
      case 'PUT':
        if (name === '') throw errors.methodNotAllowed(method, path);
        return serveUpdate(ctx, state, type, namespace, name, options);
      case 'PATCH':
        if (name === '') throw errors.methodNotAllowed(method, path);
        return servePatch(ctx, state, type, namespace, name, options);
      case 'DELETE':
        if (name !== '') return serveDelete(ctx, state, type, namespace, name, dryRun);
        if (!verbsOf(type).includes('deletecollection')) throw errors.methodNotAllowed(method, path);
        return serveDeleteCollection(ctx, state, type, namespace, dryRun);
      default:
        throw errors.methodNotAllowed(method, path);
    }
  };
}
