// What the cloud-controller-manager's controllers share in one process: the API client, the
// shared node and service informers, the cloud provider, the cluster's name (which prefixes its
// balancers and routes in the cloud), an event recorder per controller, and the names and
// resources they use — the ones k8s.io/cloud-provider uses, so kubectl users see the same words.
import type * as api from '../api/index.js';
import type { Clock, EventRecorder, Informer, KubeClient } from '../kube/index.js';
import { resources } from '../kube/resources.js';
import type { CloudProvider } from './cloud-provider.js';
import type { ServiceControllerMetrics } from './metrics.js';
import { isNodeReady } from '../kube/readiness.js';

export const NODES = resources.nodes;
export const SERVICES = resources.services;

/** Set by the kubelet when the cloud provider is external; removed by the node controller. */
export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
/** Put on a NotReady node whose instance is shut down; removed when it is Ready again. */
export const SHUTDOWN_TAINT = 'node.cloudprovider.kubernetes.io/shutdown';
/** Nodes carrying this label get no load balancer traffic. */
export const EXCLUDE_FROM_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Added to a LoadBalancer Service before the cloud is touched; removed once its balancer is gone. */
export const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

export interface CcmContext {
  client: KubeClient;
  nodes: Informer<api.Node>;
  services: Informer<api.Service>;
  cloud: CloudProvider;
  clusterName: string;
  events(component: string): EventRecorder;
  /** The clock of the controllers' queues and condition times (the manager's). */
  clock: Clock;
  /** service_controller_* (metrics.ts), served on the manager's /metrics. */
  metrics: ServiceControllerMetrics;
}

/** A Node as an Event's involvedObject wants it (informer items may lack kind). */
export const asNode = (node: api.Node): api.Node => ({ apiVersion: 'v1', kind: 'Node', ...node });
export const asService = (service: api.Service): api.Service => ({ apiVersion: 'v1', kind: 'Service', ...service });

export function isReady(node: api.Node): boolean {
  return isNodeReady(node);
}

export function hasTaint(node: api.Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}
