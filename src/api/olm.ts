// The Operator Lifecycle Manager's kinds (operators.coreos.com), from the types generated out of
// the CRDs bosun ships (src/api/generated), and the package server's read-only PackageManifest
// (packages.operators.coreos.com/v1), which has no CRD: its shape is OLM's.
import type * as olm from './generated/operators-coreos-com.js';
import type { Kind, KubeObject } from './meta.js';

export type CatalogSource = Kind<olm.CatalogSourceBody>;
export type Subscription = Kind<olm.SubscriptionBody>;
export type InstallPlan = Kind<olm.InstallPlanBody>;
export type ClusterServiceVersion = Kind<olm.ClusterServiceVersionBody>;
export type OperatorGroup = Kind<olm.OperatorGroupBody>;

export type CatalogSourceStatus = NonNullable<olm.CatalogSourceBody['status']>;
export type SubscriptionStatus = NonNullable<olm.SubscriptionBody['status']>;
export type InstallPlanStatus = NonNullable<olm.InstallPlanBody['status']>;
export type InstallPlanStep = NonNullable<InstallPlanStatus['plan']>[number];
export type ClusterServiceVersionSpec = olm.ClusterServiceVersionBody['spec'];
export type ClusterServiceVersionStatus = NonNullable<olm.ClusterServiceVersionBody['status']>;
export type RequirementStatus = NonNullable<ClusterServiceVersionStatus['requirementStatus']>[number];
export type InstallMode = NonNullable<ClusterServiceVersionSpec['installModes']>[number];
export type CrdDescription = NonNullable<NonNullable<ClusterServiceVersionSpec['customresourcedefinitions']>['owned']>[number];
export type StrategyDeployment = NonNullable<ClusterServiceVersionSpec['install']['spec']>['deployments'][number];
export type StrategyPermission = NonNullable<NonNullable<ClusterServiceVersionSpec['install']['spec']>['permissions']>[number];
export type OperatorGroupStatus = NonNullable<olm.OperatorGroupBody['status']>;

/** One channel of a PackageManifest: its head CSV and what that CSV says about itself. */
export interface PackageChannel {
  name: string;
  currentCSV: string;
  currentCSVDesc?: {
    displayName?: string;
    description?: string;
    version?: string;
    provider?: { name?: string; url?: string };
    installModes?: InstallMode[];
    customresourcedefinitions?: ClusterServiceVersionSpec['customresourcedefinitions'];
    keywords?: string[];
    annotations?: Record<string, string>;
  };
  entries?: { name: string; version?: string }[];
}

/** packages.operators.coreos.com/v1 PackageManifest: one package of one catalog, as the package server serves it. */
export interface PackageManifest extends KubeObject {
  spec: Record<string, never>;
  status: {
    catalogSource: string;
    catalogSourceDisplayName?: string;
    catalogSourcePublisher?: string;
    catalogSourceNamespace: string;
    packageName: string;
    defaultChannel: string;
    provider?: { name?: string; url?: string };
    channels: PackageChannel[];
  };
}

/** What bosun's sample operators write in their custom resources' status. */
export interface SampleOperandStatus {
  /** Ready, or Progressing while what it manages comes up. */
  phase?: string;
  message?: string;
  /** The version of the operator that reconciled it last (its bundle's). */
  operatorVersion?: string;
  observedGeneration?: number;
}

/** greeter.samples.bosun.io/v1 Greeting (the sample greeter operator's): a ConfigMap with a greeting. */
export interface Greeting extends KubeObject {
  spec?: { name?: string; greeting?: string };
  status?: SampleOperandStatus & { configMap?: string; text?: string };
}

/** echo.samples.bosun.io/v1 EchoServer (the sample echo operator's): a Deployment of bosun.local/echo and its Service. */
export interface EchoServer extends KubeObject {
  spec?: { replicas?: number };
  status?: SampleOperandStatus & { readyReplicas?: number; service?: string };
}
