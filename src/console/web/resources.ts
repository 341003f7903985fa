// The kinds the console shows: where each lives in the API, what it is called, and whether it is
// namespaced (a namespaced list is read in all namespaces or in the one chosen in the header).
import { collection } from './store.js';

export interface Kind {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

const kind = (group: string, version: string, plural: string, kindName: string, namespaced: boolean): Kind => ({ group, version, plural, kind: kindName, namespaced });

export const kinds = {
  clusterVersions: kind('config.openshift.io', 'v1', 'clusterversions', 'ClusterVersion', false),
  clusterOperators: kind('config.openshift.io', 'v1', 'clusteroperators', 'ClusterOperator', false),
  infrastructures: kind('config.openshift.io', 'v1', 'infrastructures', 'Infrastructure', false),
  machineConfigPools: kind('machineconfiguration.openshift.io', 'v1', 'machineconfigpools', 'MachineConfigPool', false),
  machineConfigs: kind('machineconfiguration.openshift.io', 'v1', 'machineconfigs', 'MachineConfig', false),
  nodes: kind('', 'v1', 'nodes', 'Node', false),
  deployments: kind('apps', 'v1', 'deployments', 'Deployment', true),
  secrets: kind('', 'v1', 'secrets', 'Secret', true),
  machines: kind('cluster.x-k8s.io', 'v1beta2', 'machines', 'Machine', true),
  machineSets: kind('cluster.x-k8s.io', 'v1beta2', 'machinesets', 'MachineSet', true),
  machineDeployments: kind('cluster.x-k8s.io', 'v1beta2', 'machinedeployments', 'MachineDeployment', true),
  machineHealthChecks: kind('cluster.x-k8s.io', 'v1beta2', 'machinehealthchecks', 'MachineHealthCheck', true),
  clusters: kind('cluster.x-k8s.io', 'v1beta2', 'clusters', 'Cluster', true),
  kubeadmControlPlanes: kind('controlplane.cluster.x-k8s.io', 'v1beta2', 'kubeadmcontrolplanes', 'KubeadmControlPlane', true),
  localClusters: kind('infrastructure.cluster.x-k8s.io', 'v1beta2', 'localclusters', 'LocalCluster', true),
  namespaces: kind('', 'v1', 'namespaces', 'Namespace', false),
  catalogSources: kind('operators.coreos.com', 'v1alpha1', 'catalogsources', 'CatalogSource', true),
  packageManifests: kind('packages.operators.coreos.com', 'v1', 'packagemanifests', 'PackageManifest', true),
  operatorGroups: kind('operators.coreos.com', 'v1', 'operatorgroups', 'OperatorGroup', true),
  subscriptions: kind('operators.coreos.com', 'v1alpha1', 'subscriptions', 'Subscription', true),
  installPlans: kind('operators.coreos.com', 'v1alpha1', 'installplans', 'InstallPlan', true),
  clusterServiceVersions: kind('operators.coreos.com', 'v1alpha1', 'clusterserviceversions', 'ClusterServiceVersion', true),
} satisfies Record<string, Kind>;

/** The list path of a kind: cluster-wide, or in `namespace` for a namespaced kind given one. */
export const listPath = (k: Kind, namespace?: string): string => collection(k.group, k.version, k.plural, k.namespaced ? namespace || undefined : undefined);

/** An object's path. */
export const objectPath = (k: Kind, name: string, namespace?: string): string => `${collection(k.group, k.version, k.plural, k.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
