// The RBAC objects the API server creates at first start (and adds when missing on later starts),
// as kube-apiserver's bootstrap policy does: `cluster-admin` for the group `system:masters` (the
// admin kubeconfig's identity); discovery, /version, health and OpenAPI plus self access reviews
// open to every authenticated user (`system:discovery`, `system:basic-user`,
// `system:public-info-viewer`, the last also to anonymous callers); and `/metrics` with the
// health checks for the group `system:monitoring` only. Every other non-resource URL (/metrics,
// /debug/*, /logs) needs a rule that names it.
//
// For nodes: `system:node` (the Node authorizer's static rules), `system:node-bootstrapper` bound
// to `system:bootstrappers` (bootstrap tokens may create and watch CSRs, as kubeadm binds it),
// kube's CSR approval roles, `system:node-proxier` for kube-proxy, and `bosun:node-service-proxy`
// (endpoints and endpoint slices to list and watch) for `system:nodes`, because a bosun node
// agent also plays kube-proxy with the node's own credentials (services are in the node rules;
// nodes stay limited to their own Node by the Node authorizer). The users of kubeadm's
// controller-manager.conf and scheduler.conf, `system:kube-controller-manager` and
// `system:kube-scheduler`, get kube's role names; bosun's controller-manager runs its controllers
// with its own credentials (not per-controller service accounts), so its role covers what they
// all touch.
import type { BindingObject, RoleObject } from './rbac.js';
import { NODE_RULES } from '../nodes/node-authorizer.js';

const RBAC_API = 'rbac.authorization.k8s.io/v1';

function bootstrapMetadata(name: string): RoleObject['metadata'] {
  return {
    name,
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  };
}

function clusterRole(name: string, rules: RoleObject['rules']): RoleObject & { apiVersion: string } {
  return { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: bootstrapMetadata(name), rules };
}

function bindToGroups(name: string, groups: string[], users: string[] = []): BindingObject & { apiVersion: string } {
  return {
    apiVersion: RBAC_API, kind: 'ClusterRoleBinding', metadata: bootstrapMetadata(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [
      ...users.map((u) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: u })),
      ...groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
    ],
  };
}

const CSRS = { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'] };

export const BOOTSTRAP_CLUSTER_ROLES: (RoleObject & { apiVersion: string })[] = [
  clusterRole('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]),
  clusterRole('system:node', NODE_RULES),
  clusterRole('system:node-bootstrapper', [{ ...CSRS, verbs: ['create', 'get', 'list', 'watch'] }]),
  clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [{ ...CSRS, resources: ['certificatesigningrequests/nodeclient'], verbs: ['create'] }]),
  clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [{ ...CSRS, resources: ['certificatesigningrequests/selfnodeclient'], verbs: ['create'] }]),
  clusterRole('system:node-proxier', [
    { apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
  ]),
  clusterRole('bosun:node-service-proxy', [
    { apiGroups: [''], resources: ['endpoints'], verbs: ['list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
  ]),
  clusterRole('system:kubelet-api-admin', [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'proxy'] },
    { apiGroups: [''], resources: ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats'], verbs: ['*'] },
  ]),
  clusterRole('system:kube-controller-manager', [
    { apiGroups: ['', 'apps', 'batch', 'discovery.k8s.io', 'coordination.k8s.io', 'events.k8s.io', 'policy', 'certificates.k8s.io'], resources: ['*'], verbs: ['*'] },
    // The service CA injects its bundle into webhook configurations.
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:kube-scheduler', [
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'list', 'watch', 'update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
    { apiGroups: [''], resources: ['bindings', 'pods/binding'], verbs: ['create'] },
    { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
    { apiGroups: ['', 'apps', 'policy', 'storage.k8s.io'], resources: ['nodes', 'namespaces', 'services', 'replicationcontrollers', 'persistentvolumes', 'persistentvolumeclaims', 'replicasets', 'statefulsets', 'poddisruptionbudgets', 'csinodes', 'csidrivers', 'csistoragecapacities', 'storageclasses', 'volumeattachments'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:discovery', [{
    nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'],
    verbs: ['get'],
  }]),
  clusterRole('system:basic-user', [
    { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:public-info-viewer', [{
    nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'],
    verbs: ['get'],
  }]),
  // Delegated authentication and authorization (kube's `system:auth-delegator`): what a component
  // serving its own endpoints (metrics, webhooks) needs to ask the API server who a caller is and
  // what it may do.
  clusterRole('system:auth-delegator', [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:monitoring', [{
    nonResourceURLs: ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'],
    verbs: ['get'],
  }]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: (BindingObject & { apiVersion: string })[] = [
  bindToGroups('cluster-admin', ['system:masters']),
  bindToGroups('system:node-bootstrapper', ['system:bootstrappers']),
  bindToGroups('system:node-proxier', [], ['system:kube-proxy']),
  bindToGroups('bosun:node-service-proxy', ['system:nodes']),
  bindToGroups('system:discovery', ['system:authenticated']),
  bindToGroups('system:basic-user', ['system:authenticated']),
  bindToGroups('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  bindToGroups('system:monitoring', ['system:monitoring']),
  bindToGroups('system:kube-controller-manager', [], ['system:kube-controller-manager']),
  bindToGroups('system:kube-scheduler', [], ['system:kube-scheduler']),
];
