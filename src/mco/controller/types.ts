// The machineconfiguration.openshift.io/v1 objects the machine-config controller reads and writes
// (MachineConfig, MachineConfigPool, ControllerConfig, KubeletConfig) and the Node fields it uses,
// typed as far as the controller needs them; the annotation and label keys OpenShift uses.
import type { MetaLabelSelector } from '../../common/label-selectors.js';
import type { Condition } from '../../kube/conditions.js';
import type { ObjectMeta, OwnerReference } from '../../common/kube-types.js';

export const MCO_GROUP = 'machineconfiguration.openshift.io';
export const MCO_API_VERSION = `${MCO_GROUP}/v1`;

export const ROLE_LABEL = `${MCO_GROUP}/role`;
export const GENERATED_BY_VERSION_ANNOTATION = `${MCO_GROUP}/generated-by-controller-version`;
export const RELEASE_IMAGE_VERSION_ANNOTATION = `${MCO_GROUP}/release-image-version`;
export const CURRENT_CONFIG_ANNOTATION = `${MCO_GROUP}/currentConfig`;
export const DESIRED_CONFIG_ANNOTATION = `${MCO_GROUP}/desiredConfig`;
export const STATE_ANNOTATION = `${MCO_GROUP}/state`;
export const REASON_ANNOTATION = `${MCO_GROUP}/reason`;
/** The daemon's drain request (`drain-<config>`, `uncordon-<config>`) and the controller's answer. */
export const DESIRED_DRAIN_ANNOTATION = `${MCO_GROUP}/desiredDrain`;
export const LAST_APPLIED_DRAIN_ANNOTATION = `${MCO_GROUP}/lastAppliedDrain`;
/**
 * Why the requested drain is failing, as the drain controller last found it (the pods it cannot
 * evict and why); removed once the drain succeeds. OpenShift keeps this on the node's
 * MachineConfigNode (condition Drained); bosun, having no MachineConfigNodes, on the node, where
 * the daemon reads it into its reason when the drain times out.
 */
export const DRAIN_ERROR_ANNOTATION = `${MCO_GROUP}/lastDrainError`;
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export type { Condition, ObjectMeta, OwnerReference };

export interface MachineConfigSpec {
  /** Raw Ignition 3.x; unknown fields preserved by the CRD. */
  config?: unknown;
  kernelArguments?: string[] | null;
  extensions?: string[] | null;
  fips?: boolean;
  kernelType?: string;
  osImageURL?: string;
  baseOSExtensionsContainerImage?: string;
}

export interface MachineConfig {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: MachineConfigSpec;
}

export interface PoolConfiguration extends ObjectReference {
  source?: ObjectReference[];
}

export interface MachineConfigPool {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    machineConfigSelector?: MetaLabelSelector | null;
    nodeSelector?: MetaLabelSelector | null;
    paused?: boolean;
    maxUnavailable?: number | string | null;
    configuration?: PoolConfiguration;
  };
  status?: MachineConfigPoolStatus;
}

export interface MachineConfigPoolStatus {
  observedGeneration?: number;
  configuration?: PoolConfiguration;
  machineCount?: number;
  updatedMachineCount?: number;
  readyMachineCount?: number;
  unavailableMachineCount?: number;
  degradedMachineCount?: number;
  conditions?: Condition[];
}

export interface ControllerConfigSpec {
  clusterDNSIP: string;
  /** base64 PEM */
  kubeAPIServerServingCAData: string;
  /** base64 PEM */
  rootCAData: string;
  releaseImage: string;
  images?: Record<string, string>;
  /** The OS image rendered configs default to (OpenShift 4.12+); osImageURL before that. */
  baseOSContainerImage?: string;
  baseOSExtensionsContainerImage?: string;
  osImageURL?: string;
  platform?: string;
  ipFamilies?: string;
  networkType?: string;
  cloudProviderConfig?: string;
  /** base64 */
  additionalTrustBundle?: string | null;
  proxy?: { httpProxy?: string; httpsProxy?: string; noProxy?: string } | null;
  pullSecret?: ObjectReference;
  dns?: { spec?: { baseDomain?: string } } | null;
  infra?: { status?: { platformStatus?: { type?: string; external?: { cloudControllerManager?: { state?: string } } } } } | null;
}

export interface ControllerConfig {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: ControllerConfigSpec;
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

export interface KubeletConfig {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    machineConfigPoolSelector?: MetaLabelSelector | null;
    kubeletConfig?: Record<string, unknown> | null;
    autoSizingReserved?: boolean | null;
    logLevel?: number | null;
  };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

/** The parts of a core/v1 Node the node controller reads. */
export interface NodeView {
  metadata: ObjectMeta;
  spec?: { unschedulable?: boolean; taints?: { key: string; value?: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

export function ownerReferenceTo(obj: { apiVersion?: string; kind?: string; metadata: ObjectMeta }, kind: string): OwnerReference {
  return {
    apiVersion: obj.apiVersion ?? MCO_API_VERSION,
    kind: obj.kind ?? kind,
    name: obj.metadata.name ?? '',
    uid: obj.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
