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
//
// The user-facing roles, as kube bootstraps them: `admin`, `edit` and `view`, each an aggregate of
// the ClusterRoles labelled `rbac.authorization.k8s.io/aggregate-to-admin|edit|view: "true"`, with
// `edit` labelled aggregate-to-admin and `view` aggregate-to-edit (so admin ⊇ edit ⊇ view), and the
// parts kube gives them, `system:aggregate-to-admin|edit|view` (namespaced workloads, config,
// services; secrets from edit up, RBAC within a namespace for admin). Anything labelled joins them:
// the payload's metrics-server role does. bosun adds one part: `bosun:aggregate-to-view-cluster-api`,
// reading Cluster API's namespaced objects (clusters, machines, machine sets and deployments, health
// checks, control planes and infrastructure) — bosun's workload clusters live in tenants'
// namespaces, so a namespace viewer sees them (upstream Cluster API labels no role for view). The
// cluster-scoped kinds of config.openshift.io and machineconfiguration.openshift.io are left out:
// a role bound in a namespace cannot grant them, and OpenShift gives them to cluster-reader.
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

const AGGREGATE = (to: 'admin' | 'edit' | 'view') => ({ [`rbac.authorization.k8s.io/aggregate-to-${to}`]: 'true' });

/** An aggregated ClusterRole (its rules are those of the roles labelled aggregate-to-`to`), itself labelled `labels`. */
function aggregateRole(name: 'admin' | 'edit' | 'view', labels: Record<string, string> = {}): RoleObject & { apiVersion: string } {
  const role = clusterRole(name, []);
  delete role.rules;
  role.metadata.labels = { ...role.metadata.labels, ...labels };
  role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: AGGREGATE(name) }] };
  return role;
}

/** A part of an aggregate: rules labelled aggregate-to-`to`. */
function aggregatePart(name: string, to: 'admin' | 'edit' | 'view', rules: RoleObject['rules']): RoleObject & { apiVersion: string } {
  const role = clusterRole(name, rules);
  role.metadata.labels = { ...role.metadata.labels, ...AGGREGATE(to) };
  return role;
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

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
    { apiGroups: ['', 'apps', 'autoscaling', 'batch', 'discovery.k8s.io', 'coordination.k8s.io', 'events.k8s.io', 'policy', 'certificates.k8s.io'], resources: ['*'], verbs: ['*'] },
    // The horizontal pod autoscaler: any kind's scale, and the pods' usage from the metrics server.
    { apiGroups: ['*'], resources: ['*/scale'], verbs: ['get', 'update'] },
    { apiGroups: ['metrics.k8s.io'], resources: ['pods'], verbs: ['get', 'list'] },
    // The PersistentVolume binder reads classes (their binding mode and provisioner).
    { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
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
    // VolumeBinding writes the selected node on WaitForFirstConsumer claims (kube's system:volume-scheduler).
    { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['patch', 'update'] },
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
  aggregateRole('admin'),
  aggregateRole('edit', AGGREGATE('admin')),
  aggregateRole('view', AGGREGATE('edit')),
  aggregatePart('system:aggregate-to-admin', 'admin', [
    { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: [...READ, ...WRITE] },
  ]),
  aggregatePart('system:aggregate-to-edit', 'edit', [
    { apiGroups: [''], resources: ['secrets', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'services/proxy'], verbs: READ },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
    { apiGroups: [''], resources: ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], verbs: WRITE },
    { apiGroups: [''], resources: ['pods/eviction', 'serviceaccounts/token'], verbs: ['create'] },
    { apiGroups: [''], resources: ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy'], verbs: WRITE },
    { apiGroups: ['apps'], resources: ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'], verbs: WRITE },
    { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: WRITE },
    { apiGroups: ['batch'], resources: ['cronjobs', 'jobs'], verbs: WRITE },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: WRITE },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: WRITE },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, ...WRITE] },
  ]),
  aggregatePart('system:aggregate-to-view', 'view', [
    { apiGroups: [''], resources: ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status'], verbs: READ },
    { apiGroups: [''], resources: ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status'], verbs: READ },
    { apiGroups: [''], resources: ['namespaces'], verbs: READ },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ },
    { apiGroups: ['apps'], resources: ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status'], verbs: READ },
    { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], verbs: READ },
    { apiGroups: ['batch'], resources: ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], verbs: READ },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'], verbs: READ },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingresses/status', 'networkpolicies'], verbs: READ },
  ]),
  aggregatePart('bosun:aggregate-to-view-cluster-api', 'view', [
    { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'clusters/status', 'clusterclasses', 'machines', 'machines/status', 'machinesets', 'machinesets/status', 'machinesets/scale', 'machinedeployments', 'machinedeployments/status', 'machinedeployments/scale', 'machinepools', 'machinepools/status', 'machinehealthchecks', 'machinehealthchecks/status', 'machinedrainrules'], verbs: READ },
    { apiGroups: ['controlplane.cluster.x-k8s.io'], resources: ['kubeadmcontrolplanes', 'kubeadmcontrolplanes/status', 'kubeadmcontrolplanes/scale'], verbs: READ },
    { apiGroups: ['infrastructure.cluster.x-k8s.io'], resources: ['*'], verbs: READ },
  ]),
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
