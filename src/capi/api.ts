// The words of Cluster API (cluster.x-k8s.io/v1beta2) and of bosun's local infrastructure
// provider that the controllers, the CRDs and the tests share: labels, annotations, finalizers,
// condition types and reasons, phases, and small readers over the objects. The names are Cluster
// API's own (api/core/v1beta2), so its users' YAML and habits carry over.
import { type Obj, findCondition, resources } from '../kube/index.js';

export const GROUP = 'cluster.x-k8s.io';
export const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
export const API_VERSION = `${GROUP}/v1beta2`;
export const INFRA_API_VERSION = `${INFRA_GROUP}/v1beta2`;

/** Where OpenShift runs Cluster API and keeps its machines. */
export const CLUSTER_API_NAMESPACE = 'openshift-cluster-api';
/** Where the MCO writes the Machine API's user data Secrets. */
export const MACHINE_API_NAMESPACE = 'openshift-machine-api';

export const CLUSTERS = resources.clusters;
export const MACHINES = resources.machines;
export const MACHINE_SETS = resources.machineSets;
export const MACHINE_DEPLOYMENTS = resources.machineDeployments;
export const MACHINE_HEALTH_CHECKS = resources.machineHealthChecks;
export const LOCAL_CLUSTERS = resources.localClusters;
export const LOCAL_MACHINES = resources.localMachines;

export const LABEL = {
  clusterName: 'cluster.x-k8s.io/cluster-name',
  controlPlane: 'cluster.x-k8s.io/control-plane',
  setName: 'cluster.x-k8s.io/set-name',
  deploymentName: 'cluster.x-k8s.io/deployment-name',
  templateHash: 'machine-template-hash',
} as const;

export const ANNOTATION = {
  /** Picks a machine to go first when its MachineSet scales down. */
  deleteMachine: 'cluster.x-k8s.io/delete-machine',
  /** A machine whose node is not drained before it goes. */
  excludeNodeDraining: 'machine.cluster.x-k8s.io/exclude-node-draining',
  /** A MachineHealthCheck treats the machine as unhealthy. */
  remediateMachine: 'cluster.x-k8s.io/remediate-machine',
  /** A MachineHealthCheck leaves the machine alone. */
  skipRemediation: 'cluster.x-k8s.io/skip-remediation',
  revision: 'machinedeployment.clusters.x-k8s.io/revision',
  desiredReplicas: 'machinedeployment.clusters.x-k8s.io/desired-replicas',
  clonedFromName: 'cluster.x-k8s.io/cloned-from-name',
  clonedFromGroupKind: 'cluster.x-k8s.io/cloned-from-groupkind',
  /** On a Node: the Machine behind it, as namespace/name parts. */
  machine: 'cluster.x-k8s.io/machine',
  clusterNamespace: 'cluster.x-k8s.io/cluster-namespace',
  ownerKind: 'cluster.x-k8s.io/owner-kind',
  ownerName: 'cluster.x-k8s.io/owner-name',
  paused: 'cluster.x-k8s.io/paused',
} as const;

export const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
export const LOCAL_MACHINE_FINALIZER = 'localmachine.infrastructure.cluster.x-k8s.io';

export const CONDITION = {
  ready: 'Ready',
  available: 'Available',
  upToDate: 'UpToDate',
  bootstrapConfigReady: 'BootstrapConfigReady',
  infrastructureReady: 'InfrastructureReady',
  nodeReady: 'NodeReady',
  nodeHealthy: 'NodeHealthy',
  deleting: 'Deleting',
  healthCheckSucceeded: 'HealthCheckSucceeded',
  ownerRemediated: 'OwnerRemediated',
  remediationAllowed: 'RemediationAllowed',
  scalingUp: 'ScalingUp',
  scalingDown: 'ScalingDown',
  rollingOut: 'RollingOut',
  machinesReady: 'MachinesReady',
} as const;

export type MachinePhase = 'Pending' | 'Provisioning' | 'Provisioned' | 'Running' | 'Deleting' | 'Failed';

/** The machine's condition of a type, if any. */
export const machineCondition = (machine: Obj, type: string) => findCondition(machine.status?.conditions, type);
export const conditionIs = (object: Obj, type: string, status: string) => findCondition(object.status?.conditions, type)?.status === status;
export const isDeleting = (object: Obj) => Boolean(object.metadata?.deletionTimestamp);
export const isControlPlane = (machine: Obj) => machine.metadata?.labels?.[LABEL.controlPlane] !== undefined;

/** `replicas` defaulted as Cluster API's webhook defaults it. */
export const desiredReplicas = (object: Obj): number => object.spec?.replicas ?? 1;

/** The metadata of a Cluster API object for an Event's involvedObject (informer items carry kind). */
export const eventTarget = (object: Obj, kind: string, apiVersion = API_VERSION): Obj => ({ apiVersion, kind, ...object });
