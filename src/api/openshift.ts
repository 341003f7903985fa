// OpenShift's kinds bosun ships CRDs for (config.openshift.io, machineconfiguration.openshift.io,
// cloudcredential.openshift.io),
// from the types generated out of those CRDs (src/api/generated).
import type * as cloudcredential from './generated/cloudcredential-openshift-io.js';
import type * as config from './generated/config-openshift-io.js';
import type * as mco from './generated/machineconfiguration-openshift-io.js';
import type { Kind } from './meta.js';

// config.openshift.io/v1
export type ClusterVersion = Kind<config.ClusterVersionBody>;
export type ClusterOperator = Kind<config.ClusterOperatorBody>;
export type Infrastructure = Kind<config.InfrastructureBody>;
export type Network = Kind<config.NetworkBody>;
export type FeatureGate = Kind<config.FeatureGateBody>;
export type Proxy = Kind<config.ProxyBody>;
export type ClusterOperatorStatusCondition = NonNullable<NonNullable<config.ClusterOperatorBody['status']>['conditions']>[number];
export type OperandVersion = NonNullable<NonNullable<config.ClusterOperatorBody['status']>['versions']>[number];
export type RelatedObject = NonNullable<NonNullable<config.ClusterOperatorBody['status']>['relatedObjects']>[number];
export type Release = NonNullable<NonNullable<config.ClusterVersionBody['status']>['availableUpdates']>[number];
export type UpdateHistory = NonNullable<NonNullable<config.ClusterVersionBody['status']>['history']>[number];
export type ConditionalUpdate = NonNullable<NonNullable<config.ClusterVersionBody['status']>['conditionalUpdates']>[number];

// cloudcredential.openshift.io/v1
export type CredentialsRequest = Kind<cloudcredential.CredentialsRequestBody>;
export type CredentialsRequestStatus = NonNullable<cloudcredential.CredentialsRequestBody['status']>;

// machineconfiguration.openshift.io/v1
export type MachineConfig = Kind<mco.MachineConfigBody>;
export type MachineConfigPool = Kind<mco.MachineConfigPoolBody>;
export type ControllerConfig = Kind<mco.ControllerConfigBody>;
export type KubeletConfig = Kind<mco.KubeletConfigBody>;

/** A ClusterVersion's status; the CVO builds it up field by field, so most code takes a Partial. */
export type ClusterVersionStatus = NonNullable<config.ClusterVersionBody['status']>;
export type ClusterVersionCondition = NonNullable<ClusterVersionStatus['conditions']>[number];
export type ClusterOperatorStatus = NonNullable<config.ClusterOperatorBody['status']>;
export type MachineConfigPoolStatus = NonNullable<mco.MachineConfigPoolBody['status']>;
