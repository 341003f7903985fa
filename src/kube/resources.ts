// The catalogue of the resources bosun's components read and write: group, version, resource
// (plural), kind and scope, as discovery serves them. One entry per kind, so that components name
// `resources.machineConfigPools` instead of each spelling out its own ResourceRef. Kinds a
// component finds only at run time (the CVO's manifests) go through KubeClient.resourceFor.
import type { ResourceRef } from './client.js';

/** A resource with the kind it serves. */
export interface ResourceDefinition extends ResourceRef {
  kind: string;
}

const def = (group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceDefinition => ({ group, version, resource, kind, namespaced });

const MCO = 'machineconfiguration.openshift.io';
const CONFIG = 'config.openshift.io';
const CAPI = 'cluster.x-k8s.io';
const CAPI_INFRA = 'infrastructure.cluster.x-k8s.io';

export const resources = {
  // core/v1
  namespaces: def('', 'v1', 'namespaces', 'Namespace', false),
  nodes: def('', 'v1', 'nodes', 'Node', false),
  pods: def('', 'v1', 'pods', 'Pod', true),
  services: def('', 'v1', 'services', 'Service', true),
  serviceAccounts: def('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
  configMaps: def('', 'v1', 'configmaps', 'ConfigMap', true),
  secrets: def('', 'v1', 'secrets', 'Secret', true),
  events: def('', 'v1', 'events', 'Event', true),
  endpoints: def('', 'v1', 'endpoints', 'Endpoints', true),
  endpointSlices: def('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  // workloads and coordination
  deployments: def('apps', 'v1', 'deployments', 'Deployment', true),
  daemonSets: def('apps', 'v1', 'daemonsets', 'DaemonSet', true),
  replicaSets: def('apps', 'v1', 'replicasets', 'ReplicaSet', true),
  statefulSets: def('apps', 'v1', 'statefulsets', 'StatefulSet', true),
  controllerRevisions: def('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true),
  jobs: def('batch', 'v1', 'jobs', 'Job', true),
  leases: def('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  podDisruptionBudgets: def('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true),
  customResourceDefinitions: def('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false),
  // config.openshift.io
  clusterVersions: def(CONFIG, 'v1', 'clusterversions', 'ClusterVersion', false),
  clusterOperators: def(CONFIG, 'v1', 'clusteroperators', 'ClusterOperator', false),
  infrastructures: def(CONFIG, 'v1', 'infrastructures', 'Infrastructure', false),
  networks: def(CONFIG, 'v1', 'networks', 'Network', false),
  featureGates: def(CONFIG, 'v1', 'featuregates', 'FeatureGate', false),
  // machineconfiguration.openshift.io
  machineConfigs: def(MCO, 'v1', 'machineconfigs', 'MachineConfig', false),
  machineConfigPools: def(MCO, 'v1', 'machineconfigpools', 'MachineConfigPool', false),
  controllerConfigs: def(MCO, 'v1', 'controllerconfigs', 'ControllerConfig', false),
  kubeletConfigs: def(MCO, 'v1', 'kubeletconfigs', 'KubeletConfig', false),
  // cluster.x-k8s.io (Cluster API) and its local infrastructure provider
  clusters: def(CAPI, 'v1beta2', 'clusters', 'Cluster', true),
  machines: def(CAPI, 'v1beta2', 'machines', 'Machine', true),
  machineSets: def(CAPI, 'v1beta2', 'machinesets', 'MachineSet', true),
  machineDeployments: def(CAPI, 'v1beta2', 'machinedeployments', 'MachineDeployment', true),
  machineHealthChecks: def(CAPI, 'v1beta2', 'machinehealthchecks', 'MachineHealthCheck', true),
  localClusters: def(CAPI_INFRA, 'v1beta2', 'localclusters', 'LocalCluster', true),
  localMachines: def(CAPI_INFRA, 'v1beta2', 'localmachines', 'LocalMachine', true),
  localMachineTemplates: def(CAPI_INFRA, 'v1beta2', 'localmachinetemplates', 'LocalMachineTemplate', true),
} as const satisfies Record<string, ResourceDefinition>;
