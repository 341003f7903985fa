// The handler at the end of the filter chain: a group-version an APIService hands to another server
// is proxied there (aggregator/proxy.ts); resource requests go to the resource handler;
// non-resource paths to discovery, OpenAPI, health, version or metrics, which answer GET (and
// HEAD) only. Anything else is a 404 Status.
import type { Registry as MetricsRegistry } from 'prom-client';
import { aggregator } from '../aggregator/proxy.js';
import { errors } from '../errors.js';
import type { AuthorizedContext, Handler } from '../filters/chain.js';
import type { OpenApi } from '../openapi/documents.js';
import { isDiscoveryPath, serveDiscovery } from './discovery.js';
import { isHealthPath, serveHealth, serveMetrics, serveVersion } from './health.js';
import { isOpenApiPath, serveOpenApi } from './openapi.js';
import { serveResource } from './resource.js';
import type { ServerState } from './state.js';

export function router(state: ServerState, openApi: OpenApi, metrics: MetricsRegistry): Handler {
  const routes: [(path: string) => boolean, Handler][] = [
    [isHealthPath, serveHealth(state.storage)],
    [(p) => p === '/version', serveVersion(state.gitVersion)],
    [(p) => p === '/metrics', serveMetrics(metrics)],
    [isOpenApiPath, serveOpenApi(openApi)],
    [isDiscoveryPath, serveDiscovery(state)],
  ];
  const resource = serveResource(state);
  const aggregated = aggregator(state.storage, state.registry, state.proxyClientCert);
  return async (ctx: AuthorizedContext) => {
    // Read here for every answer (http/respond.ts indents with it); a bad value is a 400.
    ctx.query.bool('pretty');
    if (ctx.path.startsWith('/apis/') && (await aggregated.serve(ctx))) return;
    if (ctx.info.resourceRequest) return resource(ctx);
    const route = routes.find(([matches]) => matches(ctx.path));
    if (!route) throw errors.pathNotFound(ctx.path);
    if (ctx.request.method !== 'GET' && ctx.request.method !== 'HEAD') throw errors.methodNotAllowed(ctx.request.method, ctx.path);
    return route[1](ctx);
  };
}
