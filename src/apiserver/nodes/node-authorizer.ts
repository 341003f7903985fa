// The Node authorizer (plugin/pkg/auth/authorizer/node), as kube-apiserver 1.33 runs it in front
// of RBAC: a kubelet's identity (`system:node:<name>` in group `system:nodes`) may read its own
// Node, the pods bound to it (by name, or listed with `spec.nodeName=<name>`) and the secrets,
// config maps, claims and service-account tokens those pods refer to; may write its own Lease
// in kube-node-lease; and otherwise has the static node rules (the `system:node` ClusterRole).
// Writes it lets through to Nodes and pods are narrowed by NodeRestriction (node-restriction.ts).
// Pure: attributes and the node graph in, a decision out.
import type { PolicyRule } from '../auth/rbac.js';
import { ruleAllows } from '../auth/rbac.js';
import type { RequestAttributes, UserInfo } from '../auth/request-attributes.js';
import { NODES_GROUP, NODE_USER_PREFIX } from '../certificates/signers.js';
import type { NodeRelations, RelatedResource } from './node-graph.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** The attributes the Node authorizer reads (the field selector of lists and watches among them). */
export type NodeRequestAttributes = RequestAttributes;

export type NodeDecision = { allowed: true } | { allowed: false; reason: string };

const READ = ['get', 'list', 'watch'];
const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs });

/** The static rules every node has (kube's bootstrappolicy.NodeRules; also the `system:node` ClusterRole). */
export const NODE_RULES: PolicyRule[] = [
  // Checking API access; these creates do not change anything.
  rule(['authentication.k8s.io'], ['tokenreviews'], ['create']),
  rule(['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews'], ['create']),
  // Services for pods' environment variables.
  rule([''], ['services'], READ),
  // Registration and status of the node's own Node (NodeRestriction keeps it to its own).
  rule([''], ['nodes'], ['create', 'get', 'list', 'watch']),
  rule([''], ['nodes/status'], ['update', 'patch']),
  rule([''], ['nodes'], ['update', 'patch']),
  rule([''], ['events'], ['create', 'update', 'patch']),
  rule([''], ['pods'], READ),
  // Mirror pods, pod status and evictions (NodeRestriction keeps them to pods bound to the node).
  rule([''], ['pods'], ['create', 'delete']),
  rule([''], ['pods/status'], ['update', 'patch']),
  rule([''], ['pods/eviction'], ['create']),
  // Secrets and config maps of its pods (the graph below narrows these).
  rule([''], ['secrets', 'configmaps'], READ),
  rule([''], ['persistentvolumeclaims', 'persistentvolumes'], ['get']),
  rule([''], ['persistentvolumeclaims/status'], ['get', 'update', 'patch']),
  // Its own client and serving certificates.
  rule(['certificates.k8s.io'], ['certificatesigningrequests'], ['create', 'get', 'list', 'watch']),
  rule(['coordination.k8s.io'], ['leases'], ['get', 'create', 'update', 'patch', 'delete']),
  rule([''], ['serviceaccounts/token'], ['create']),
  rule(['storage.k8s.io'], ['volumeattachments'], ['get']),
  rule(['storage.k8s.io'], ['csidrivers'], READ),
  rule(['storage.k8s.io'], ['csinodes'], ['get', 'create', 'update', 'patch', 'delete']),
  rule(['node.k8s.io'], ['runtimeclasses'], READ),
];

/** The node a user is, or undefined when it is not a node (kube's default NodeIdentifier). */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

/** Whether a field selector holds `field=value` (or `==`) among its terms. */
export function selectsField(selector: string | undefined, field: string, value: string): boolean {
  if (!selector) return false;
  return selector.split(/(?<!\\),/).some((term) => {
    const m = /^\s*([^=!\s]+)\s*==?\s*(.*?)\s*$/.exec(term);
    return m !== null && m[1] === field && m[2].replace(/\\(.)/g, '$1') === value;
  });
}

const deny = (reason: string): NodeDecision => ({ allowed: false, reason });
const ALLOW: NodeDecision = { allowed: true };

function related(graph: NodeRelations, node: string, resource: RelatedResource, attrs: NodeRequestAttributes): NodeDecision {
  if (attrs.name === '') return deny('No Object name found');
  return graph.related(node, resource, attrs.namespace, attrs.name) ? ALLOW : deny(`no relationship found between node '${node}' and this object`);
}

/** Reads of single secrets and config maps (get, or list/watch by name) related to the node. */
function readNamespaced(graph: NodeRelations, node: string, resource: RelatedResource, attrs: NodeRequestAttributes): NodeDecision {
  if (!READ.includes(attrs.verb)) return deny('can only read resources of this type');
  if (attrs.subresource !== '') return deny('cannot read subresource');
  if (attrs.namespace === '') return deny('can only read namespaced object of this type');
  return related(graph, node, resource, attrs);
}

