// The `proxy` subresources of pods, services and nodes (`/api/v1/namespaces/<ns>/pods/<name>/proxy/
// <path>`, `…/services/<name>/proxy/…`, `/api/v1/nodes/<name>/proxy/…`, what `kubectl proxy` users
// browse and `kubectl get --raw` reads): any method, passed on to the pod's IP, a ready endpoint of
// the service, or the node's kubelet (as the API server's kubelet-client certificate), and the
// answer streamed back. The name may carry a scheme and a port as kube's do — `[scheme:]name[:port]`
// (`https:web:8443`, `web:http`); a pod without a port gets its first container's first port, a
// service's port is found by name or number (the only one when none is named) and its endpoint
// port by that port's name. The caller's credentials (Authorization, impersonation headers) are not
// passed on. Upgrades through a proxy are not carried (they are answered as plain requests).
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ApiError, errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { kubeletAddress, kubeletTls } from '../nodes/pod-logs.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { ServerState } from './state.js';
import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

/** The resources whose `proxy` subresource is served. */
export const PROXIED = new Set(['pods', 'services', 'nodes']);

/** Headers that end at this hop, and the caller's credentials, which the target must not see. */
const NOT_FORWARDED = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'authorization']);

/** `[scheme:]name[:port]` (kube's SplitSchemeNamePort); undefined when it is none of those. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  if (parts.length === 1) return { scheme: '', name: parts[0], port: '' };
  if (parts.length === 2) return { scheme: '', name: parts[0], port: parts[1] };
  if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https' || parts[0] === '')) return { scheme: parts[0], name: parts[1], port: parts[2] };
  return undefined;
}

/** Where a pod's proxy goes: its IP on the port named or numbered, else its first container's first port. */
export function podProxyTarget(pod: api.Pod, scheme: string, port: string): URL {
  const name = String(pod.metadata?.name ?? '');
  const ip = pod.status?.podIP;
  if (!ip) throw new ApiError(503, 'ServiceUnavailable', `address not allocated yet for pod ${name}`);
  let chosen = port;
  if (chosen !== '' && !/^\d+$/.test(chosen)) {
    const named = (pod.spec?.containers ?? []).flatMap((c) => c.ports ?? []).find((p) => p.name === chosen);
    if (!named) throw errors.badRequest(`pod ${name} has no port named "${chosen}"`);
    chosen = String(named.containerPort);
  }
  if (chosen === '') chosen = String(pod.spec?.containers?.[0]?.ports?.[0]?.containerPort ?? '');
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return new URL(`${scheme || 'http'}://${host}${chosen ? `:${chosen}` : ''}`);
}

/** Where a service's proxy goes: a ready address of its Endpoints on the endpoint port of the service port asked for. */
export function serviceProxyTarget(service: api.Service, endpoints: api.Endpoints | undefined, scheme: string, port: string, random: () => number = Math.random): URL {
  const name = String(service.metadata?.name ?? '');
  const ports = service.spec?.ports ?? [];
  const servicePort = port === '' ? (ports.length === 1 ? ports[0] : undefined) : ports.find((p) => p.name === port || String(p.port) === port);
  if (!servicePort) {
    throw port === '' ? errors.badRequest(`service ${name} has ${ports.length} ports: name one (${name}:<port>)`) : new ApiError(503, 'ServiceUnavailable', `no service port "${port}" found for service "${name}"`);
  }
  const candidates = (endpoints?.subsets ?? []).flatMap((subset) => {
    const endpointPort = (subset.ports ?? []).find((p) => (p.name ?? '') === (servicePort.name ?? ''));
    return endpointPort ? (subset.addresses ?? []).map((a) => ({ ip: a.ip, port: endpointPort.port })) : [];
  });
  if (candidates.length === 0) throw new ApiError(503, 'ServiceUnavailable', `no endpoints available for service "${name}"`);
  const { ip, port: target } = candidates[Math.floor(random() * candidates.length)];
  return new URL(`${scheme || 'http'}://${ip.includes(':') ? `[${ip}]` : ip}:${target}`);
}

/** The part of the request's path after `<name>/proxy` (a trailing slash kept), with its query. */
function forwardedPath(url: string, nameSegment: string): string {
  const [path, query] = [url.split('?')[0], url.includes('?') ? url.slice(url.indexOf('?')) : ''];
  const segments = path.split('/');
  const at = segments.findIndex((s, i) => segments[i + 1] === 'proxy' && safeDecode(s) === nameSegment);
  return `/${segments.slice(at + 2).join('/')}${query}`;
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export async function serveProxy(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, id: string): Promise<void> {
  const { request, reply } = ctx;
  const parsed = splitSchemeNamePort(id);
  if (!parsed || parsed.name === '') throw errors.badRequest(`invalid request "${id}": expected [scheme:]name[:port]`);
  let target: URL;
  // A pod's or an endpoint's certificate is not checked, as kube-apiserver's proxy does not.
  let tls: ReturnType<typeof kubeletTls> | { rejectUnauthorized: false } = { rejectUnauthorized: false };
  if (type.resource === 'pods') {
    target = podProxyTarget(asKind<api.Pod>(state.resources.get(type, namespace, parsed.name)), parsed.scheme, parsed.port);
  } else if (type.resource === 'services') {
    const service = asKind<api.Service>(state.resources.get(type, namespace, parsed.name));
    const stored = state.storage.get(`/core/endpoints/${namespace}/${parsed.name}`)?.object;
    target = serviceProxyTarget(service, stored && asKind<api.Endpoints>(stored), parsed.scheme, parsed.port);
  } else {
    const node = asKind<api.Node>(state.resources.get(type, undefined, parsed.name));
    const { host, port } = kubeletAddress({ spec: { nodeName: parsed.name } } as api.Pod, node);
    target = new URL(`${parsed.scheme || 'https'}://${host}:${parsed.port || port}`);
    tls = kubeletTls({ clientCert: state.kubeletClientCert });
  }
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || name.startsWith('impersonate-')) continue;
    headers[name] = value;
  }
  headers.host = target.host;
  const path = forwardedPath(request.url, id);
  await new Promise<void>((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send(target, { method: request.method, path, headers, ...tls });
    // The caller gone before the answer is through: the request to the target goes too.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) upstream.destroy();
    });
    upstream.on('error', (err) => {
      if (reply.sent) {
        reply.raw.destroy();
        resolve();
      } else reject(new ApiError(503, 'ServiceUnavailable', `error trying to reach service: ${err.message}`));
    });
    upstream.on('response', (answer: IncomingMessage) => {
      reply.hijack();
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !NOT_FORWARDED.has(name)) out[name] = value;
      reply.raw.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(reply.raw);
      answer.on('end', () => resolve());
      answer.on('error', () => {
        reply.raw.destroy();
        resolve();
      });
    });
    // The body, as it comes (the server does not read a proxied request's body).
    request.raw.pipe(upstream);
  });
}
