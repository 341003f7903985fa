// API aggregation (kube-aggregator's proxy): a request under /apis/<group>/<version> that no
// built-in kind or CRD serves, and that a service-backed APIService names, is passed to that
// server — after this server authenticated and authorised it — over TLS checked against the
// APIService's caBundle for `<service>.<namespace>.svc` (unless insecureSkipTLSVerify), with the
// front-proxy client certificate and the user in X-Remote-User / X-Remote-Group (the caller's
// token is not passed on). The answer, status and body, streams back as it comes (watches too).
// A server that cannot be reached is a 503, as the aggregator answers.
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type * as api from '../../api/index.js';
import type { KeyPair } from '../../common/pki.js';
import { ApiError } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { asKind } from '../kinds/strategy.js';
import { storageKey, storagePrefix } from '../registry/resource-type.js';
import type { Registry } from '../registry/registry.js';
import type { Storage } from '../storage/types.js';
import { resolveTarget, serviceBackedFor, type Target } from './api-services.js';

const API_SERVICES = { group: 'apiregistration.k8s.io', resource: 'apiservices' };

/** Every APIService stored now. */
export function storedApiServices(storage: Storage): api.APIService[] {
  return storage.list(storagePrefix(API_SERVICES)).items.map((i) => asKind<api.APIService>(i.object));
}

/** Headers passed to the extension server as they came (the rest, credentials included, are not). */
const PASSED = ['accept', 'accept-encoding', 'content-type', 'content-length', 'user-agent', 'content-encoding'];
/** Hop-by-hop headers of the answer that are not the client's. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

function unavailable(message: string): ApiError {
  return new ApiError(503, 'ServiceUnavailable', `the server is currently unable to handle the request (${message})`);
}

export interface Aggregator {
  /** Proxies the request when an APIService names another server for its group-version; false when it is not one. */
  serve(ctx: AuthorizedContext): Promise<boolean>;
}

export function aggregator(storage: Storage, registry: Registry, proxyClient: KeyPair): Aggregator {
  const serviceType = registry.lookup('', 'v1', 'services')!;
  const endpointsType = registry.lookup('', 'v1', 'endpoints')!;
  return {
    async serve(ctx) {
      const m = /^\/apis\/([^/]+)\/([^/]+)(\/|$)/.exec(ctx.path);
      if (!m || registry.hasGroupVersion(m[1], m[2])) return false;
      const apiService = serviceBackedFor(storedApiServices(storage), m[1], m[2]);
      if (!apiService) return false;
      const ref = apiService.spec!.service!;
      const read = <T extends api.KubeObject>(key: string) => {
        const item = storage.get(key);
        return item ? asKind<T>(item.object) : undefined;
      };
      let target: Target;
      try {
        target = resolveTarget(apiService, read<api.Service>(storageKey(serviceType, ref.namespace, ref.name ?? '')), read<api.Endpoints>(storageKey(endpointsType, ref.namespace, ref.name ?? '')));
      } catch (e) {
        throw unavailable((e as Error).message);
      }
      await proxy(ctx, target, apiService, proxyClient);
      return true;
    },
  };
}

function proxy(ctx: AuthorizedContext, target: Target, apiService: api.APIService, proxyClient: KeyPair): Promise<void> {
  const { request, reply } = ctx;
  const headers: OutgoingHttpHeaders = {};
  for (const name of PASSED) if (request.headers[name] !== undefined) headers[name] = request.headers[name];
  headers['x-remote-user'] = ctx.user.name;
  headers['x-remote-group'] = ctx.user.groups;
  if (ctx.user.uid) headers['x-remote-uid'] = ctx.user.uid;
  const caBundle = apiService.spec?.caBundle ? Buffer.from(apiService.spec.caBundle, 'base64').toString('utf8') : undefined;
  return new Promise((resolve, reject) => {
    const upstream = httpsRequest({
      host: target.host, port: target.port, method: request.method, path: request.url, headers,
      servername: target.serverName, ca: caBundle, rejectUnauthorized: !apiService.spec?.insecureSkipTLSVerify,
      cert: proxyClient.certPem, key: proxyClient.keyPem, agent: false,
    });
    let answered = false;
    // The client went (or the answer is complete): nothing more is read from the server.
    reply.raw.on('close', () => upstream.destroy());
    upstream.on('error', (e) => {
      if (answered) {
        reply.raw.destroy();
        resolve();
      } else reject(unavailable(`error trying to reach service: ${e.message}`));
    });
    upstream.on('response', (answer) => {
      answered = true;
      reply.hijack();
      reply.raw.writeHead(answer.statusCode ?? 502, answerHeaders(answer.headers));
      answer.pipe(reply.raw);
      answer.on('end', () => resolve());
      answer.on('error', () => {
        reply.raw.destroy();
        resolve();
      });
    });
    if (request.method === 'GET' || request.method === 'HEAD') upstream.end();
    else request.raw.pipe(upstream);
  });
}

function answerHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}
