// The filter chain every request passes through, resource and non-resource alike: metrics →
// recovery (every failure becomes a Status) → shutdown → authentication → request information →
// in-flight metrics → audit → authorization → the handler (handlers/router.ts). Each filter does
// one thing and calls the next; one that refuses throws an ApiError, which the recovery filter
// answers. Audit wraps authorization, as in kube-apiserver's chain, so that refusals are recorded
// too.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Output } from '../http/negotiate.js';
import { QueryParams } from '../http/query.js';
import type { RequestAttributes, RequestInfo } from '../auth/request-attributes.js';
import type { User } from '../types.js';

export interface RequestContext {
  request: FastifyRequest;
  reply: FastifyReply;
  /** The path without the query, trailing slashes removed (`/apis/` is served as `/apis`). */
  path: string;
  query: QueryParams;
  /** Set by the authentication filter; the impersonated user once the impersonation filter has allowed it. */
  user?: User;
  /** Who authenticated, when the request impersonates `user` (filters/impersonation.ts). */
  impersonatedBy?: User;
  /** Set by the request-information filter. */
  info?: RequestInfo;
  attributes?: RequestAttributes;
  /** The resource label of the request metrics (the handler for resources sets it). */
  metricResource?: string;
  /** What the answer is turned into, from the Accept header (the resource handler negotiates it: http/negotiate.ts). */
  output?: Output;
  /** Called by the handler once it has set metricResource (the metrics filter counts long-running requests from there). */
  onMetricResource?: () => void;
}

/** The context a request starts the chain with. */
export function requestContext(request: FastifyRequest, reply: FastifyReply): RequestContext {
  const [rawPath] = request.url.split('?');
  return { request, reply, path: rawPath.length > 1 ? rawPath.replace(/\/+$/, '') || '/' : rawPath, query: QueryParams.fromUrl(request.url) };
}

/** A context after authentication and request information: what handlers see. */
export type AuthorizedContext = RequestContext & { user: User; info: RequestInfo; attributes: RequestAttributes };

export type Filter = (ctx: RequestContext, next: () => Promise<void>) => Promise<void>;
export type Handler = (ctx: AuthorizedContext) => Promise<void>;

/** Runs `filters` in order around `handler`. */
export function chain(filters: Filter[], handler: Handler): (ctx: RequestContext) => Promise<void> {
  return (ctx) => {
    const step = (i: number): Promise<void> => (i < filters.length ? filters[i](ctx, () => step(i + 1)) : handler(ctx as AuthorizedContext));
    return step(0);
  };
}
