// Wires authentication of ServiceAccount tokens and RBAC authorization into a running API server:
// creates the bootstrap RBAC policy at first start, keeps an RBAC index current from a storage
// watch (so role changes apply on the next request, no restart), installs it as the server's
// authorizer, accepts tokens signed with the key in `<data dir>/pki/sa.key`, and serves
// TokenRequest (`serviceaccounts/<sa>/token`) and the authorization.k8s.io access reviews.
//
// auth/ holds who a request is and what it may do: client certificates, ServiceAccount tokens,
// request attributes, RBAC with its bootstrap policy, access reviews; this file wires them.
import { rfc3339 } from '../../common/time.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { logger } from '../../common/log.js';
import type { ApiServer, PostRequest } from '../server.js';
import type { User } from '../types.js';
import { errors } from '../errors.js';
import { selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview, type AccessReviewSpec, type Authorizes } from './access-review.js';
import type { KubeObject } from '../storage/types.js';
import { forbiddenMessage, RbacIndex, type BindingObject, type RbacKind, type RoleObject } from './rbac.js';
import { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS } from './rbac-bootstrap.js';
import type { RequestAttributes } from './request-attributes.js';
import {
  authenticateToken, issueToken, loadOrCreateSigningKeys, TokenRequestError, type IssuedToken, type SigningKeys, type TokenRequestSpec,
} from './serviceaccount-tokens.js';

const log = logger('access-control');
const RBAC_PREFIX = '/rbac.authorization.k8s.io/';
const KIND_BY_RESOURCE: Record<string, RbacKind> = {
  roles: 'Role', clusterroles: 'ClusterRole', rolebindings: 'RoleBinding', clusterrolebindings: 'ClusterRoleBinding',
};

export interface AccessControl {
  rbac: RbacIndex;
  keys: SigningKeys;
  /** Issues a token for an existing service account (what TokenRequest does), or undefined when it does not exist. */
  issueServiceAccountToken(namespace: string, name: string, spec?: TokenRequestSpec): IssuedToken | undefined;
  /** The server's authorizer (the chained one, then RBAC): undefined to allow, or the 403 message. */
  authorize(attributes: RequestAttributes): string | undefined;
  stop(): void;
}

function kindOfKey(key: string): RbacKind | undefined {
  return KIND_BY_RESOURCE[key.slice(RBAC_PREFIX.length).split('/')[0]];
}

/** An authorizer consulted before RBAC (kube's `--authorization-mode=Node,RBAC`): allows, or gives no opinion and a reason. */
export type ChainedAuthorizer = (attributes: RequestAttributes) => { allowed: true } | { allowed: false; reason: string };

export async function enableAccessControl(server: ApiServer, dataDir: string, options: { before?: ChainedAuthorizer } = {}): Promise<AccessControl> {
  const { storage } = server;
  for (const object of [...BOOTSTRAP_CLUSTER_ROLES, ...BOOTSTRAP_CLUSTER_ROLE_BINDINGS]) {
    const key = `${RBAC_PREFIX}${object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}//${object.metadata.name}`;
    if (storage.get(key)) continue;
    const stored = structuredClone(object) as unknown as KubeObject;
    Object.assign(stored.metadata, { uid: randomUUID(), creationTimestamp: rfc3339() });
    // Another API server on the same etcd may create it at the same moment.
    await storage.create(key, stored).catch((e: Error) => {
      if ((e as { reason?: string }).reason !== 'AlreadyExists') throw e;
    });
  }

  const rbac = new RbacIndex();
  const listed = storage.list(RBAC_PREFIX);
  for (const item of listed.items) {
    const kind = kindOfKey(item.key);
    if (kind) rbac.upsert(kind, item.object as unknown as RoleObject | BindingObject);
  }
  const watcher = storage.watch(RBAC_PREFIX, listed.revision, (event) => {
    const kind = kindOfKey(event.key);
    if (!kind) return;
    if (event.type === 'DELETED') rbac.remove(kind, event.object.metadata.namespace, event.object.metadata.name ?? '');
    else rbac.upsert(kind, event.object as unknown as RoleObject | BindingObject);
  });
  // kube's union of authorizers (Node, then RBAC), as requests and access reviews see it; when
  // nobody allows, the reason is the earlier authorizer's, for the 403.
  const chained: Authorizes = {
    authorize(attributes) {
      const first = options.before?.(attributes);
      if (first?.allowed) return { allowed: true, reason: '' };
      const decision = rbac.authorize(attributes);
      return decision.allowed ? decision : { allowed: false, reason: first?.reason ?? '' };
    },
  };
  const authorize = (attributes: RequestAttributes): string | undefined => {
    const decision = chained.authorize(attributes);
    return decision.allowed ? undefined : forbiddenMessage(attributes, decision.reason);
  };
  server.setAuthorizer(authorize);

  const keys = loadOrCreateSigningKeys(join(dataDir, 'pki'));
  const lookupServiceAccount = (namespace: string, name: string) => {
    const uid = storage.get(`/core/serviceaccounts/${namespace}/${name}`)?.object.metadata.uid;
    return typeof uid === 'string' ? { uid } : undefined;
  };
  server.addAuthenticator((token) => {
    const result = authenticateToken(keys, token, { lookupServiceAccount });
    if (result.ok) return result.user;
    if (!result.notServiceAccountToken) log.info({ reason: result.reason }, 'service account token refused');
    return undefined;
  });

  const issueServiceAccountToken = (namespace: string, name: string, spec: TokenRequestSpec = {}) => {
    const sa = lookupServiceAccount(namespace, name);
    return sa ? issueToken(keys, { namespace, name, uid: sa.uid }, spec) : undefined;
  };
  server.addPostHandler(async (request) => answerPost(request, rbac, chained, issueServiceAccountToken, (token) => server.authenticateToken(token)));

  return {
    rbac, keys, issueServiceAccountToken, authorize,
    stop: () => watcher.stop(),
  };
}

