// What an aggregated API server (a server behind an APIService: metrics-server, OLM's package
// server) needs to know who is asking: the request-header authentication the API server publishes
// in kube-system/extension-apiserver-authentication (the front-proxy CA, the names its client
// certificate may have, the headers carrying the user and groups), the user of a request whose
// front-proxy certificate verifies, and a SubjectAccessReview to authorise that user; the HTTPS
// options such a server listens with, and its whole authorisation (the front proxy's user, else a
// bearer token) as one refusal or none.
import type { IncomingMessage } from 'node:http';
import type { ServerOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type * as api from '../api/index.js';
import { REQUEST_LIMITS } from '../common/http-limits.js';
import { failureStatus, type JsonAnswer } from '../common/http-server.js';
import { type KubeClient, isNotFound } from './client.js';
import type { DelegatedAuth, ResourceAttributes } from './delegated-auth.js';
import { resources } from './resources.js';

/** What the request-header authentication trusts (kube-system/extension-apiserver-authentication). */
export interface RequestHeaderAuth {
  caPem: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
}

const EXTENSION_AUTHENTICATION = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

/** The request-header settings the API server publishes; undefined when it publishes none. */
export async function readRequestHeaderAuth(client: KubeClient): Promise<RequestHeaderAuth | undefined> {
  let cm: api.ConfigMap | undefined;
  try {
    cm = await client.read(resources.configMaps, EXTENSION_AUTHENTICATION.name, EXTENSION_AUTHENTICATION.namespace);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const data = cm?.data ?? {};
  const caPem = data['requestheader-client-ca-file'];
  if (!caPem) return undefined;
  const list = (key: string, fallback: string[]) => {
    const value = data[key];
    if (!value) return fallback;
    const parsed: unknown = JSON.parse(value);
    if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) throw new Error(`${EXTENSION_AUTHENTICATION.name}: ${key} is not a list of strings`);
    return parsed;
  };
  return {
    caPem,
    allowedNames: list('requestheader-allowed-names', []),
    usernameHeaders: list('requestheader-username-headers', ['X-Remote-User']),
    groupHeaders: list('requestheader-group-headers', ['X-Remote-Group']),
  };
}

/** The front-proxy user when the request carries a verified front-proxy certificate. */
function frontProxyUser(req: IncomingMessage, rh: RequestHeaderAuth | undefined): { name: string; groups: string[] } | undefined {
  const socket = req.socket as TLSSocket;
  if (!rh || !socket.authorized) return undefined;
  const cn = [socket.getPeerCertificate()?.subject?.CN].flat()[0];
  if (!cn || (rh.allowedNames.length > 0 && !rh.allowedNames.includes(cn))) return undefined;
  // Each group is its own header line (Node would join them with commas in req.headers).
  const header = (names: string[]) => names.flatMap((n) => req.headersDistinct[n.toLowerCase()] ?? []);
  const name = header(rh.usernameHeaders)[0];
  return name ? { name, groups: header(rh.groupHeaders) } : undefined;
}

/**
 * The HTTPS options of an aggregated API server: its serving pair, TLS 1.2 or later, the request
 * limits, and, when the API server publishes request-header authentication, the front proxy's
 * client certificate asked for but not required (a bearer token is the other way in;
 * frontProxyUser checks the certificate per request).
 */
export function aggregatedServerOptions(tls: { certPem: string; keyPem: string }, rh: RequestHeaderAuth | undefined): ServerOptions {
  return {
    ...REQUEST_LIMITS,
    cert: tls.certPem, key: tls.keyPem, minVersion: 'TLSv1.2',
    ...(rh ? { ca: rh.caPem, requestCert: true, rejectUnauthorized: false } : {}),
  };
}

/**
 * Whether an aggregated API server may answer `req`: a user the front proxy vouches for is asked
 * about `attributes` with a SubjectAccessReview (a path that names no resource, discovery, is
 * theirs); anyone else needs a bearer token `auth` lets in (TokenReview + SubjectAccessReview) for
 * `attributes`, or for the non-resource URL `path` when there are none. Undefined when allowed,
 * else the refusal as a Status: 401 without credentials the API server knows, 403 when not allowed.
 */
export async function aggregatedApiRefusal(
  req: IncomingMessage,
  o: { auth: DelegatedAuth; requestHeader: RequestHeaderAuth | undefined },
  attributes: ResourceAttributes | undefined,
  path: string,
): Promise<JsonAnswer | undefined> {
  const user = frontProxyUser(req, o.requestHeader);
  if (user) {
    if (!attributes || (await o.auth.userAllowed(user, attributes))) return undefined;
    const { verb, resource, group = '' } = attributes;
    return failureStatus(403, 'Forbidden', `${group ? `${resource}.${group}` : resource} is forbidden: User "${user.name}" cannot ${verb} resource "${resource}" in API group "${group}"`);
  }
  const decision = await o.auth.check(req.headers.authorization, attributes ? { resource: attributes } : { nonResource: { path, verb: 'get' } });
  return decision.allowed ? undefined : failureStatus(decision.status, decision.status === 401 ? 'Unauthorized' : 'Forbidden', decision.message);
}
