// The controllers of kube-controller-manager that bosun runs (ReplicaSet, Deployment, DaemonSet,
// StatefulSet, Job, the horizontal pod autoscaler, CronJob, resource quota, Endpoints, EndpointSlices, node lifecycle, pod garbage collection, root CA publisher,
// the PersistentVolume binder and the pvc-/pv-protection controllers, bosun's local-path
// provisioner, and
// OpenShift's service CA — off unless named, as kube's optional controllers are), added
// to a component manager over its shared informers; the manager holds the Lease
// kube-system/kube-controller-manager as kube-controller-manager does (so two instances never act
// at once). They are ordinary API clients: on a real cluster, kube-controller-manager can run
// instead.
import type { KubeConfigLike } from '../../kube/kubeconfig.js';
import { readFileSync } from 'node:fs';
import { type Clock, EventRecorder, Manager, realClock, resources } from '../../kube/index.js';
import type { WorkloadContext } from './context.js';
import { daemonSetController } from './daemonset-controller.js';
import { deploymentController } from './deployment-controller.js';
import { endpointSliceController } from './endpointslice-controller.js';
import { endpointsController } from './endpoints-controller.js';
import { jobController, type JobControllerOptions } from './job-controller.js';
import { cronJobController } from './cronjob-controller.js';
import { hpaController, type HpaControllerOptions } from './hpa-controller.js';
import { resourceQuotaController, type ResourceQuotaControllerOptions } from './resourcequota-controller.js';
import { nodeLifecycleController, type NodeLifecycleOptions } from './node-lifecycle-controller.js';
import { podGcController, type PodGcOptions } from './pod-gc-controller.js';
import { ROOT_CA_CONFIG_MAP, rootCaPublisher } from './root-ca-publisher.js';
import { replicaSetController } from './replicaset-controller.js';
import { statefulSetController } from './statefulset-controller.js';
import { serviceCaControllers } from '../service-ca/controllers.js';
import { persistentVolumeBinder } from '../storage/persistentvolume-binder.js';
import { pvcProtectionController, pvProtectionController } from '../storage/protection-controllers.js';
import { LOCAL_PATH_PROVISIONER, localPathProvisioner } from '../storage/local-path-provisioner.js';
import { CONFIG_MAPS, CONTROLLER_REVISIONS, CRON_JOBS, RESOURCE_QUOTAS, DAEMON_SETS, DEPLOYMENTS, ENDPOINT_SLICES, ENDPOINTS, HORIZONTAL_POD_AUTOSCALERS, JOBS, LEASES, NAMESPACES, NODES, PODS, REPLICA_SETS, SECRETS, SERVICES, STATEFUL_SETS } from './resources.js';

/** What a controller may need beyond its context. */
type ControllerOptions = WorkloadControllerSettings & { kubeconfig: KubeConfigLike };

/**
 * The controllers by the names kube-controller-manager's --controllers flag uses, each with the
 * component its Events name as their source (as kube's do).
 */
