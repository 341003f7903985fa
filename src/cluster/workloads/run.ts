// `runWorkloadControllers`: the workload controllers of kube-controller-manager that bosun runs
// (ReplicaSet, Deployment, DaemonSet) over one set of shared informers, until the signal aborts.
// They are ordinary API clients: on a real cluster, kube-controller-manager can run instead.
import type * as k8s from '@kubernetes/client-node';
import { setMaxListeners } from 'node:events';
import { type Clock, type Controller, EventRecorder, InformerFactory, KubeClient, realClock } from '../../kube/index.js';
import type { WorkloadContext } from './context.js';
import { daemonSetController } from './daemonset-controller.js';
import { deploymentController } from './deployment-controller.js';
import { replicaSetController } from './replicaset-controller.js';
import { DAEMON_SETS, DEPLOYMENTS, NODES, PODS, REPLICA_SETS } from './resources.js';

/** The controllers by the names kube-controller-manager's --controllers flag uses. */
export const WORKLOAD_CONTROLLERS = {
  replicaset: replicaSetController,
  deployment: deploymentController,
  daemonset: daemonSetController,
} as const;

export type WorkloadControllerName = keyof typeof WORKLOAD_CONTROLLERS;

export interface WorkloadControllerOptions {
  kubeconfig: k8s.KubeConfig;
  signal: AbortSignal;
  /** Which controllers to run (default: all). */
  controllers?: WorkloadControllerName[];
  clock?: Clock;
}

export async function runWorkloadControllers(options: WorkloadControllerOptions): Promise<void> {
  const stopper = new AbortController();
  setMaxListeners(64, stopper.signal);
  if (options.signal.aborted) stopper.abort();
  else options.signal.addEventListener('abort', () => stopper.abort(), { once: true });
  const client = new KubeClient(options.kubeconfig);
  const factory = new InformerFactory(client);
  const shared: Omit<WorkloadContext, 'events'> = {
    client,
    informers: {
      pods: factory.forResource(PODS),
      nodes: factory.forResource(NODES),
      replicaSets: factory.forResource(REPLICA_SETS),
      deployments: factory.forResource(DEPLOYMENTS),
      daemonSets: factory.forResource(DAEMON_SETS),
    },
    clock: options.clock ?? realClock,
  };
  const names = options.controllers ?? (Object.keys(WORKLOAD_CONTROLLERS) as WorkloadControllerName[]);
  // Each controller reports Events as itself, as kube's do (`replicaset-controller`, …).
  const controllers: Controller[] = names.map((name) => WORKLOAD_CONTROLLERS[name]({ ...shared, events: new EventRecorder(client, { component: `${name}-controller` }) }));
  factory.start(stopper.signal);
  await Promise.all(controllers.map((c) => c.run(stopper.signal)));
  await factory.stop();
}
