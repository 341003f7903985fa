// RBAC: request attributes from URLs, rule evaluation (the cloud-controller-manager ClusterRole from
// the Kubernetes documentation as the model), binding scope, Forbidden wording, bootstrap policy,
// access reviews and changes taking effect at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestAttributes, type UserInfo } from '../../src/apiserver/auth/request-attributes.js';
import { RbacIndex, forbiddenMessage, forbiddenStatus, type RoleObject, type BindingObject } from '../../src/apiserver/auth/rbac.js';
import { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS } from '../../src/apiserver/auth/rbac-bootstrap.js';
import { selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview } from '../../src/apiserver/auth/access-review.js';

const CCM_ROLE: RoleObject = {
  kind: 'ClusterRole', metadata: { name: 'cloud-controller-manager' },
  rules: [
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    { apiGroups: [''], resources: ['nodes'], verbs: ['*'] },
    { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
    { apiGroups: [''], resources: ['services'], verbs: ['list', 'patch', 'update', 'watch'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create'] },
    { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'update', 'watch'] },
    { apiGroups: [''], resources: ['endpoints'], verbs: ['create', 'get', 'list', 'watch', 'update'] },
  ],
};
const CCM_BINDING: BindingObject = {
  kind: 'ClusterRoleBinding', metadata: { name: 'system:cloud-controller-manager' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cloud-controller-manager' },
  subjects: [{ kind: 'ServiceAccount', name: 'cloud-controller-manager', namespace: 'kube-system' }],
};
const CCM_USER: UserInfo = {
  name: 'system:serviceaccount:kube-system:cloud-controller-manager',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
};

function indexWith(...objects: (RoleObject | BindingObject)[]): RbacIndex {
  const index = new RbacIndex();
  for (const o of [...BOOTSTRAP_CLUSTER_ROLES, ...BOOTSTRAP_CLUSTER_ROLE_BINDINGS, ...objects]) {
    index.upsert(o.kind as 'Role', o);
  }
  return index;
}

test('HTTP method and URL become kube request attributes', () => {
  const u: UserInfo = { name: 'bob', groups: [] };
  const table: [string, string, Partial<ReturnType<typeof requestAttributes>>][] = [
    ['GET', '/api/v1/namespaces/default/pods', { verb: 'list', resource: 'pods', namespace: 'default', name: '' }],
    ['GET', '/api/v1/namespaces/default/pods?watch=1', { verb: 'watch', resource: 'pods' }],
    ['GET', '/api/v1/pods?watch=true&fieldSelector=metadata.name%3Dp', { verb: 'watch', name: 'p', namespace: '' }],
    ['GET', '/api/v1/namespaces/default/pods/p', { verb: 'get', name: 'p' }],
    ['PATCH', '/api/v1/namespaces/default/pods/p/status', { verb: 'patch', subresource: 'status', name: 'p' }],
    ['POST', '/api/v1/namespaces/default/pods/p/eviction', { verb: 'create', subresource: 'eviction' }],
    ['POST', '/apis/apps/v1/namespaces/ns/deployments', { verb: 'create', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments' }],
    ['PUT', '/apis/apps/v1/namespaces/ns/deployments/d/scale', { verb: 'update', subresource: 'scale' }],
    ['DELETE', '/api/v1/namespaces/ns/pods', { verb: 'deletecollection' }],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', { verb: 'delete', name: 'p' }],
    ['GET', '/api/v1/namespaces/ns', { verb: 'get', resource: 'namespaces', name: 'ns', namespace: 'ns' }],
    ['PUT', '/api/v1/namespaces/ns/finalize', { verb: 'update', resource: 'namespaces', subresource: 'finalize', namespace: 'ns' }],
    ['GET', '/api/v1/nodes', { verb: 'list', resource: 'nodes', namespace: '' }],
    ['GET', '/api/v1/watch/namespaces/ns/pods', { verb: 'watch', resource: 'pods', namespace: 'ns' }],
    ['GET', '/version', { resourceRequest: false, verb: 'get', path: '/version' }],
    ['GET', '/apis/apps/v1', { resourceRequest: false, path: '/apis/apps/v1' }],
    ['GET', '/api/v1', { resourceRequest: false }],
  ];
  for (const [method, url, want] of table) {
    const got = requestAttributes(u, method, url);
    for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof typeof got], v, `${method} ${url}: ${k}`);
  }
});

test('the cloud-controller-manager ClusterRole grants exactly what it lists', () => {
  const index = indexWith(CCM_ROLE, CCM_BINDING);
  const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
  const granted: Record<string, string[]> = {
    events: ['create', 'patch', 'update'], nodes: verbs, 'nodes/status': ['patch'],
    services: ['list', 'patch', 'update', 'watch'], serviceaccounts: ['create'],
    persistentvolumes: ['get', 'list', 'update', 'watch'], endpoints: ['create', 'get', 'list', 'watch', 'update'],
  };
  const resources = [...Object.keys(granted), 'pods', 'secrets', 'configmaps', 'services/status', 'nodes/proxy', 'serviceaccounts/token'];
  for (const res of resources) {
    const [resource, subresource = ''] = res.split('/');
    for (const verb of verbs) {
      for (const namespace of ['', 'default']) {
        const attrs = { user: CCM_USER, verb, resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource, subresource, namespace, name: 'x', path: '' };
        const want = (granted[res] ?? []).includes(verb);
        assert.equal(index.authorize(attrs).allowed, want, `${verb} ${res} ns=${namespace}`);
      }
    }
  }
  // Same resource names in another group are not granted.
  const appsNodes = requestAttributes(CCM_USER, 'GET', '/apis/apps/v1/deployments');
  assert.equal(index.authorize(appsNodes).allowed, false);
  // Another service account is not the subject.
  const other = { ...CCM_USER, name: 'system:serviceaccount:default:cloud-controller-manager' };
  assert.equal(index.authorize(requestAttributes(other, 'GET', '/api/v1/nodes')).allowed, false);
  // Discovery is open to it as an authenticated user; other paths are not.
  assert.equal(index.authorize(requestAttributes(CCM_USER, 'GET', '/apis/apps/v1')).allowed, true);
  assert.equal(index.authorize(requestAttributes(CCM_USER, 'GET', '/openapi/v3/apis/apps/v1')).allowed, true);
  assert.equal(index.authorize(requestAttributes(CCM_USER, 'GET', '/metrics')).allowed, false);
  assert.equal(
    forbiddenMessage(requestAttributes(CCM_USER, 'DELETE', '/api/v1/namespaces/kube-system/pods/p')),
    'pods "p" is forbidden: User "system:serviceaccount:kube-system:cloud-controller-manager" cannot delete resource "pods" in API group "" in the namespace "kube-system"',
  );
});

test('Forbidden messages use Kubernetes wording for every shape of request', () => {
  const bob: UserInfo = { name: 'bob', groups: ['system:authenticated'] };
  const table: [string, string, string][] = [
    ['GET', '/api/v1/namespaces/default/pods/p', 'pods "p" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "default"'],
    ['GET', '/api/v1/namespaces/default/pods', 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"'],
    ['GET', '/api/v1/nodes/n1', 'nodes "n1" is forbidden: User "bob" cannot get resource "nodes" in API group "" at the cluster scope'],
    ['POST', '/api/v1/namespaces/default/pods/p/eviction', 'pods "p" is forbidden: User "bob" cannot create resource "pods/eviction" in API group "" in the namespace "default"'],
    ['GET', '/apis/apps/v1/deployments', 'deployments.apps is forbidden: User "bob" cannot list resource "deployments" in API group "apps" at the cluster scope'],
    ['GET', '/metrics', 'forbidden: User "bob" cannot get path "/metrics"'],
  ];
  const index = indexWith();
  for (const [method, url, message] of table) {
    const attrs = requestAttributes(bob, method, url);
    assert.equal(index.authorize(attrs).allowed, false, url);
    assert.equal(forbiddenMessage(attrs), message);
  }
  const status = forbiddenStatus(requestAttributes(bob, 'GET', '/apis/apps/v1/namespaces/x/deployments/d'));
  assert.deepEqual(status.details, { name: 'd', group: 'apps', kind: 'deployments' });
  assert.equal(status.code, 403);
  assert.equal(status.reason, 'Forbidden');
});

test('system:masters is cluster-admin everywhere, including non-resource URLs', () => {
  const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const index = indexWith();
  for (const [m, u] of [['DELETE', '/api/v1/nodes/n'], ['POST', '/apis/x.io/v1/namespaces/a/things/t/status'], ['GET', '/metrics']]) {
    assert.equal(index.authorize(requestAttributes(admin, m, u)).allowed, true, u);
  }
  assert.equal(index.authorize(requestAttributes({ name: 'admin', groups: [] }, 'GET', '/api/v1/pods')).allowed, false);
});

test('a RoleBinding grants only in its namespace, even for a ClusterRole; wildcards, subresources, names', () => {
  const reader: RoleObject = {
    kind: 'ClusterRole', metadata: { name: 'reader' },
    rules: [
      { apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'], resourceNames: ['web'] },
      { nonResourceURLs: ['/logs/*', '/exact'], verbs: ['get'] },
    ],
  };
  const local: RoleObject = { kind: 'Role', metadata: { name: 'pods', namespace: 'team' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] };
  const rb1: BindingObject = { kind: 'RoleBinding', metadata: { name: 'r', namespace: 'team' }, roleRef: { kind: 'ClusterRole', name: 'reader' }, subjects: [{ kind: 'Group', name: 'devs' }] };
  const rb2: BindingObject = { kind: 'RoleBinding', metadata: { name: 'p', namespace: 'team' }, roleRef: { kind: 'Role', name: 'pods' }, subjects: [{ kind: 'User', name: 'bob' }] };
  const index = indexWith(reader, local, rb1, rb2);
  const bob: UserInfo = { name: 'bob', groups: ['devs'] };
  const table: [string, string, boolean][] = [
    ['/api/v1/namespaces/team/pods/p/status', 'GET', true],
    ['/api/v1/namespaces/other/pods/p/status', 'GET', false],
    ['/api/v1/nodes/n/status', 'GET', false],
    ['/api/v1/namespaces/team/pods/p', 'GET', false],
    ['/apis/apps/v1/namespaces/team/deployments/web', 'GET', true],
    ['/apis/apps/v1/namespaces/team/deployments/api', 'GET', false],
    ['/api/v1/namespaces/team/pods', 'GET', true],
    ['/api/v1/namespaces/other/pods', 'GET', false],
    ['/logs/x/y', 'GET', false], // RoleBindings never grant non-resource URLs
  ];
  for (const [url, method, want] of table) assert.equal(index.authorize(requestAttributes(bob, method, url)).allowed, want, url);

  const crb: BindingObject = { kind: 'ClusterRoleBinding', metadata: { name: 'r' }, roleRef: { kind: 'ClusterRole', name: 'reader' }, subjects: [{ kind: 'User', name: 'bob' }] };
  index.upsert('ClusterRoleBinding', crb);
  assert.equal(index.authorize(requestAttributes(bob, 'GET', '/logs/x/y')).allowed, true);
  assert.equal(index.authorize(requestAttributes(bob, 'GET', '/exact')).allowed, true);
  assert.equal(index.authorize(requestAttributes(bob, 'GET', '/exact/more')).allowed, false);
  assert.equal(index.authorize(requestAttributes(bob, 'GET', '/api/v1/nodes/n/status')).allowed, true);
  // Removing or changing objects takes effect immediately.
  index.remove('ClusterRoleBinding', undefined, 'r');
  assert.equal(index.authorize(requestAttributes(bob, 'GET', '/exact')).allowed, false);
  index.upsert('Role', { ...local, rules: [] });
  assert.equal(index.authorize(requestAttributes(bob, 'GET', '/api/v1/namespaces/team/pods')).allowed, false);
});

test('aggregated ClusterRoles take the rules of the roles their selectors match', () => {
  const agg: RoleObject = { kind: 'ClusterRole', metadata: { name: 'view' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'agg/view': 'true' } }] }, rules: [] };
  const part: RoleObject = { kind: 'ClusterRole', metadata: { name: 'part', labels: { 'agg/view': 'true' } }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] };
  const b: BindingObject = { kind: 'ClusterRoleBinding', metadata: { name: 'v' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'eve' }] };
  const index = indexWith(agg, b);
  const eve: UserInfo = { name: 'eve', groups: [] };
  const attrs = requestAttributes(eve, 'GET', '/api/v1/namespaces/a/configmaps/c');
  assert.equal(index.authorize(attrs).allowed, false);
  index.upsert('ClusterRole', part);
  assert.equal(index.authorize(attrs).allowed, true);
});

