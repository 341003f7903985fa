// The Node authorizer and NodeRestriction as tables: what a kubelet's identity may read and write,
// against a graph of pods bound to nodes, with kube's reasons for what it may not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorizeNode, nodeIdentity, type NodeRequestAttributes } from '../../src/apiserver/nodes/node-authorizer.js';
import { NodeGraph, podReferences } from '../../src/apiserver/nodes/node-graph.js';
import { forbiddenNodeLabels, nodeRestrictionRefusal, type AdmissionLookups, type AdmissionRequest } from '../../src/apiserver/nodes/node-restriction.js';
import type * as api from '../../src/api/index.js';

const nodeA = { name: 'system:node:a', groups: ['system:nodes', 'system:authenticated'] };

const podOnA = {
  metadata: { namespace: 'ns', name: 'web' },
  spec: {
    nodeName: 'a', serviceAccountName: 'web-sa', imagePullSecrets: [{ name: 'pull' }],
    volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }, { name: 'tok', projected: { sources: [{ secret: { name: 'projected' } }] } }, { name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    containers: [{ name: 'c', env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'env-cm' } }] }],
  },
};
const podOnB = { metadata: { namespace: 'ns', name: 'db' }, spec: { nodeName: 'b', volumes: [{ name: 's', secret: { secretName: 'db-secret' } }] } } as api.Pod;

function graph(): NodeGraph {
  const g = new NodeGraph();
  g.upsertPod(podOnA);
  g.upsertPod(podOnB);
  return g;
}

function attrs(verb: string, resource: string, extra: Partial<NodeRequestAttributes> = {}): NodeRequestAttributes {
  return { user: nodeA, verb, resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource, subresource: '', namespace: '', name: '', path: '', ...extra };
}

test('a node identity is system:node:<name> in group system:nodes', () => {
  assert.equal(nodeIdentity(nodeA), 'a');
  assert.equal(nodeIdentity({ name: 'system:node:a', groups: ['system:authenticated'] }), undefined);
  assert.equal(nodeIdentity({ name: 'alice', groups: ['system:nodes'] }), undefined);
  assert.equal(nodeIdentity({ name: 'system:node:', groups: ['system:nodes'] }), '');
});

test('pod references: secrets, config maps, claims and the service account, from every place a pod names them', () => {
  const refs = podReferences(podOnA).map((r) => `${r.resource}/${r.name}`).sort();
  assert.deepEqual(refs, ['configmaps/cfg', 'configmaps/env-cm', 'persistentvolumeclaims/data', 'secrets/env-secret', 'secrets/projected', 'secrets/pull', 'serviceaccounts/web-sa']);
});

