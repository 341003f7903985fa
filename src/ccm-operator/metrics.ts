// The cloud-controller-manager's service controller metrics, named, helped and bucketed as
// k8s.io/cloud-provider's (controllers/service/metrics.go), counted where upstream counts them —
// when a balancer's hosts are updated for a change in the set of eligible nodes:
//   service_controller_loadbalancer_sync_total                  updates of a balancer's hosts
//   service_controller_nodesync_error_total                     of them, the ones that failed
//   service_controller_nodesync_latency_seconds                 time to bring a Service's balancer
//                                                               to the new node set (upstream times
//                                                               one round over every Service; here
//                                                               a node change queues each Service,
//                                                               and each is its own round)
//   service_controller_update_loadbalancer_host_latency_seconds time of the cloud's update call
// Buckets 1 s to 16384 s (exponential, factor 2, 15 buckets), as upstream. A registry per process.
import { Counter, Histogram, Registry, exponentialBuckets } from 'prom-client';

const BUCKETS = exponentialBuckets(1, 2, 15);

export class ServiceControllerMetrics {
  readonly registry = new Registry();
  readonly loadBalancerSync = new Counter({
    name: 'service_controller_loadbalancer_sync_total',
    help: 'A metric counting the amount of times any load balancer has been configured, as an effect of service/node changes on the cluster',
    registers: [this.registry],
  });
  readonly nodeSyncErrors = new Counter({
    name: 'service_controller_nodesync_error_total',
    help: 'A metric counting the amount of times any load balancer has been configured and errored, as an effect of node changes on the cluster',
    registers: [this.registry],
  });
  readonly nodeSyncLatency = new Histogram({
    name: 'service_controller_nodesync_latency_seconds',
    help: 'A metric measuring the latency for nodesync which updates loadbalancer hosts on cluster node updates.',
    buckets: BUCKETS,
    registers: [this.registry],
  });
  readonly updateHostLatency = new Histogram({
    name: 'service_controller_update_loadbalancer_host_latency_seconds',
    help: 'A metric measuring the latency for updating each load balancer hosts.',
    buckets: BUCKETS,
    registers: [this.registry],
  });
}