test('built-in admin, edit and view: bound in one namespace, each a superset of the next, and labelled roles join them', () => {
  const bind = (user: string, role: string): BindingObject => ({ kind: 'RoleBinding', metadata: { name: `${user}-${role}`, namespace: 'team' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: user }] });
  const index = indexWith(bind('vera', 'view'), bind('eddie', 'edit'), bind('ada', 'admin'));
  const can = (user: string, method: string, path: string) => index.authorize(requestAttributes({ name: user, groups: ['system:authenticated'] }, method, path)).allowed;
  const table: [string, string, boolean, boolean, boolean][] = [
    // method, path, view, edit, admin
    ['GET', '/api/v1/namespaces/team/pods', true, true, true],
    ['GET', '/apis/apps/v1/namespaces/team/deployments?watch=1', true, true, true],
    ['GET', '/api/v1/namespaces/team/pods/p/log', true, true, true],
    ['GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/team/machinedeployments', true, true, true],
    ['GET', '/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/team/localclusters', true, true, true],
    ['GET', '/api/v1/namespaces/team/secrets', false, true, true],
    ['POST', '/apis/apps/v1/namespaces/team/deployments', false, true, true],
    ['PATCH', '/apis/cluster.x-k8s.io/v1beta2/namespaces/team/machinedeployments/md', false, false, false],
    ['POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', false, false, true],
    ['GET', '/api/v1/namespaces/other/pods', false, false, false],
    ['GET', '/api/v1/nodes', false, false, false],
    ['GET', '/apis/config.openshift.io/v1/clusterversions', false, false, false],
  ];
  for (const [method, path, view, edit, admin] of table) {
    assert.deepEqual([can('vera', method, path), can('eddie', method, path), can('ada', method, path)], [view, edit, admin], `${method} ${path}`);
  }
  // A role labelled aggregate-to-view reaches view, and through the aggregates edit and admin.
  index.upsert('ClusterRole', { kind: 'ClusterRole', metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: ['demo.bosun.io'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }] });
  for (const user of ['vera', 'eddie', 'ada']) assert.equal(can(user, 'GET', '/apis/demo.bosun.io/v1/namespaces/team/widgets'), true, user);
  // Aggregates that select each other do not loop.
  index.upsert('ClusterRole', { kind: 'ClusterRole', metadata: { name: 'loop', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }] } });
  assert.equal(can('vera', 'GET', '/api/v1/namespaces/team/pods'), true);
  assert.equal(can('vera', 'GET', '/api/v1/namespaces/team/secrets'), true, 'view now aggregates loop, which aggregates edit\'s parts');
});

