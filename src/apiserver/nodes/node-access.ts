// Wires node support into a running API server, as kube-apiserver runs it for kubelets: the node
// graph kept current from a watch on pods, the Node authorizer over it (chained in front of RBAC
// by access control), NodeRestriction on every write, deletion, eviction and TokenRequest by a
// node, and bootstrap-token authentication.
import { logger } from '../../common/log.js';
import { errors } from '../errors.js';
import type { ApiServer } from '../server.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { UserInfo } from '../auth/request-attributes.js';
import { authenticateBootstrapToken, BOOTSTRAP_TOKEN_SECRET_PREFIX } from './bootstrap-tokens.js';
import { NodeGraph } from './node-graph.js';
import { authorizeNode, nodeIdentity, type NodeDecision, type NodeRequestAttributes } from './node-authorizer.js';
import { admissionForbiddenMessage, nodeRestrictionRefusal, type AdmissionLookups, type AdmissionRequest } from './node-restriction.js';

const log = logger('node-access');
const PODS = '/core/pods/';

import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

export interface NodeAccess {
  /** The Node authorizer's decision on a request (chained before RBAC). */
  authorize(attributes: NodeRequestAttributes): NodeDecision;
  stop(): void;
}

export function enableNodeAccess(server: ApiServer): NodeAccess {
  const { storage, resources } = server;

  const graph = new NodeGraph();
  const listed = storage.list(PODS);
  for (const item of listed.items) graph.upsertPod(item.object);
  const watcher = storage.watch(PODS, listed.revision, (event) => {
    if (event.type === 'DELETED') graph.removePod(String(event.object.metadata.namespace), String(event.object.metadata.name));
    else graph.upsertPod(event.object);
  });

  server.addAuthenticator((token) => {
    const result = authenticateBootstrapToken(token, (id) => {
      const stored = storage.get(`/core/secrets/kube-system/${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`)?.object;
      return stored && asKind<api.Secret>(stored);
    });
    if (result.ok) return result.user;
    if (!result.notBootstrapToken) log.info({ reason: result.reason }, 'bootstrap token refused');
    return undefined;
  });

  const lookups: AdmissionLookups = {
    pod: (namespace, name) => {
      const stored = storage.get(`${PODS}${namespace}/${name}`)?.object;
      return stored && asKind<api.Pod>(stored);
    },
    node: (name) => {
      const stored = storage.get(`/core/nodes//${name}`)?.object;
      return stored && asKind<api.Node>(stored);
    },
  };
  const admit = (request: AdmissionRequest) => {
    const refusal = nodeRestrictionRefusal(request, lookups);
    if (refusal !== undefined) throw errors.forbidden(admissionForbiddenMessage(request, refusal));
  };
  const isNode = (user: UserInfo | undefined): user is UserInfo => user !== undefined && nodeIdentity(user) !== undefined;
  const base = (type: ResourceType, object: api.KubeObject, user: UserInfo) => ({
    user, group: type.group, resource: type.resource, namespace: String(object.metadata?.namespace ?? ''), name: String(object.metadata?.name ?? ''),
  });
  resources.addHooks({
    beforeWrite(type, object, previous, context) {
      if (!isNode(context.user)) return;
      admit({ ...base(type, object, context.user), operation: previous ? 'UPDATE' : 'CREATE', subresource: context.subresource ?? '', object, oldObject: previous });
    },
    beforeDelete(type, object, context) {
      if (!isNode(context.user)) return;
      admit({ ...base(type, object, context.user), operation: 'DELETE', subresource: '', oldObject: object });
    },
  });
  // Evictions and TokenRequests are POSTs answered beside the store: checked here, before the
  // handlers that answer them (this one never answers, it only refuses).
  server.addPostHandler(async (request) => {
    if (!isNode(request.user) || request.group !== '' || !request.subresource) return undefined;
    admit({
      user: request.user, operation: 'CREATE', group: '', resource: request.resource, subresource: request.subresource,
      namespace: request.namespace ?? '', name: request.name ?? '', object: request.body,
    });
    return undefined;
  });

  return {
    authorize: (attributes) => authorizeNode(attributes, graph),
    stop: () => watcher.stop(),
  };
}
