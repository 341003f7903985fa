// The resources the workload controllers read and write, and the labels and annotations through
// which they talk to each other and to kubectl — the names kube-controller-manager uses, so that
// `kubectl rollout` and users' habits work unchanged.
import type { ResourceRef } from '../../kube/index.js';

export const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true };
export const SERVICES: ResourceRef = { group: '', version: 'v1', resource: 'services', namespaced: true };
export const ENDPOINTS: ResourceRef = { group: '', version: 'v1', resource: 'endpoints', namespaced: true };
export const ENDPOINT_SLICES: ResourceRef = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespaced: true };
export const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };
export const CONFIG_MAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
export const LEASES: ResourceRef = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true };
export const NODES: ResourceRef = { group: '', version: 'v1', resource: 'nodes', namespaced: false };
export const REPLICA_SETS: ResourceRef = { group: 'apps', version: 'v1', resource: 'replicasets', namespaced: true };
export const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };
export const DAEMON_SETS: ResourceRef = { group: 'apps', version: 'v1', resource: 'daemonsets', namespaced: true };
export const CONTROLLER_REVISIONS: ResourceRef = { group: 'apps', version: 'v1', resource: 'controllerrevisions', namespaced: true };
export const JOBS: ResourceRef = { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true };

/** The label a Deployment adds to its ReplicaSets' selectors and templates. */
export const POD_TEMPLATE_HASH = 'pod-template-hash';
/** The label a DaemonSet puts on its pods: which template revision made them. */
export const CONTROLLER_REVISION_HASH = 'controller-revision-hash';
/** The DaemonSet's generation when the pod was made (deprecated in kube, still written). */
export const POD_TEMPLATE_GENERATION = 'pod-template-generation';

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
/** Lower cost pods go first on scale-down (kube's PodDeletionCost). */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