test('access reviews answer as the authorizer does', () => {
  const index = indexWith(CCM_ROLE, CCM_BINDING);
  const yes = selfSubjectAccessReview(index, CCM_USER, { resourceAttributes: { verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n' } });
  assert.equal(yes.allowed, true);
  assert.match(yes.reason ?? '', /ClusterRoleBinding "system:cloud-controller-manager" of ClusterRole "cloud-controller-manager"/);
  assert.equal(selfSubjectAccessReview(index, CCM_USER, { resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'x' } }).allowed, false);
  assert.equal(subjectAccessReview(index, { user: CCM_USER.name, groups: CCM_USER.groups, resourceAttributes: { verb: 'create', resource: 'serviceaccounts', namespace: 'x' } }).allowed, true);
  assert.equal(subjectAccessReview(index, { user: 'nobody', nonResourceAttributes: { verb: 'get', path: '/version' } }).allowed, false);
  assert.equal(subjectAccessReview(index, { user: 'nobody', groups: ['system:authenticated'], nonResourceAttributes: { verb: 'get', path: '/version' } }).allowed, true);
  assert.ok(subjectAccessReview(index, { user: 'x' }).evaluationError);

  const rules = selfSubjectRulesReview(index, CCM_USER, { namespace: 'default' });
  assert.equal(rules.incomplete, false);
  assert.ok(rules.resourceRules.some((r) => r.resources?.includes('nodes/status') && r.verbs.includes('patch')));
  assert.ok(rules.resourceRules.some((r) => r.resources?.includes('selfsubjectaccessreviews')));
  assert.ok(rules.nonResourceRules.some((r) => r.nonResourceURLs.includes('/version')));
  assert.equal(rules.resourceRules.length, CCM_ROLE.rules!.length + 2);
});

test('the controller manager may read StorageClasses and write volumes and claims (the PersistentVolume binder)', () => {
  const index = indexWith();
  const manager: UserInfo = { name: 'system:kube-controller-manager', groups: ['system:authenticated'] };
  const table: [string, string, boolean][] = [
    ['GET', '/apis/storage.k8s.io/v1/storageclasses?watch=1', true],
    ['DELETE', '/apis/storage.k8s.io/v1/storageclasses/fast', false],
    ['PUT', '/api/v1/persistentvolumes/pv1/status', true],
    ['PATCH', '/api/v1/namespaces/a/persistentvolumeclaims/c', true],
  ];
  for (const [method, url, want] of table) assert.equal(index.authorize(requestAttributes(manager, method, url)).allowed, want, `${method} ${url}`);
});

test('the scheduler may read storage and write the selected node on claims (VolumeBinding), nothing more of them', () => {
  const index = indexWith();
  const scheduler: UserInfo = { name: 'system:kube-scheduler', groups: ['system:authenticated'] };
  const table: [string, string, boolean][] = [
    ['GET', '/apis/storage.k8s.io/v1/storageclasses?watch=1', true],
    ['GET', '/api/v1/persistentvolumes?watch=1', true],
    ['PATCH', '/api/v1/namespaces/a/persistentvolumeclaims/c', true],
    ['DELETE', '/api/v1/namespaces/a/persistentvolumeclaims/c', false],
    ['PUT', '/api/v1/persistentvolumes/pv1', false],
  ];
  for (const [method, url, want] of table) assert.equal(index.authorize(requestAttributes(scheduler, method, url)).allowed, want, `${method} ${url}`);
});
