// The machineconfiguration.openshift.io/v1 objects the machine-config controller reads and writes
// (MachineConfig, MachineConfigPool, ControllerConfig, KubeletConfig) and the Nodes it targets —
// src/api's types, generated from the CRDs, under the names the MCO uses — with the readers that
// narrow what the CRDs leave open (spec.config, conditions, selectors); the annotation and label
// keys OpenShift uses.
import type * as api from '../../api/index.js';
import type { IgnitionConfig } from '../../ignition/types.js';
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

/** A MachineConfig's spec (its config is raw Ignition 3.x; the CRD preserves unknown fields). */
export type MachineConfigSpec = NonNullable<api.MachineConfig['spec']>;
export type MachineConfig = api.MachineConfig;
export type PoolConfiguration = NonNullable<api.MachineConfigPool['spec']['configuration']>;
export type MachineConfigPool = api.MachineConfigPool;
export type MachineConfigPoolStatus = api.MachineConfigPoolStatus;
export type ControllerConfigSpec = api.ControllerConfig['spec'];
export type ControllerConfig = api.ControllerConfig;
export type KubeletConfig = api.KubeletConfig;
/** The core/v1 Nodes the node controller reads. */
export type NodeView = api.Node;

/**
 * A MachineConfig's spec.config as an Ignition config. The CRD keeps it as raw JSON
 * (x-kubernetes-preserve-unknown-fields); the render controller validates every config it merges
 * (validateMachineConfig) and renders only valid ones, so what the daemon and the controller read
 * past that point is read as typed. Absent is an empty config.
 */
export function ignitionConfigOf(spec: MachineConfigSpec | undefined): IgnitionConfig {
  return (spec?.config ?? {}) as unknown as IgnitionConfig;
}

/** An Ignition config as a MachineConfig's raw spec.config. */
export function rawIgnitionConfig(config: IgnitionConfig): MachineConfigSpec['config'] {
  return config as unknown as MachineConfigSpec['config'];
}

/**
 * The status conditions of an MCO kind. Its CRDs leave a condition's type and status optional;
 * the MCO always writes both, so they are read as Conditions.
 */
export function conditionsOf(object: { status?: { conditions?: readonly unknown[] | null } | null }): Condition[] | undefined {
  return (object.status?.conditions ?? undefined) as Condition[] | undefined;
}

type GeneratedSelector = NonNullable<api.MachineConfigPool['spec']['nodeSelector']>;

/**
 * A selector of an MCO kind (metav1.LabelSelector in the CRDs) as common/label-selectors reads it:
 * the CRDs make these selectors nullable, and an absent or null selector is undefined there.
 */
export function metaSelector(selector: GeneratedSelector | null | undefined): MetaLabelSelector | undefined {
  return (selector ?? undefined) as MetaLabelSelector | undefined;
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
