// `runWorkloadControllers`: the workload controllers of kube-controller-manager that bosun runs
// (ReplicaSet, Deployment, DaemonSet, Job, Endpoints, EndpointSlices, pod garbage collection, root CA
// publisher) over one set of shared informers, while holding the Lease
// kube-system/kube-controller-manager as kube-controller-manager does (so two instances never act
// at once), until the signal aborts. They are ordinary API clients: on a real cluster,
// kube-controller-manager can run instead.
import type * as k8s from '@kubernetes/client-node';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { type Clock, type Controller, EventRecorder, InformerFactory, KubeClient, LeaderElector, realClock } from '../../kube/index.js';
import type { WorkloadContext } from './context.js';
import { daemonSetController } from './daemonset-controller.js';
import { deploymentController } from './deployment-controller.js';
import { endpointSliceController } from './endpointslice-controller.js';
import { endpointsController } from './endpoints-controller.js';
import { jobController, type JobControllerOptions } from './job-controller.js';
import { podGcController, type PodGcOptions } from './pod-gc-controller.js';
import { ROOT_CA_CONFIG_MAP, rootCaPublisher } from './root-ca-publisher.js';
import { replicaSetController } from './replicaset-controller.js';
import { CONFIG_MAPS, DAEMON_SETS, DEPLOYMENTS, ENDPOINT_SLICES, ENDPOINTS, JOBS, NAMESPACES, NODES, PODS, REPLICA_SETS, SERVICES } from './resources.js';

/** The controllers by the names kube-controller-manager's --controllers flag uses. */
export const WORKLOAD_CONTROLLERS = {
  replicaset: (ctx: WorkloadContext) => replicaSetController(ctx),
  deployment: (ctx: WorkloadContext) => deploymentController(ctx),
  daemonset: (ctx: WorkloadContext) => daemonSetController(ctx),
  job: (ctx: WorkloadContext, options: WorkloadControllerOptions) => jobController(ctx, options.job),
  endpoint: (ctx: WorkloadContext) => endpointsController(ctx),
  endpointslice: (ctx: WorkloadContext) => endpointSliceController(ctx),
  podgc: (ctx: WorkloadContext, options: WorkloadControllerOptions) => podGcController(ctx, options.podGc),
  'root-ca-cert-publisher': (ctx: WorkloadContext, options: WorkloadControllerOptions) => rootCaPublisher(ctx, options.rootCa ?? clusterCa(options.kubeconfig)),
} as const;

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
    if (item === '*') for (const name of known) chosen.add(name);
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

export interface WorkloadControllerOptions {
  kubeconfig: k8s.KubeConfig;
  signal: AbortSignal;
  /** Which controllers to run (default: all). */
  controllers?: WorkloadControllerName[];
  clock?: Clock;
  job?: JobControllerOptions;
  podGc?: PodGcOptions;
  /** The CA published as kube-root-ca.crt (default: the kubeconfig's cluster CA). */
  rootCa?: string;
  /** Leader election on kube-system/kube-controller-manager (default on); false runs without (tests, one instance). */
  leaderElection?: false | { identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
}

export async function runWorkloadControllers(options: WorkloadControllerOptions): Promise<void> {
  if (options.leaderElection === false) return runControllers(options, options.signal);
  const elector = new LeaderElector({
    kubeconfig: options.kubeconfig,
    namespace: 'kube-system',
    name: 'kube-controller-manager',
    ...options.leaderElection,
    signal: options.signal,
    onStartedLeading: (leading) => runControllers(options, leading),
  });
  await elector.run();
}

async function runControllers(options: WorkloadControllerOptions, outer: AbortSignal): Promise<void> {
  // The controllers and their informers listen for the stop: one signal of our own carries them.
  const stopper = new AbortController();
  setMaxListeners(64, stopper.signal);
  if (outer.aborted) stopper.abort();
  else outer.addEventListener('abort', () => stopper.abort(), { once: true });
  const client = new KubeClient(options.kubeconfig);
  const factory = new InformerFactory(client);
  const shared: Omit<WorkloadContext, 'events'> = {
    client,
    informers: {
      get pods() { return factory.forResource(PODS); },
      get nodes() { return factory.forResource(NODES); },
      get replicaSets() { return factory.forResource(REPLICA_SETS); },
      get deployments() { return factory.forResource(DEPLOYMENTS); },
      get daemonSets() { return factory.forResource(DAEMON_SETS); },
      get jobs() { return factory.forResource(JOBS); },
      get services() { return factory.forResource(SERVICES); },
      get endpoints() { return factory.forResource(ENDPOINTS); },
      get endpointSlices() { return factory.forResource(ENDPOINT_SLICES); },
      get namespaces() { return factory.forResource(NAMESPACES); },
      get rootCaConfigMaps() { return factory.forResource(CONFIG_MAPS, { fieldSelector: `metadata.name=${ROOT_CA_CONFIG_MAP}` }); },
    },
    clock: options.clock ?? realClock,
  };
  const names = options.controllers ?? (Object.keys(WORKLOAD_CONTROLLERS) as WorkloadControllerName[]);
  // Each controller reports Events as itself, as kube's do (`replicaset-controller`, …).
  const controllers: Controller[] = names.map((name) => WORKLOAD_CONTROLLERS[name]({ ...shared, events: new EventRecorder(client, { component: `${name}-controller` }) }, options));
  factory.start(stopper.signal);
  await Promise.all(controllers.map((c) => c.run(stopper.signal)));
  await factory.stop();
}

/** The CA of the kubeconfig's cluster, PEM; an error naming the fix when there is none. */
function clusterCa(kubeconfig: k8s.KubeConfig): string {
  const cluster = kubeconfig.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, 'base64').toString('utf8');
  if (cluster?.caFile) return readFileSync(cluster.caFile, 'utf8');
  throw new Error('the kubeconfig names no cluster CA to publish as kube-root-ca.crt; give one with --root-ca-file');
}
