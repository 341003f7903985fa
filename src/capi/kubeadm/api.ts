// The words of Cluster API's kubeadm providers (bootstrap.cluster.x-k8s.io and
// controlplane.cluster.x-k8s.io, v1beta2) that the CRDs, the controllers, the CLI and the tests
// share: groups, resources, the Secrets of a workload cluster, condition types and reasons. The
// names are Cluster API's own (api/bootstrap/kubeadm/v1beta2, api/controlplane/kubeadm/v1beta2).
import { resources } from '../../kube/index.js';

export const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';
export const CONTROL_PLANE_GROUP = 'controlplane.cluster.x-k8s.io';
export const BOOTSTRAP_API_VERSION = `${BOOTSTRAP_GROUP}/v1beta2`;
export const CONTROL_PLANE_API_VERSION = `${CONTROL_PLANE_GROUP}/v1beta2`;

export const KUBEADM_CONFIGS = resources.kubeadmConfigs;
export const KUBEADM_CONFIG_TEMPLATES = resources.kubeadmConfigTemplates;
export const KUBEADM_CONTROL_PLANES = resources.kubeadmControlPlanes;

/** The type of every Secret Cluster API writes for a cluster (bootstrap data, certificates, kubeconfig). */
export const CLUSTER_SECRET_TYPE = 'cluster.x-k8s.io/secret';

/** A KubeadmConfig's `format`: bosun's machines boot from Ignition, its default. */
export const FORMAT = { cloudConfig: 'cloud-config', ignition: 'ignition' } as const;

/** The conditions a KubeadmConfig carries (api/bootstrap/kubeadm/v1beta2). */
export const KUBEADM_CONFIG_CONDITION = {
  ready: 'Ready',
  dataSecretAvailable: 'DataSecretAvailable',
  certificatesAvailable: 'CertificatesAvailable',
  paused: 'Paused',
} as const;

/** Reasons of DataSecretAvailable: Cluster API's, and bosun's for the waits it names. */
export const KUBEADM_CONFIG_REASON = {
  available: 'Available',
  notAvailable: 'NotAvailable',
  /** The spec is refused (an unsupported format, an unknown Kubernetes version, a failed validation). */
  invalidSpec: 'InvalidSpec',
  /** Cluster.spec.clusterNetwork names a range the local cloud's machines cannot serve. */
  invalidClusterNetwork: 'InvalidClusterNetwork',
  waitingForClusterInfrastructure: 'WaitingForClusterInfrastructure',
  waitingForControlPlaneInitialization: 'WaitingForControlPlaneInitialization',
  waitingForInitLock: 'WaitingForInitLock',
  waitingForCertificates: 'WaitingForCertificates',
  waitingForWorkloadCluster: 'WaitingForWorkloadCluster',
  internalError: 'InternalError',
} as const;

/** kubeadm's node-role label and taint of a control-plane node. */
export const CONTROL_PLANE_NODE_ROLE = 'node-role.kubernetes.io/control-plane';