export const WORKLOAD_CONTROLLERS = {
  replicaset: { component: 'replicaset-controller', make: (ctx: WorkloadContext) => replicaSetController(ctx) },
  deployment: { component: 'deployment-controller', make: (ctx: WorkloadContext) => deploymentController(ctx) },
  daemonset: { component: 'daemonset-controller', make: (ctx: WorkloadContext) => daemonSetController(ctx) },
  statefulset: { component: 'statefulset-controller', make: (ctx: WorkloadContext) => statefulSetController(ctx) },
  job: { component: 'job-controller', make: (ctx: WorkloadContext, o: ControllerOptions) => jobController(ctx, o.job) },
  cronjob: { component: 'cronjob-controller', make: (ctx: WorkloadContext) => cronJobController(ctx) },
  horizontalpodautoscaling: { component: 'horizontal-pod-autoscaler', make: (ctx: WorkloadContext, o: ControllerOptions) => hpaController(ctx, o.hpa) },
  resourcequota: { component: 'resourcequota-controller', make: (ctx: WorkloadContext, o: ControllerOptions) => resourceQuotaController(ctx, o.resourceQuota) },
  endpoint: { component: 'endpoint-controller', make: (ctx: WorkloadContext) => endpointsController(ctx) },
  endpointslice: { component: 'endpoint-slice-controller', make: (ctx: WorkloadContext) => endpointSliceController(ctx) },
  nodelifecycle: { component: 'node-controller', make: (ctx: WorkloadContext, o: ControllerOptions) => nodeLifecycleController(ctx, o.nodeLifecycle) },
  podgc: { component: 'pod-garbage-collector', make: (ctx: WorkloadContext, o: ControllerOptions) => podGcController(ctx, o.podGc) },
  'root-ca-cert-publisher': { component: 'root-ca-cert-publisher', make: (ctx: WorkloadContext, o: ControllerOptions) => rootCaPublisher(ctx, o.rootCa ?? clusterCa(o.kubeconfig)) },
  'service-ca': { component: 'service-ca-controller', make: (ctx: WorkloadContext) => serviceCaControllers(ctx) },
  'persistentvolume-binder': { component: 'persistentvolume-controller', make: (ctx: WorkloadContext) => persistentVolumeBinder(ctx) },
  'pvc-protection': { component: 'pvc-protection-controller', make: (ctx: WorkloadContext) => pvcProtectionController(ctx) },
  'pv-protection': { component: 'pv-protection-controller', make: (ctx: WorkloadContext) => pvProtectionController(ctx) },
  // Not kube's: the dynamic provisioner of the local cluster's default StorageClass.
  'local-path-provisioner': { component: LOCAL_PATH_PROVISIONER, make: (ctx: WorkloadContext) => localPathProvisioner(ctx) },
} as const;

/** Controllers `*` leaves out (kube's "disabled by default"): run only when named. */
const OFF_BY_DEFAULT: readonly string[] = ['service-ca'];

export type WorkloadControllerName = keyof typeof WORKLOAD_CONTROLLERS;

/**
 * Reads a --controllers list as kube-controller-manager does: `*` for all, `name` to enable one,
 * `-name` to disable one (`*,-daemonset`). Unknown names are an error naming the known ones.
 */
export function selectControllers(spec: string): WorkloadControllerName[] {
  const known = Object.keys(WORKLOAD_CONTROLLERS) as WorkloadControllerName[];
  const items = spec.split(',').map((s) => s.trim()).filter(Boolean);
  const chosen = new Set<WorkloadControllerName>();
  for (const item of items) {
    if (item === '*') for (const name of known) if (!OFF_BY_DEFAULT.includes(name)) chosen.add(name);
  }
  for (const item of items) {
    if (item === '*') continue;
    const name = item.replace(/^-/, '');
    if (!known.includes(name as WorkloadControllerName)) throw new Error(`"${name}" is not a known controller; known controllers: ${known.join(', ')}`);
    if (item.startsWith('-')) chosen.delete(name as WorkloadControllerName);
    else chosen.add(name as WorkloadControllerName);
  }
  return known.filter((name) => chosen.has(name));
}

/** kube-controller-manager's Lease, and the component's name. */
export const CONTROLLER_MANAGER = { name: 'controller-manager', lease: { namespace: 'kube-system', name: 'kube-controller-manager' } };

export interface WorkloadControllerSettings {
  /** Which controllers to run (default: all). */
  controllers?: WorkloadControllerName[];
  clock?: Clock;
  job?: JobControllerOptions;
  hpa?: HpaControllerOptions;
  resourceQuota?: ResourceQuotaControllerOptions;
  podGc?: PodGcOptions;
  nodeLifecycle?: NodeLifecycleOptions;
  /** The CA published as kube-root-ca.crt (default: the kubeconfig's cluster CA). */
  rootCa?: string;
}

