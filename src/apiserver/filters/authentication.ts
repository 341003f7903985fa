// Authentication: a client certificate that verifies against the cluster CA names the user
// (auth/client-certificates.ts), else the bearer token does, through the admin token and the
// authenticators added later (service account and bootstrap tokens). Without either, only the
// health and version paths are served, to `system:anonymous` (as kube-apiserver's anonymous
// authentication limited to those paths); anything else, and any token no authenticator knows,
// is a 401.
import type { TLSSocket } from 'node:tls';
import { certificateUser } from '../auth/client-certificates.js';
import { errors } from '../errors.js';
import type { Authenticator, User } from '../types.js';
import type { Filter } from './chain.js';

const ANONYMOUS: User = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const ANONYMOUS_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

function anonymousAllowed(path: string): boolean {
  return ANONYMOUS_PATHS.has(path) || /^\/(healthz|livez|readyz)\//.test(path);
}

/** The first authenticator's answer for a bearer token (the later ones are not asked). */
export function authenticate(authenticators: readonly Authenticator[], token: string): User | undefined {
  for (const a of authenticators) {
    const user = a(token);
    if (user) return user;
  }
  return undefined;
}

export function authentication(authenticators: readonly Authenticator[]): Filter {
  return async (ctx, next) => {
    const header = ctx.request.headers.authorization;
    const byCertificate = certificateUser(ctx.request.raw.socket as TLSSocket);
    if (byCertificate) {
      ctx.user = byCertificate;
      return next();
    }
    if (header === undefined && anonymousAllowed(ctx.path)) {
      ctx.user = ANONYMOUS;
      return next();
    }
    const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
    const user = token ? authenticate(authenticators, token) : undefined;
    if (!user) throw errors.unauthorized();
    ctx.user = user;
    return next();
  };
}