test('the Node authorizer allows what kube 1.33 allows a kubelet, and says why not otherwise', () => {
  const g = graph();
  const table: [string, NodeRequestAttributes, boolean, RegExp?][] = [
    ['get own Node', attrs('get', 'nodes', { name: 'a' }), true],
    ['watch own Node by name', attrs('watch', 'nodes', { name: 'a' }), true],
    ['get another Node', attrs('get', 'nodes', { name: 'b' }), false, /cannot read 'b', only its own Node object/],
    ['list all Nodes', attrs('list', 'nodes'), false, /cannot read all nodes/],
    ['create a Node (NodeRestriction narrows it)', attrs('create', 'nodes'), true],
    ['patch a Node (NodeRestriction narrows it)', attrs('patch', 'nodes', { name: 'b' }), true],
    ['patch Node status', attrs('patch', 'nodes', { name: 'a', subresource: 'status' }), true],
    ['delete own Node', attrs('delete', 'nodes', { name: 'a' }), false],
    ['list pods on itself', attrs('list', 'pods', { fieldSelector: 'spec.nodeName=a' }), true],
    ['watch pods on itself with == and another term', attrs('watch', 'pods', { fieldSelector: 'status.phase!=Failed,spec.nodeName==a' }), true],
    ['list pods on another node', attrs('list', 'pods', { fieldSelector: 'spec.nodeName=b' }), false, /spec.nodeName field selector/],
    ['list all pods', attrs('list', 'pods'), false, /spec.nodeName field selector/],
    ['get a pod bound to it', attrs('get', 'pods', { namespace: 'ns', name: 'web' }), true],
    ['get a pod bound elsewhere', attrs('get', 'pods', { namespace: 'ns', name: 'db' }), false, /no relationship found between node 'a'/],
    ['update status of a pod', attrs('update', 'pods', { namespace: 'ns', name: 'web', subresource: 'status' }), true],
    ['create a mirror pod', attrs('create', 'pods', { namespace: 'ns' }), true],
    ['update a pod', attrs('update', 'pods', { namespace: 'ns', name: 'web' }), false],
    ['get a secret of its pod', attrs('get', 'secrets', { namespace: 'ns', name: 'pull' }), true],
    ['watch a secret of its pod by name', attrs('watch', 'secrets', { namespace: 'ns', name: 'env-secret' }), true],
    ['get a secret of another node\'s pod', attrs('get', 'secrets', { namespace: 'ns', name: 'db-secret' }), false, /no relationship/],
    ['list secrets', attrs('list', 'secrets', { namespace: 'ns' }), false, /No Object name found/],
    ['update a secret of its pod', attrs('update', 'secrets', { namespace: 'ns', name: 'pull' }), false, /can only read resources of this type/],
    ['get a config map of its pod', attrs('get', 'configmaps', { namespace: 'ns', name: 'env-cm' }), true],
    ['get an unrelated config map', attrs('get', 'configmaps', { namespace: 'ns', name: 'other' }), false],
    ['get its pod\'s claim', attrs('get', 'persistentvolumeclaims', { namespace: 'ns', name: 'data' }), true],
    ['token for its pod\'s service account', attrs('create', 'serviceaccounts', { namespace: 'ns', name: 'web-sa', subresource: 'token' }), true],
    ['token for another service account', attrs('create', 'serviceaccounts', { namespace: 'ns', name: 'default', subresource: 'token' }), false, /no relationship/],
    ['get a service account', attrs('get', 'serviceaccounts', { namespace: 'ns', name: 'web-sa' }), false, /can only create tokens/],
    ['renew own Lease', attrs('update', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'a' }), true],
    ['create a Lease (NodeRestriction checks the name)', attrs('create', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease' }), true],
    ['renew another node\'s Lease', attrs('update', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'b' }), false, /same name as the requesting node/],
    ['a Lease elsewhere', attrs('get', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'default', name: 'a' }), false, /kube-node-lease/],
    ['list Leases', attrs('list', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease' }), false],
    ['list services', attrs('list', 'services'), true],
    ['create events', attrs('create', 'events', { namespace: 'ns' }), true],
    ['create a CSR', attrs('create', 'certificatesigningrequests', { apiGroup: 'certificates.k8s.io' }), true],
    ['approve a CSR', attrs('update', 'certificatesigningrequests', { apiGroup: 'certificates.k8s.io', name: 'x', subresource: 'approval' }), false],
    ['delete a deployment', attrs('delete', 'deployments', { apiGroup: 'apps', namespace: 'ns', name: 'd' }), false],
    ['not a node', { ...attrs('get', 'nodes', { name: 'a' }), user: { name: 'alice', groups: ['system:authenticated'] } }, false, /^$/],
    ['a node without a name', { ...attrs('get', 'nodes', { name: 'a' }), user: { name: 'system:node:', groups: ['system:nodes'] } }, false, /unknown node/],
  ];
  for (const [name, request, allowed, reason] of table) {
    const decision = authorizeNode(request, g);
    assert.equal(decision.allowed, allowed, name);
    if (!decision.allowed && reason) assert.match(decision.reason, reason, name);
  }
});

test('the graph follows pods as they move, change and go away', () => {
  const g = graph();
  assert.equal(g.related('a', 'secrets', 'ns', 'pull'), true);
  g.upsertPod({ ...podOnA, spec: { ...podOnA.spec, nodeName: 'b' } });
  assert.equal(g.related('a', 'secrets', 'ns', 'pull'), false);
  assert.equal(g.related('b', 'secrets', 'ns', 'pull'), true);
  // Two pods on one node share a secret: it stays readable until the last one goes.
  g.upsertPod({ metadata: { namespace: 'ns', name: 'other' }, spec: { nodeName: 'b', imagePullSecrets: [{ name: 'pull' }] } } as api.Pod);
  g.removePod('ns', 'web');
  assert.equal(g.related('b', 'secrets', 'ns', 'pull'), true);
  g.removePod('ns', 'other');
  assert.equal(g.related('b', 'secrets', 'ns', 'pull'), false);
  assert.equal(g.related('b', 'secrets', 'ns', 'db-secret'), true);
});

test('labels a node may set on itself: kubelet and OpenShift role labels, not node-restriction or other kubernetes.io ones', () => {
  assert.deepEqual(forbiddenNodeLabels({ 'kubernetes.io/hostname': 'a', 'node-role.kubernetes.io/worker': '', 'node.kubernetes.io/instance-type': 'm', 'example.com/team': 'x', 'foo.kubelet.kubernetes.io/x': 'y' }), []);
  assert.deepEqual(forbiddenNodeLabels({ 'node-restriction.kubernetes.io/pool': 'gold', 'kubernetes.io/custom': 'x', 'sub.k8s.io/y': 'z', 'node-role.kubernetes.io/infra': '' }),
    ['kubernetes.io/custom', 'node-restriction.kubernetes.io/pool', 'node-role.kubernetes.io/infra', 'sub.k8s.io/y']);
  // Removing or changing a protected label counts as modifying it; leaving it alone does not.
  assert.deepEqual(forbiddenNodeLabels({ 'node-restriction.kubernetes.io/pool': 'gold' }, { 'node-restriction.kubernetes.io/pool': 'gold' }), []);
  assert.deepEqual(forbiddenNodeLabels({}, { 'node-restriction.kubernetes.io/pool': 'gold' }), ['node-restriction.kubernetes.io/pool']);
});

test('NodeRestriction keeps a node to its own Node, Lease, pods and tokens', () => {
  const nodeObject = { metadata: { name: 'a', uid: 'uid-a', labels: { 'kubernetes.io/hostname': 'a' } }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } };
  const lookups: AdmissionLookups = {
    pod: (ns: string, name: string) => [podOnA, podOnB].map((p) => ({ ...p, metadata: { ...p.metadata, uid: `uid-${p.metadata.name}` } })).find((p) => p.metadata.namespace === ns && p.metadata.name === name) as api.Pod | undefined,
    node: (name: string) => (name === 'a' ? (nodeObject as api.Node) : undefined),
  };
  const mirror = (extra: Record<string, any> = {}) => ({
    metadata: { name: 'static-a', namespace: 'ns', annotations: { 'kubernetes.io/config.mirror': 'hash' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'a', uid: 'uid-a', controller: true }], ...extra.metadata },
    spec: { nodeName: 'a', containers: [{ name: 'c' }], ...extra.spec },
  });
  const req = (operation: AdmissionRequest['operation'], resource: string, extra: Partial<AdmissionRequest> = {}): AdmissionRequest => ({ user: nodeA, operation, group: '', resource, subresource: '', namespace: '', name: '', ...extra });
  const withLabels = (labels: Record<string, string>) => ({ ...nodeObject, metadata: { ...nodeObject.metadata, labels } });
  const table: [string, AdmissionRequest, RegExp | undefined][] = [
    ['register itself', req('CREATE', 'nodes', { name: 'a', object: withLabels({ 'node-role.kubernetes.io/worker': '' }) }), undefined],
    ['register with a node-restriction label', req('CREATE', 'nodes', { name: 'a', object: withLabels({ 'node-restriction.kubernetes.io/pool': 'gold' }) }), /not allowed to set the following labels: node-restriction.kubernetes.io\/pool/],
    ['register another node', req('CREATE', 'nodes', { name: 'b', object: { metadata: { name: 'b' } } }), /node "a" is not allowed to modify node "b"/],
    ['update its status', req('UPDATE', 'nodes', { name: 'a', subresource: 'status', object: { ...nodeObject, status: { phase: 'Running' } }, oldObject: nodeObject }), undefined],
    ['update another node', req('UPDATE', 'nodes', { name: 'b', object: {}, oldObject: {} as api.Unstructured }), /node "a" is not allowed to modify node "b"/],
    ['remove its taints', req('UPDATE', 'nodes', { name: 'a', object: { ...nodeObject, spec: {} }, oldObject: nodeObject }), /not allowed to modify taints/],
    ['add a node-restriction label', req('UPDATE', 'nodes', { name: 'a', object: withLabels({ 'kubernetes.io/hostname': 'a', 'node-restriction.kubernetes.io/x': 'y' }), oldObject: nodeObject }), /is not allowed to modify labels: node-restriction.kubernetes.io\/x/],
    ['change a kubelet label', req('UPDATE', 'nodes', { name: 'a', object: withLabels({ 'kubernetes.io/hostname': 'a2' }), oldObject: nodeObject }), undefined],
    ['set a configSource', req('UPDATE', 'nodes', { name: 'a', object: { ...nodeObject, spec: { ...nodeObject.spec, configSource: { configMap: {} } } }, oldObject: nodeObject }), /configSource/],
    ['its Lease', req('CREATE', 'leases', { group: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'a' }), undefined],
    ['another Lease', req('CREATE', 'leases', { group: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'b' }), /same name as the requesting node/],
    ['a mirror pod', req('CREATE', 'pods', { namespace: 'ns', name: 'static-a', object: mirror() }), undefined],
    ['a pod that is not a mirror pod', req('CREATE', 'pods', { namespace: 'ns', name: 'p', object: { metadata: { name: 'p' }, spec: { nodeName: 'a' } } }), /can only create mirror pods/],
    ['a mirror pod for another node', req('CREATE', 'pods', { namespace: 'ns', object: mirror({ spec: { nodeName: 'b' } }) }), /spec.nodeName set to itself/],
    ['a mirror pod with a secret', req('CREATE', 'pods', { namespace: 'ns', object: mirror({ spec: { nodeName: 'a', volumes: [{ name: 's', secret: { secretName: 'x' } }] } }) }), /can not create pods that reference secrets/],
    ['a mirror pod with a service account', req('CREATE', 'pods', { namespace: 'ns', object: mirror({ spec: { nodeName: 'a', serviceAccountName: 'default' } }) }), /reference a service account/],
    ['a mirror pod owned by a stale Node', req('CREATE', 'pods', { namespace: 'ns', object: mirror({ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'a', uid: 'old', controller: true }] } }) }), /UID mismatch/],
    ['status of its pod', req('UPDATE', 'pods', { namespace: 'ns', name: 'web', subresource: 'status', object: podOnA, oldObject: podOnA }), undefined],
    ['status of another node\'s pod', req('UPDATE', 'pods', { namespace: 'ns', name: 'db', subresource: 'status', object: podOnB, oldObject: podOnB }), /only update pod status for pods with spec.nodeName set to itself/],
    ['labels through pod status', req('UPDATE', 'pods', { namespace: 'ns', name: 'web', subresource: 'status', object: { ...podOnA, metadata: { ...podOnA.metadata, labels: { x: 'y' } } }, oldObject: podOnA }), /cannot update labels through pod status/],
    ['delete its pod', req('DELETE', 'pods', { namespace: 'ns', name: 'web', oldObject: podOnA }), undefined],
    ['delete another node\'s pod', req('DELETE', 'pods', { namespace: 'ns', name: 'db', oldObject: podOnB }), /can only delete pods with spec.nodeName set to itself/],
    ['update a pod', req('UPDATE', 'pods', { namespace: 'ns', name: 'web', object: podOnA, oldObject: podOnA }), /can only create and delete mirror pods/],
    ['evict another node\'s pod', req('CREATE', 'pods', { namespace: 'ns', name: 'db', subresource: 'eviction', object: {} }), /can only evict pods with spec.nodeName set to itself/],
    ['a token bound to its pod', req('CREATE', 'serviceaccounts', { namespace: 'ns', name: 'web-sa', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web' } } } }), undefined],
    ['a token bound to nothing', req('CREATE', 'serviceaccounts', { namespace: 'ns', name: 'web-sa', subresource: 'token', object: { spec: {} } }), /not bound to a pod/],
    ['a token bound to another node\'s pod', req('CREATE', 'serviceaccounts', { namespace: 'ns', name: 'x', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'db', uid: 'uid-db' } } } }), /different node/],
    ['a token bound to a recreated pod', req('CREATE', 'serviceaccounts', { namespace: 'ns', name: 'x', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'stale' } } } }), /does not match the UID in record/],
    ['anything from someone else', { ...req('DELETE', 'nodes', { name: 'b' }), user: { name: 'admin', groups: ['system:masters'] } }, undefined],
  ];
  for (const [name, request, expected] of table) {
    const refusal = nodeRestrictionRefusal(request, lookups);
    if (expected) assert.match(refusal ?? '', expected, name);
    else assert.equal(refusal, undefined, name);
  }
});
