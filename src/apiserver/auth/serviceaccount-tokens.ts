// ServiceAccount tokens: TokenRequest issues RS256 JWTs signed with a key pair kept in the data
// directory, with the claims kube-apiserver writes; authentication turns such a token back into
// the service account's user, or says why it is not valid. Only node:crypto: a JWT is three
// base64url parts and one RSA signature, too little to need a library.
import { rfc3339 } from '../../common/time.js';
import { BosunError } from '../../common/errors.js';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { UserInfo } from './request-attributes.js';

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const DEFAULT_AUDIENCES = [DEFAULT_ISSUER];
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;

export interface SigningKeys {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

const KEY_FILE = 'sa.key';

/** Loads `<dir>/sa.key` (PKCS#8 PEM), creating a 2048-bit RSA key there (mode 0600) on first use. */
export function loadOrCreateSigningKeys(dir: string): SigningKeys {
  const file = path.join(dir, KEY_FILE);
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    fs.writeFileSync(file, pem, { mode: 0o600 });
  }
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface TokenRequestSpec {
  audiences?: string[] | null;
  expirationSeconds?: number | null;
  /** Echoed back; tokens here are not bound to a pod or secret. */
  boundObjectRef?: unknown;
}

export interface IssuedToken {
  token: string;
  /** RFC 3339, as TokenRequest status.expirationTimestamp. */
  expirationTimestamp: string;
  audiences: string[];
  expirationSeconds: number;
}

/** A TokenRequest the server refuses; its reason is the Kubernetes Status reason it answers with. */
export class TokenRequestError extends BosunError {
  declare readonly reason: 'Invalid';
  constructor(message: string) {
    super('Invalid', message);
  }
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti?: string;
  'kubernetes.io': { namespace: string; serviceaccount: { name: string; uid: string } };
}

/** Issues a token for a TokenRequest: expirationSeconds defaults to 3600 and may not be below 600. */
export function issueToken(keys: SigningKeys, sa: ServiceAccountRef, spec: TokenRequestSpec,
  options: { issuer?: string; now?: Date } = {}): IssuedToken {
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw new TokenRequestError(`spec.expirationSeconds: Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes`);
  }
  const audiences = spec.audiences && spec.audiences.length > 0 ? spec.audiences : DEFAULT_AUDIENCES;
  const iat = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims: TokenClaims = {
    aud: audiences, exp: iat + expirationSeconds, iat, iss: options.issuer ?? DEFAULT_ISSUER,
    jti: randomUUID(),
    'kubernetes.io': { namespace: sa.namespace, serviceaccount: { name: sa.name, uid: sa.uid } },
    nbf: iat, sub: `system:serviceaccount:${sa.namespace}:${sa.name}`,
  };
  const signingInput = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(signingInput), keys.privateKey);
  return {
    token: `${signingInput}.${base64url(signature)}`,
    expirationTimestamp: rfc3339(new Date(claims.exp * 1000)),
    audiences, expirationSeconds,
  };
}

export type TokenAuthResult =
  | { ok: true; user: UserInfo; claims: TokenClaims }
  /** ok false with `notServiceAccountToken` means: not ours, let another authenticator try. */
  | { ok: false; reason: string; notServiceAccountToken?: boolean };

export interface AuthenticateOptions {
  issuer?: string;
  /** Accepted audiences; the token must name at least one. */
  audiences?: string[];
  now?: Date;
  /** Current uid of the service account, or undefined when it does not exist (deleted). */
  lookupServiceAccount: (namespace: string, name: string) => { uid: string } | undefined;
}

// kube allows tokens a little clock skew around nbf/exp.
const LEEWAY_SECONDS = 60;

/** Authenticates a bearer token as a service account, or gives the reason it is not valid. */
export function authenticateToken(keys: SigningKeys, token: string, options: AuthenticateOptions): TokenAuthResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'not a JWT', notServiceAccountToken: true };
  let header: { alg?: string };
  let claims: TokenClaims;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed JWT', notServiceAccountToken: true };
  }
  const issuer = options.issuer ?? DEFAULT_ISSUER;
  if (claims?.iss !== issuer) return { ok: false, reason: `token issuer ${JSON.stringify(claims?.iss)} is not ${issuer}`, notServiceAccountToken: true };
  if (header.alg !== 'RS256') return { ok: false, reason: `unsupported signing algorithm ${JSON.stringify(header.alg)}` };
  if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), keys.publicKey, Buffer.from(parts[2], 'base64url'))) {
    return { ok: false, reason: 'invalid signature' };
  }
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (typeof claims.exp !== 'number' || now > claims.exp + LEEWAY_SECONDS) return { ok: false, reason: 'token has expired' };
  if (typeof claims.nbf === 'number' && now < claims.nbf - LEEWAY_SECONDS) return { ok: false, reason: 'token is not valid yet' };
  const audiences = options.audiences ?? DEFAULT_AUDIENCES;
  const tokenAudiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!tokenAudiences.some((a) => audiences.includes(a))) return { ok: false, reason: 'token audiences are not accepted' };
  const k8s = claims['kubernetes.io'];
  const namespace = k8s?.namespace;
  const name = k8s?.serviceaccount?.name;
  if (!namespace || !name || claims.sub !== `system:serviceaccount:${namespace}:${name}`) {
    return { ok: false, reason: 'token does not name a service account' };
  }
  const live = options.lookupServiceAccount(namespace, name);
  if (!live) return { ok: false, reason: `service account ${namespace}/${name} has been deleted` };
  if (live.uid !== k8s.serviceaccount.uid) {
    return { ok: false, reason: `service account UID (${k8s.serviceaccount.uid}) does not match claim (${live.uid})` };
  }
  return {
    ok: true, claims,
    user: {
      name: claims.sub, uid: live.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    },
  };
}
