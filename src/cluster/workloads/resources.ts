// The resources the workload controllers read and write, and the labels and annotations through
// which they talk to each other and to kubectl — the names kube-controller-manager uses, so that
// `kubectl rollout` and users' habits work unchanged. The resources are the toolkit catalogue's.
import { resources } from '../../kube/resources.js';

export const PODS = resources.pods;
export const SERVICES = resources.services;
export const ENDPOINTS = resources.endpoints;
export const ENDPOINT_SLICES = resources.endpointSlices;
export const NAMESPACES = resources.namespaces;
export const CONFIG_MAPS = resources.configMaps;
export const SECRETS = resources.secrets;
export const LEASES = resources.leases;
export const NODES = resources.nodes;
export const REPLICA_SETS = resources.replicaSets;
export const DEPLOYMENTS = resources.deployments;
export const DAEMON_SETS = resources.daemonSets;
export const STATEFUL_SETS = resources.statefulSets;
export const PERSISTENT_VOLUME_CLAIMS = resources.persistentVolumeClaims;
export const CONTROLLER_REVISIONS = resources.controllerRevisions;
export const JOBS = resources.jobs;
export const CRON_JOBS = resources.cronJobs;
export const HORIZONTAL_POD_AUTOSCALERS = resources.horizontalPodAutoscalers;
export const RESOURCE_QUOTAS = resources.resourceQuotas;

/** The label a DaemonSet or StatefulSet puts on its pods: which template revision made them. */
export const CONTROLLER_REVISION_HASH = 'controller-revision-hash';
/** The DaemonSet's generation when the pod was made (deprecated in kube, still written). */
export const POD_TEMPLATE_GENERATION = 'pod-template-generation';

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
/** Lower cost pods go first on scale-down (kube's PodDeletionCost). */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
