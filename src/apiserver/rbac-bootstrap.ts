// The RBAC objects the API server creates at first start (and adds when missing on later starts),
// as kube-apiserver's bootstrap policy does: `cluster-admin` for the group `system:masters` (the
// admin kubeconfig's identity); discovery, /version, health and OpenAPI plus self access reviews
// open to every authenticated user (`system:discovery`, `system:basic-user`,
// `system:public-info-viewer`, the last also to anonymous callers); and `/metrics` with the
// health checks for the group `system:monitoring` only. Every other non-resource URL (/metrics,
// /debug/*, /logs) needs a rule that names it.
import type { BindingObject, RoleObject } from './rbac.js';

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

function bindToGroups(name: string, groups: string[]): BindingObject & { apiVersion: string } {
  return {
    apiVersion: RBAC_API, kind: 'ClusterRoleBinding', metadata: bootstrapMetadata(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

export const BOOTSTRAP_CLUSTER_ROLES: (RoleObject & { apiVersion: string })[] = [
  clusterRole('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
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
  clusterRole('system:monitoring', [{
    nonResourceURLs: ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'],
    verbs: ['get'],
  }]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: (BindingObject & { apiVersion: string })[] = [
  bindToGroups('cluster-admin', ['system:masters']),
  bindToGroups('system:discovery', ['system:authenticated']),
  bindToGroups('system:basic-user', ['system:authenticated']),
  bindToGroups('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  bindToGroups('system:monitoring', ['system:monitoring']),
];