const AUTHZ = 'authorization.k8s.io';
const AUTHN = 'authentication.k8s.io';

/**
 * A TokenReview (authentication.k8s.io/v1): who the token in `spec.token` is, through the same
 * authenticators as requests' bearer tokens (the admin token, service-account and bootstrap
 * tokens). An unknown or empty token is `authenticated: false` with an error, not a failed request.
 */
function tokenReview(body: Record<string, unknown>, authenticate: (token: string) => User | undefined): unknown {
  const spec = (body.spec ?? {}) as { token?: unknown; audiences?: unknown };
  const token = typeof spec.token === 'string' ? spec.token.trim() : '';
  const found = token ? authenticate(token) : undefined;
  const status = found
    ? { authenticated: true, user: { username: found.name, ...(found.uid ? { uid: found.uid } : {}), groups: found.groups }, audiences: Array.isArray(spec.audiences) ? spec.audiences : [] }
    : { authenticated: false, user: {}, error: token ? 'invalid bearer token' : 'spec.token is empty' };
  return { kind: 'TokenReview', apiVersion: `${AUTHN}/v1`, metadata: { ...(body.metadata ?? {}), creationTimestamp: null }, spec: { ...spec, token: undefined }, status };
}

async function answerPost(request: PostRequest, rbac: RbacIndex, chained: Authorizes,
  issue: (namespace: string, name: string, spec?: TokenRequestSpec) => IssuedToken | undefined,
  authenticate: (token: string) => User | undefined): Promise<{ code: number; body: unknown } | undefined> {
  const { user } = request;
  const created = { creationTimestamp: null };
  if (request.group === AUTHN && request.resource === 'tokenreviews' && !request.name) return { code: 201, body: tokenReview(request.body, authenticate) };
  // Who the caller is (`kubectl auth whoami`; the web console's signed-in user), answered in the
  // version asked for: kubectl 1.27 posts v1beta1 and cannot read a v1 answer.
  if (request.group === AUTHN && request.resource === 'selfsubjectreviews' && !request.name) {
    const userInfo = { username: user.name, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups, ...(user.extra ? { extra: user.extra } : {}) };
    return { code: 201, body: { kind: 'SelfSubjectReview', apiVersion: `${AUTHN}/${request.version}`, metadata: { ...(request.body.metadata ?? {}), ...created }, status: { userInfo } } };
  }
  if (request.group === '' && request.resource === 'serviceaccounts' && request.subresource === 'token' && request.name && request.namespace) {
    const spec = (request.body.spec ?? {}) as TokenRequestSpec;
    let issued: IssuedToken | undefined;
    try {
      issued = issue(request.namespace, request.name, spec);
    } catch (err) {
      if (err instanceof TokenRequestError) {
        throw errors.invalid('TokenRequest', 'authentication.k8s.io', request.name, [{ field: 'spec.expirationSeconds', message: err.message }]);
      }
      throw err;
    }
    if (!issued) throw errors.notFound('serviceaccounts', '', request.name);
    return {
      code: 201,
      body: {
        kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1',
        metadata: { name: request.name, namespace: request.namespace, ...created },
        spec: { audiences: issued.audiences, expirationSeconds: issued.expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
        status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
      },
    };
  }
  if (request.group !== AUTHZ || request.name) return undefined;
  // The review's spec as sent: the reviews read only the fields they know.
  const body = request.body;
  const spec = (body.spec ?? {}) as AccessReviewSpec & { namespace?: string };
  const answer = (kind: string, status: unknown) => ({
    code: 201, body: { kind, apiVersion: `${AUTHZ}/v1`, metadata: { ...(body.metadata ?? {}), ...created }, spec, status },
  });
  switch (request.resource) {
    case 'selfsubjectaccessreviews':
      return answer('SelfSubjectAccessReview', selfSubjectAccessReview(chained, user, spec));
    case 'selfsubjectrulesreviews':
      return answer('SelfSubjectRulesReview', selfSubjectRulesReview(rbac, user, spec));
    // The filter chain has authorized the create, as for every request.
    case 'subjectaccessreviews':
      return answer('SubjectAccessReview', subjectAccessReview(chained, spec));
    default:
      return undefined;
  }
}