function getOnly(graph: NodeRelations, node: string, resource: RelatedResource, attrs: NodeRequestAttributes): NodeDecision {
  if (attrs.verb !== 'get') return deny('can only get individual resources of this type');
  if (attrs.subresource !== '') return deny('cannot get subresource');
  return related(graph, node, resource, attrs);
}

function nodes(node: string, attrs: NodeRequestAttributes): NodeDecision {
  if (attrs.subresource === '') {
    // Writes are kept to the node's own object by NodeRestriction.
    if (['create', 'update', 'patch'].includes(attrs.verb)) return ALLOW;
    if (READ.includes(attrs.verb)) {
      // By name, not through the graph, so a kubelet can look for its Node before creating it.
      if (attrs.name === node) return ALLOW;
      return deny(attrs.name === '' ? `node '${node}' cannot read all nodes, only its own Node object` : `node '${node}' cannot read '${attrs.name}', only its own Node object`);
    }
  } else if (attrs.subresource === 'status' && ['update', 'patch'].includes(attrs.verb)) return ALLOW;
  return deny('');
}

function pods(graph: NodeRelations, node: string, attrs: NodeRequestAttributes): NodeDecision {
  switch (attrs.subresource) {
    case '':
      if (attrs.verb === 'get') return getOnly(graph, node, 'pods', attrs);
      if (attrs.verb === 'list' || attrs.verb === 'watch') {
        if (selectsField(attrs.fieldSelector, 'spec.nodeName', node)) return ALLOW;
        if (attrs.name !== '') return related(graph, node, 'pods', attrs);
        return deny('can only list/watch pods with spec.nodeName field selector');
      }
      // Mirror pods; NodeRestriction keeps them to pods bound to the node.
      if (attrs.verb === 'create' || attrs.verb === 'delete') return ALLOW;
      break;
    case 'status':
      if (attrs.verb === 'update' || attrs.verb === 'patch') return ALLOW;
      break;
    case 'eviction':
      if (attrs.verb === 'create') return ALLOW;
      break;
  }
  return deny('');
}

function serviceAccountTokens(graph: NodeRelations, node: string, attrs: NodeRequestAttributes): NodeDecision {
  if (attrs.verb !== 'create' || attrs.name === '') return deny('can only create tokens for individual service accounts');
  if (attrs.subresource !== 'token') return deny('can only create token subresource of serviceaccount');
  return related(graph, node, 'serviceaccounts', attrs);
}

function leases(node: string, attrs: NodeRequestAttributes): NodeDecision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)) return deny('can only get, create, update, patch, or delete a node lease');
  if (attrs.namespace !== NODE_LEASE_NAMESPACE) return deny(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  // On create the name is in the body; NodeRestriction checks it there.
  if (attrs.verb !== 'create' && attrs.name !== node) return deny('can only access node lease with the same name as the requesting node');
  return ALLOW;
}

/**
 * The Node authorizer's decision. A refusal is "no opinion" in kube's terms: the next authorizer
 * (RBAC) still decides; `reason` is what kube adds to the 403 when nothing allows the request.
 * Requests from users that are not nodes get no opinion and an empty reason.
 */
export function authorizeNode(attrs: NodeRequestAttributes, graph: NodeRelations): NodeDecision {
  const node = nodeIdentity(attrs.user);
  if (node === undefined) return deny('');
  if (node === '') return deny(`unknown node for user "${attrs.user.name}"`);
  if (attrs.resourceRequest) {
    const group = attrs.apiGroup;
    if (group === '') {
      switch (attrs.resource) {
        case 'secrets': return readNamespaced(graph, node, 'secrets', attrs);
        case 'configmaps': return readNamespaced(graph, node, 'configmaps', attrs);
        case 'persistentvolumeclaims':
          if (attrs.subresource === 'status') {
            if (attrs.verb !== 'update' && attrs.verb !== 'patch') return deny('can only get/update/patch this type');
            return related(graph, node, 'persistentvolumeclaims', attrs);
          }
          return getOnly(graph, node, 'persistentvolumeclaims', attrs);
        case 'serviceaccounts': return serviceAccountTokens(graph, node, attrs);
        case 'nodes': return nodes(node, attrs);
        case 'pods': return pods(graph, node, attrs);
      }
    }
    if (group === 'coordination.k8s.io' && attrs.resource === 'leases') return leases(node, attrs);
  }
  return NODE_RULES.some((r) => ruleAllows(attrs, r)) ? ALLOW : deny('');
}
