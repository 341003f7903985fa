// The catalogue of the resources bosun's components read and write: group, version, resource
// (plural), kind and scope, as discovery serves them. One entry per kind, so that components name
// `resources.machineConfigPools` instead of each spelling out its own ResourceRef. Kinds a
// component finds only at run time (the CVO's manifests) go through KubeClient.resourceFor.
import type * as api from '../api/index.js';
import type { ResourceRef } from './client.js';

/** A resource with the kind it serves; `T` is the type of its objects. */
export interface ResourceDefinition<T = unknown> extends ResourceRef<T> {
  kind: string;
}

const def = <T>(group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceDefinition<T> => ({ group, version, resource, kind, namespaced });

const MCO = 'machineconfiguration.openshift.io';
const CONFIG = 'config.openshift.io';
const CAPI = 'cluster.x-k8s.io';
const CAPI_INFRA = 'infrastructure.cluster.x-k8s.io';
const CAPI_BOOTSTRAP = 'bootstrap.cluster.x-k8s.io';
const CAPI_CONTROL_PLANE = 'controlplane.cluster.x-k8s.io';
const MONITORING = 'monitoring.coreos.com';
const OLM = 'operators.coreos.com';

export const resources = {
  // core/v1
  namespaces: def<api.Namespace>('', 'v1', 'namespaces', 'Namespace', false),
  nodes: def<api.Node>('', 'v1', 'nodes', 'Node', false),
  pods: def<api.Pod>('', 'v1', 'pods', 'Pod', true),
  services: def<api.Service>('', 'v1', 'services', 'Service', true),
  serviceAccounts: def<api.ServiceAccount>('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
  configMaps: def<api.ConfigMap>('', 'v1', 'configmaps', 'ConfigMap', true),
  secrets: def<api.Secret>('', 'v1', 'secrets', 'Secret', true),
  events: def<api.Event>('', 'v1', 'events', 'Event', true),
  endpoints: def<api.Endpoints>('', 'v1', 'endpoints', 'Endpoints', true),
  endpointSlices: def<api.EndpointSlice>('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  persistentVolumes: def<api.PersistentVolume>('', 'v1', 'persistentvolumes', 'PersistentVolume', false),
  persistentVolumeClaims: def<api.PersistentVolumeClaim>('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true),
  // storage.k8s.io
  storageClasses: def<api.StorageClass>('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false),
  // workloads and coordination
  deployments: def<api.Deployment>('apps', 'v1', 'deployments', 'Deployment', true),
  daemonSets: def<api.DaemonSet>('apps', 'v1', 'daemonsets', 'DaemonSet', true),
  replicaSets: def<api.ReplicaSet>('apps', 'v1', 'replicasets', 'ReplicaSet', true),
  statefulSets: def<api.StatefulSet>('apps', 'v1', 'statefulsets', 'StatefulSet', true),
  controllerRevisions: def<api.ControllerRevision>('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true),
  jobs: def<api.Job>('batch', 'v1', 'jobs', 'Job', true),
  cronJobs: def<api.CronJob>('batch', 'v1', 'cronjobs', 'CronJob', true),
  horizontalPodAutoscalers: def<api.HorizontalPodAutoscaler>('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true),
  resourceQuotas: def<api.ResourceQuota>('', 'v1', 'resourcequotas', 'ResourceQuota', true),
  limitRanges: def<api.LimitRange>('', 'v1', 'limitranges', 'LimitRange', true),
  leases: def<api.Lease>('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  podDisruptionBudgets: def<api.PodDisruptionBudget>('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true),
  roles: def<api.Role>('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  roleBindings: def<api.RoleBinding>('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  clusterRoles: def<api.ClusterRole>('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  clusterRoleBindings: def<api.ClusterRoleBinding>('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  customResourceDefinitions: def<api.CustomResourceDefinition>('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false),
  apiServices: def<api.APIService>('apiregistration.k8s.io', 'v1', 'apiservices', 'APIService', false),
  mutatingWebhookConfigurations: def<api.MutatingWebhookConfiguration>('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false),
  validatingWebhookConfigurations: def<api.ValidatingWebhookConfiguration>('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
  // config.openshift.io
  clusterVersions: def<api.ClusterVersion>(CONFIG, 'v1', 'clusterversions', 'ClusterVersion', false),
  clusterOperators: def<api.ClusterOperator>(CONFIG, 'v1', 'clusteroperators', 'ClusterOperator', false),
  infrastructures: def<api.Infrastructure>(CONFIG, 'v1', 'infrastructures', 'Infrastructure', false),
  networks: def<api.Network>(CONFIG, 'v1', 'networks', 'Network', false),
  featureGates: def<api.FeatureGate>(CONFIG, 'v1', 'featuregates', 'FeatureGate', false),
  proxies: def<api.Proxy>(CONFIG, 'v1', 'proxies', 'Proxy', false),
  // cloudcredential.openshift.io
  credentialsRequests: def<api.CredentialsRequest>('cloudcredential.openshift.io', 'v1', 'credentialsrequests', 'CredentialsRequest', true),
  // machineconfiguration.openshift.io
  machineConfigs: def<api.MachineConfig>(MCO, 'v1', 'machineconfigs', 'MachineConfig', false),
  machineConfigPools: def<api.MachineConfigPool>(MCO, 'v1', 'machineconfigpools', 'MachineConfigPool', false),
  controllerConfigs: def<api.ControllerConfig>(MCO, 'v1', 'controllerconfigs', 'ControllerConfig', false),
  kubeletConfigs: def<api.KubeletConfig>(MCO, 'v1', 'kubeletconfigs', 'KubeletConfig', false),
  // cluster.x-k8s.io (Cluster API) and its local infrastructure provider
  clusters: def<api.Cluster>(CAPI, 'v1beta2', 'clusters', 'Cluster', true),
  machines: def<api.Machine>(CAPI, 'v1beta2', 'machines', 'Machine', true),
  machineSets: def<api.MachineSet>(CAPI, 'v1beta2', 'machinesets', 'MachineSet', true),
  machineDeployments: def<api.MachineDeployment>(CAPI, 'v1beta2', 'machinedeployments', 'MachineDeployment', true),
  machineHealthChecks: def<api.MachineHealthCheck>(CAPI, 'v1beta2', 'machinehealthchecks', 'MachineHealthCheck', true),
  localClusters: def<api.LocalCluster>(CAPI_INFRA, 'v1beta2', 'localclusters', 'LocalCluster', true),
  localMachines: def<api.LocalMachine>(CAPI_INFRA, 'v1beta2', 'localmachines', 'LocalMachine', true),
  localMachineTemplates: def<api.LocalMachineTemplate>(CAPI_INFRA, 'v1beta2', 'localmachinetemplates', 'LocalMachineTemplate', true),
  // Cluster API's kubeadm bootstrap and control-plane providers
  kubeadmConfigs: def<api.KubeadmConfig>(CAPI_BOOTSTRAP, 'v1beta2', 'kubeadmconfigs', 'KubeadmConfig', true),
  kubeadmConfigTemplates: def<api.KubeadmConfigTemplate>(CAPI_BOOTSTRAP, 'v1beta2', 'kubeadmconfigtemplates', 'KubeadmConfigTemplate', true),
  kubeadmControlPlanes: def<api.KubeadmControlPlane>(CAPI_CONTROL_PLANE, 'v1beta2', 'kubeadmcontrolplanes', 'KubeadmControlPlane', true),
  // monitoring.coreos.com (the Prometheus Operator's kinds)
  serviceMonitors: def<api.ServiceMonitor>(MONITORING, 'v1', 'servicemonitors', 'ServiceMonitor', true),
  prometheusRules: def<api.PrometheusRule>(MONITORING, 'v1', 'prometheusrules', 'PrometheusRule', true),
  // operators.coreos.com (the Operator Lifecycle Manager's kinds) and its package server's
  catalogSources: def<api.CatalogSource>(OLM, 'v1alpha1', 'catalogsources', 'CatalogSource', true),
  subscriptions: def<api.Subscription>(OLM, 'v1alpha1', 'subscriptions', 'Subscription', true),
  installPlans: def<api.InstallPlan>(OLM, 'v1alpha1', 'installplans', 'InstallPlan', true),
  clusterServiceVersions: def<api.ClusterServiceVersion>(OLM, 'v1alpha1', 'clusterserviceversions', 'ClusterServiceVersion', true),
  operatorGroups: def<api.OperatorGroup>(OLM, 'v1', 'operatorgroups', 'OperatorGroup', true),
  packageManifests: def<api.PackageManifest>('packages.operators.coreos.com', 'v1', 'packagemanifests', 'PackageManifest', true),
} as const satisfies Record<string, ResourceDefinition<unknown>>;
