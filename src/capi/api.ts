// The words of Cluster API (cluster.x-k8s.io/v1beta2) and of bosun's local infrastructure
// provider that the controllers, the CRDs and the tests share: labels, annotations, finalizers,
// condition types and reasons, phases, and small readers over the objects. The names are Cluster
// API's own (api/core/v1beta2), so its users' YAML and habits carry over.
import type * as api from '../api/index.js';
import { type Condition, findCondition, resources, setCondition } from '../kube/index.js';

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
  /**
   * When a machine's certificates expire (RFC 3339): on the Machine (set by a user, it wins) or on
   * its bootstrap config (KubeadmControlPlane writes it from the API server's serving certificate);
   * the Machine controller copies it to status.certificatesExpiryDate.
   */
  certificatesExpiry: 'machine.cluster.x-k8s.io/certificates-expiry',
  /** A machine whose node is not drained before it goes. */
  excludeNodeDraining: 'machine.cluster.x-k8s.io/exclude-node-draining',
  /** A Machine with an annotation of this prefix (`…/<owner>`) is not terminated until its owner takes it away (Cluster API's lifecycle hook). */
  preTerminateHookPrefix: 'pre-terminate.delete.hook.machine.cluster.x-k8s.io',
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

/** A condition as Cluster API's v1beta2 kinds carry it (metav1.Condition: reason and message required). */
export type CapiCondition = NonNullable<NonNullable<api.Machine['status']>['conditions']>[number];

/** A condition to set: setCapiCondition gives it its transition time. */
export type NewCapiCondition = Omit<CapiCondition, 'lastTransitionTime'>;

/**
 * `setCondition` for the conditions of a Cluster API kind: the update is a whole CapiCondition, and
 * setCondition keeps its fields and always sets lastTransitionTime, so the result is one too.
 */
export function setCapiCondition(conditions: readonly CapiCondition[] | undefined, update: NewCapiCondition, now: Date): CapiCondition[] {
  return setCondition(conditions, update, now) as CapiCondition[];
}

/** Anything with status conditions. */
interface WithConditions {
  status?: { conditions?: readonly Condition[] };
}

/** The machine's condition of a type, if any. */
export const machineCondition = (machine: api.Machine, type: string) => findCondition(machine.status?.conditions, type);
export const conditionIs = (object: WithConditions, type: string, status: string) => findCondition(object.status?.conditions, type)?.status === status;
export const isDeleting = (object: { metadata?: { deletionTimestamp?: string } }) => Boolean(object.metadata?.deletionTimestamp);
export const isControlPlane = (machine: api.Machine) => machine.metadata?.labels?.[LABEL.controlPlane] !== undefined;

/** `replicas` defaulted as Cluster API's webhook defaults it. */
export const desiredReplicas = (object: { spec?: { replicas?: number } }): number => object.spec?.replicas ?? 1;

/** The metadata of a Cluster API object for an Event's involvedObject (informer items carry kind). */
export const eventTarget = <T extends api.KubeObject>(object: T, kind: string, apiVersion = API_VERSION): T => ({ apiVersion, kind, ...object });

// Cluster API's provider contracts: what the core controllers read of an infrastructure provider's
// objects, whatever their kind (LocalCluster, LocalMachine, LocalMachineTemplate here). An object
// read through a contract reference is of a kind known only at run time; these are the fields the
// contract promises (api/core/v1beta2's InfraCluster, InfraMachine and InfraMachineTemplate).

/** The InfraCluster contract. */
export type InfraCluster = api.KubeObject & {
  spec?: { controlPlaneEndpoint?: { host?: string; port?: number } };
  status?: { initialization?: { provisioned?: boolean }; failureDomains?: NonNullable<api.Cluster['status']>['failureDomains']; conditions?: CapiCondition[] };
};

/** The InfraMachine contract. */
export type InfraMachine = api.KubeObject & {
  spec?: { providerID?: string };
  status?: {
    initialization?: { provisioned?: boolean };
    addresses?: NonNullable<api.Machine['status']>['addresses'];
    failureDomain?: string;
    conditions?: CapiCondition[];
  };
};

/** The InfraMachineTemplate contract: spec.template is cloned into an InfraMachine. */
export type InfraMachineTemplate = api.KubeObject & {
  spec?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> } };
};

/** The BootstrapConfig contract: a bootstrap provider's config (a KubeadmConfig) as the Machine controller reads it. */
export type BootstrapConfig = api.KubeObject & {
  status?: { initialization?: { dataSecretCreated?: boolean }; dataSecretName?: string; conditions?: CapiCondition[] };
};
