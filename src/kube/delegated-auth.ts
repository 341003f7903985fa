// Delegated authentication and authorization, as kube-rbac-proxy and the kubelet do for the
// endpoints a component serves itself (/metrics, a query API, a webhook): the caller's bearer token
// goes to the API server in a TokenReview (who is it?), then its user and the request's attributes
// in a SubjectAccessReview (may it?). No token, or one the API server does not know: 401; known
// but not allowed: 403. The component's own identity needs `system:auth-delegator` (create
// tokenreviews and subjectaccessreviews), as on Kubernetes.
//
//   const auth = new DelegatedAuth(client);
//   const decision = await auth.check(req.headers.authorization, { nonResource: { path: '/metrics', verb: 'get' } });
//   if (!decision.allowed) return writeRefusal(res, decision);
//
// Answers are cached per token and attributes for a short while (default 10 s, as kube-rbac-proxy
// caches; refusals for less), so a scrape every few seconds costs the API server nothing.
import type { ServerResponse } from 'node:http';
import type * as api from '../api/index.js';
import type { KubeClient } from './client.js';
import { realClock, type Clock } from './clock.js';

export interface AuthUser {
  username: string;
  uid?: string;
  groups: string[];
}

/** A path that is not a resource (`/metrics`), as a ClusterRole's `nonResourceURLs` names it. */
export type NonResourceAttributes = { path: string; verb: string };
/** A resource the request stands for (the kubelet's `nodes/metrics`, a namespace's `get`). */
export type ResourceAttributes = {
  namespace?: string;
  verb: string;
  group?: string;
  version?: string;
  resource: string;
  subresource?: string;
  name?: string;
};
export type AuthAttributes = { nonResource: NonResourceAttributes } | { resource: ResourceAttributes };

export type AuthDecision = { allowed: true; user: AuthUser } | { allowed: false; status: 401 | 403; message: string };
export type AuthRefusal = Extract<AuthDecision, { allowed: false }>;

export interface DelegatedAuthOptions {
  /** How long an allowed answer is reused (default 10 s). */
  cacheTtlMs?: number;
  /** How long a refusal is reused (default 2 s: a role just granted applies quickly). */
  refusalTtlMs?: number;
  clock?: Clock;
}

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const MAX_CACHED = 1024;

/** kube-rbac-proxy's (and the kubelet's) verb for an HTTP method. */
export function verbForMethod(method: string): string {
  switch (method.toUpperCase()) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

/** Writes a refusal as the API server would: a `Status` with the code and a reason. */
export function writeRefusal(res: ServerResponse, decision: AuthRefusal): void {
  const reason = decision.status === 401 ? 'Unauthorized' : 'Forbidden';
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: decision.message, reason, code: decision.status });
  res.writeHead(decision.status, { 'content-type': 'application/json', ...(decision.status === 401 ? { 'www-authenticate': 'Bearer' } : {}) });
  res.end(body);
}

/** The bearer token of an Authorization header, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

function describe(attributes: AuthAttributes): string {
  if ('nonResource' in attributes) return `${attributes.nonResource.verb} ${attributes.nonResource.path}`;
  const r = attributes.resource;
  const resource = `${r.resource}${r.subresource ? `/${r.subresource}` : ''}${r.group ? `.${r.group}` : ''}`;
  return `${r.verb} ${resource}${r.name ? ` "${r.name}"` : ''}${r.namespace ? ` in namespace "${r.namespace}"` : ''}`;
}

export class DelegatedAuth {
  private readonly cache = new Map<string, { decision: AuthDecision; expires: number }>();
  private readonly clock: Clock;
  private readonly ttl: number;
  private readonly refusalTtl: number;

  constructor(
    private readonly client: KubeClient,
    options: DelegatedAuthOptions = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.ttl = options.cacheTtlMs ?? 10_000;
    this.refusalTtl = options.refusalTtlMs ?? 2_000;
  }

  /** TokenReview of the header's bearer token, then a SubjectAccessReview of the attributes. */
  async check(authorization: string | undefined, attributes: AuthAttributes): Promise<AuthDecision> {
    const token = bearerToken(authorization);
    if (!token) return { allowed: false, status: 401, message: 'Unauthorized: a bearer token is required' };
    return this.cached(`${token}\n${JSON.stringify(attributes)}`, () => this.decide(token, attributes));
  }

  /**
   * Whether a user someone else authenticated (the front proxy's, by its client certificate) may
   * do what `attributes` say: a SubjectAccessReview, cached as check()'s answers are.
   */
  async userAllowed(user: { name: string; groups: string[] }, attributes: ResourceAttributes): Promise<boolean> {
    const key = `user ${user.name}\n${user.groups.join(',')}\n${JSON.stringify(attributes)}`;
    const decision = await this.cached(key, async () => {
      const review = await this.client.request<api.SubjectAccessReview>('POST', ACCESS_REVIEWS, {
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: user.name, groups: user.groups, resourceAttributes: attributes } },
      });
      return review.status?.allowed === true ? { allowed: true, user: { username: user.name, groups: user.groups } } : { allowed: false, status: 403, message: review.status?.reason ?? '' };
    });
    return decision.allowed;
  }

  private async cached(key: string, decide: () => Promise<AuthDecision>): Promise<AuthDecision> {
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.decision;
    const decision = await decide();
    if (this.cache.size >= MAX_CACHED) this.evict(now);
    this.cache.set(key, { decision, expires: now + (decision.allowed ? this.ttl : this.refusalTtl) });
    return decision;
  }

  private evict(now: number): void {
    for (const [key, entry] of this.cache) if (entry.expires <= now) this.cache.delete(key);
    // Still full of live entries: drop the oldest (a Map iterates in insertion order).
    while (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
  }

  private async decide(token: string, attributes: AuthAttributes): Promise<AuthDecision> {
    const review = await this.client.request<api.TokenReview>('POST', TOKEN_REVIEWS, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    const who = review.status;
    if (!who?.authenticated || !who.user?.username) {
      return { allowed: false, status: 401, message: `Unauthorized: ${who?.error || 'the token was not accepted'}` };
    }
    const user: AuthUser = { username: who.user.username, ...(who.user.uid ? { uid: who.user.uid } : {}), groups: who.user.groups ?? [] };
    const spec: NonNullable<api.SubjectAccessReview['spec']> = {
      user: user.username,
      groups: user.groups,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(who.user.extra ? { extra: who.user.extra } : {}),
      ...('nonResource' in attributes ? { nonResourceAttributes: attributes.nonResource } : { resourceAttributes: attributes.resource }),
    };
    const access = await this.client.request<api.SubjectAccessReview>('POST', ACCESS_REVIEWS, {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    });
    if (access.status?.allowed) return { allowed: true, user };
    const why = access.status?.reason ? `: ${access.status.reason}` : '';
    return { allowed: false, status: 403, message: `Forbidden: user "${user.username}" cannot ${describe(attributes)}${why}` };
  }
}
