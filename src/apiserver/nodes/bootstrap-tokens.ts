// Bootstrap tokens, stored as Kubernetes stores them: a Secret `bootstrap-token-<id>` of type
// `bootstrap.kubernetes.io/token` in kube-system, the bearer token being `<id>.<secret>`. A node's
// bootstrap kubeconfig carries one; it authenticates as `system:bootstrap:<id>` in group
// `system:bootstrappers` (plus the secret's `auth-extra-groups`), which RBAC lets create and
// watch CSRs and nothing more. Expired, unmarked, mismatched or terminating secrets authenticate
// nobody (kube's plugin/pkg/auth/authenticator/token/bootstrap).
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../auth/request-attributes.js';
import { rfc3339 } from '../../common/time.js';

import type * as api from '../../api/index.js';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

const random = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

/** A new token, `<6 chars>.<16 chars>` of [a-z0-9], as kubeadm generates them. */
export function generateBootstrapToken(): string {
  return `${random(6)}.${random(16)}`;
}

export interface BootstrapTokenOptions {
  /** When the token stops working. */
  expiration?: Date;
  /** Groups beyond system:bootstrappers, each `system:bootstrappers:...`. */
  extraGroups?: string[];
  description?: string;
}

/** The Secret that makes `token` a bootstrap token (what `kubeadm token create` stores). */
export function bootstrapTokenSecret(token: string, options: BootstrapTokenOptions = {}): api.Secret {
  const m = TOKEN.exec(token);
  if (!m) throw new Error('a bootstrap token must be <6 chars>.<16 chars> of [a-z0-9]');
  const bad = (options.extraGroups ?? []).find((g) => !EXTRA_GROUP.test(g));
  if (bad !== undefined) throw new Error(`auth-extra-group ${JSON.stringify(bad)} does not match ${EXTRA_GROUP}`);
  const data: Record<string, string> = { 'token-id': m[1], 'token-secret': m[2], 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true' };
  if (options.expiration) data.expiration = rfc3339(options.expiration);
  if (options.extraGroups?.length) data['auth-extra-groups'] = options.extraGroups.join(',');
  if (options.description) data.description = options.description;
  return {
    apiVersion: 'v1', kind: 'Secret', type: BOOTSTRAP_TOKEN_SECRET_TYPE,
    metadata: { name: `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${m[1]}`, namespace: 'kube-system' },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

export type BootstrapAuthResult =
  | { ok: true; user: UserInfo }
  /** `notBootstrapToken`: not shaped like one, let another authenticator try. */
  | { ok: false; reason: string; notBootstrapToken?: boolean };

/**
 * Authenticates `token` against the Secret `lookup(id)` returns (the stored
 * `kube-system/bootstrap-token-<id>`), or says why it does not.
 */
export function authenticateBootstrapToken(token: string, lookup: (id: string) => api.Secret | undefined, now: Date = new Date()): BootstrapAuthResult {
  const m = TOKEN.exec(token);
  if (!m) return { ok: false, reason: 'not a bootstrap token', notBootstrapToken: true };
  const [, id, secret] = m;
  const stored = lookup(id);
  if (!stored) return { ok: false, reason: `no secret ${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}` };
  if (stored.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return { ok: false, reason: `secret has type ${JSON.stringify(stored.type)}, not ${BOOTSTRAP_TOKEN_SECRET_TYPE}` };
  if (stored.metadata?.deletionTimestamp) return { ok: false, reason: 'secret is being deleted' };
  const field = (key: string): string | undefined => {
    const value = stored.data?.[key];
    return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
  };
  const storedSecret = Buffer.from(field('token-secret') ?? '');
  if (field('token-id') !== id || storedSecret.length !== secret.length || !timingSafeEqual(storedSecret, Buffer.from(secret))) {
    return { ok: false, reason: 'token does not match the secret' };
  }
  if (field('usage-bootstrap-authentication') !== 'true') return { ok: false, reason: 'token is not marked usage-bootstrap-authentication' };
  const expiration = field('expiration');
  if (expiration !== undefined) {
    const at = Date.parse(expiration);
    if (Number.isNaN(at)) return { ok: false, reason: `unparseable expiration ${JSON.stringify(expiration)}` };
    if (now.getTime() >= at) return { ok: false, reason: `token expired at ${expiration}` };
  }
  const extra = (field('auth-extra-groups') ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
  const bad = extra.find((g) => !EXTRA_GROUP.test(g));
  if (bad !== undefined) return { ok: false, reason: `invalid auth-extra-group ${JSON.stringify(bad)}` };
  return { ok: true, user: { name: `system:bootstrap:${id}`, groups: [BOOTSTRAPPERS_GROUP, ...extra, 'system:authenticated'] } };
}
