// Cluster API's kinds (cluster.x-k8s.io), its kubeadm providers' (bootstrap. and
// controlplane.cluster.x-k8s.io) and bosun's local infrastructure provider's
// (infrastructure.cluster.x-k8s.io), from the types generated out of their CRDs (src/api/generated).
import type * as capi from './generated/cluster-x-k8s-io.js';
import type * as infra from './generated/infrastructure-cluster-x-k8s-io.js';
import type * as bootstrap from './generated/bootstrap-cluster-x-k8s-io.js';
import type * as controlplane from './generated/controlplane-cluster-x-k8s-io.js';
import type { Kind } from './meta.js';

export type Cluster = Kind<capi.ClusterBody>;
export type Machine = Kind<capi.MachineBody>;
export type MachineSet = Kind<capi.MachineSetBody>;
export type MachineDeployment = Kind<capi.MachineDeploymentBody>;
export type MachineHealthCheck = Kind<capi.MachineHealthCheckBody>;
export type MachineTemplateSpec = capi.MachineSetBody['spec']['template'];

export type LocalCluster = Kind<infra.LocalClusterBody>;
export type LocalMachine = Kind<infra.LocalMachineBody>;
export type LocalMachineTemplate = Kind<infra.LocalMachineTemplateBody>;

export type KubeadmConfig = Kind<bootstrap.KubeadmConfigBody>;
export type KubeadmConfigTemplate = Kind<bootstrap.KubeadmConfigTemplateBody>;
export type KubeadmConfigSpec = NonNullable<bootstrap.KubeadmConfigBody['spec']>;
export type KubeadmControlPlane = Kind<controlplane.KubeadmControlPlaneBody>;