export interface WorkloadControllerOptions extends WorkloadControllerSettings {
  kubeconfig: KubeConfigLike;
  signal: AbortSignal;
  /** Leader election on kube-system/kube-controller-manager (default on); false runs without (tests, one instance). */
  leaderElection?: false | { identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
}

/** Adds the selected controllers to a manager, over its client and shared informers. */
export function addWorkloadControllers(manager: Manager, settings: WorkloadControllerSettings): void {
  const factory = manager.informers;
  const shared: Omit<WorkloadContext, 'events'> = {
    client: manager.client,
    // Made on first use, so that a process watches only what its controllers need.
    informers: {
      get pods() { return factory.forResource(PODS); },
      get nodes() { return factory.forResource(NODES); },
      get replicaSets() { return factory.forResource(REPLICA_SETS); },
      get deployments() { return factory.forResource(DEPLOYMENTS); },
      get daemonSets() { return factory.forResource(DAEMON_SETS); },
      get statefulSets() { return factory.forResource(STATEFUL_SETS); },
      get controllerRevisions() { return factory.forResource(CONTROLLER_REVISIONS); },
      get jobs() { return factory.forResource(JOBS); },
      get cronJobs() { return factory.forResource(CRON_JOBS); },
      get horizontalPodAutoscalers() { return factory.forResource(HORIZONTAL_POD_AUTOSCALERS); },
      get resourceQuotas() { return factory.forResource(RESOURCE_QUOTAS); },
      get services() { return factory.forResource(SERVICES); },
      get endpoints() { return factory.forResource(ENDPOINTS); },
      get endpointSlices() { return factory.forResource(ENDPOINT_SLICES); },
      get namespaces() { return factory.forResource(NAMESPACES); },
      get nodeLeases() { return factory.forResource(LEASES, { namespace: 'kube-node-lease' }); },
      get rootCaConfigMaps() { return factory.forResource(CONFIG_MAPS, { fieldSelector: `metadata.name=${ROOT_CA_CONFIG_MAP}` }); },
      get secrets() { return factory.forResource(SECRETS); },
      get configMaps() { return factory.forResource(CONFIG_MAPS); },
      get persistentVolumeClaims() { return factory.forResource(resources.persistentVolumeClaims); },
      get persistentVolumes() { return factory.forResource(resources.persistentVolumes); },
      get storageClasses() { return factory.forResource(resources.storageClasses); },
      get mutatingWebhookConfigurations() { return factory.forResource(resources.mutatingWebhookConfigurations); },
      get validatingWebhookConfigurations() { return factory.forResource(resources.validatingWebhookConfigurations); },
    },
    clock: settings.clock ?? realClock,
  };
  const options = { ...settings, kubeconfig: manager.kubeconfig };
  const names = settings.controllers ?? selectControllers('*');
  for (const name of names) {
    const { component, make } = WORKLOAD_CONTROLLERS[name];
    manager.add(...[make({ ...shared, events: new EventRecorder(manager.client, { component }) }, options)].flat());
  }
}

/** Runs the controllers on a manager of their own until the signal aborts (tests, embedding). */
export async function runWorkloadControllers(options: WorkloadControllerOptions): Promise<void> {
  const { name, lease } = CONTROLLER_MANAGER;
  const manager = new Manager({
    name,
    kubeconfig: options.kubeconfig,
    clock: options.clock,
    leaderElection: options.leaderElection === false ? undefined : { ...lease, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options.leaderElection },
  });
  addWorkloadControllers(manager, options);
  await manager.start(options.signal);
}

/** The CA of the kubeconfig's cluster, PEM; an error naming the fix when there is none. */
function clusterCa(kubeconfig: KubeConfigLike): string {
  const cluster = kubeconfig.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, 'base64').toString('utf8');
  if (cluster?.caFile) return readFileSync(cluster.caFile, 'utf8');
  throw new Error('the kubeconfig names no cluster CA to publish as kube-root-ca.crt; give one with --root-ca-file');
}
