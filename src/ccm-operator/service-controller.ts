// The service controller (k8s.io/cloud-provider's): a `type: LoadBalancer` Service without a
// loadBalancerClass gets a cloud balancer. The cleanup finalizer goes on before the cloud is
// touched, so a Service cannot vanish leaving its balancer behind; the balancer is ensured over
// the eligible nodes and its address written to status.loadBalancer through services/status;
// node-set changes are pushed with updateLoadBalancer; a Service deleted or no longer a
// LoadBalancer loses its balancer, then the finalizer. Failures are Warning events (upstream's
// reasons: SyncLoadBalancerFailed for ensure and delete, UpdateLoadBalancerFailed for node-set
// updates) retried per Service with exponential back-off from 5 s to 300 s, as upstream; a
// cloud that answers RetryError (not done yet, not failed) is asked again after the delay it
// gives, without an event. Ports the balancer cannot serve (a provider reports them per port in
// status.loadBalancer.ingress[].ports) are also said on the Service as Kubernetes says it: the
// condition LoadBalancerPortsError (KEP-1435); a Service none of whose ports the cloud can carry
// (UnsupportedPortsError) gets it with the SyncLoadBalancerFailed event and is not retried until
// it changes. At start, balancers of this cluster with no Service are removed (orphans of a CCM
// that stopped mid-delete).
import type * as api from '../api/index.js';
import { type Condition, Controller, type SyncResult, TerminalError, isNotFound, keyOf, sameConditions, setCondition } from '../kube/index.js';
import { logger } from '../common/log.js';
import { type EnsuredLoadBalancer, type LoadBalancerStatus, RetryError, UnsupportedPortsError } from './cloud-provider.js';
import { asService, type CcmContext, EXCLUDE_FROM_LB_LABEL, isReady, LB_CLEANUP_FINALIZER, SERVICES } from './context.js';

const log = logger('service-controller');

/** A Service's status.loadBalancer. */
type ServiceLoadBalancerStatus = NonNullable<NonNullable<api.Service['status']>['loadBalancer']>;

/** Nodes a balancer sends traffic to: initialised (providerID), Ready, not excluded, not being
 *  removed by an autoscaler — upstream's predicates for externalTrafficPolicy Cluster. */
export function eligibleNode(node: api.Node): boolean {
  return Boolean(node.spec?.providerID) && isReady(node) && !node.metadata.deletionTimestamp
    && node.metadata.labels?.[EXCLUDE_FROM_LB_LABEL] === undefined
    && !(node.spec?.taints ?? []).some((t) => t.key === 'ToBeDeletedByClusterAutoscaler');
}

export function wantsLoadBalancer(service: api.Service): boolean {
  return service.spec?.type === 'LoadBalancer' && !service.spec?.loadBalancerClass && !service.metadata.deletionTimestamp;
}

const hasFinalizer = (s: api.Service) => (s.metadata.finalizers ?? []).includes(LB_CLEANUP_FINALIZER);

/** Kubernetes' Service condition for ports a balancer cannot serve (KEP-1435), and its reason. */
export const PORTS_ERROR_CONDITION = 'LoadBalancerPortsError';
export const PORTS_ERROR_REASON = 'LoadBalancerMixedProtocolNotSupported';

/** The Service's conditions with LoadBalancerPortsError as `error` says (undefined: none). */
export function withPortsCondition(service: api.Service, error: string | undefined, now = new Date()): Condition[] {
  const conditions: Condition[] = service.status?.conditions ?? [];
  if (!error && !conditions.some((c) => c.type === PORTS_ERROR_CONDITION)) return conditions;
  return setCondition(conditions, {
    type: PORTS_ERROR_CONDITION, status: error ? 'True' : 'False', reason: error ? PORTS_ERROR_REASON : 'LoadBalancerPortsAvailable',
    message: error ?? '', observedGeneration: service.metadata.generation,
  }, now);
}

/** What the balancer's status says about ports it cannot serve, as one message. */
function portsError(service: api.Service, status: LoadBalancerStatus): string | undefined {
  const failed = status.ingress.flatMap((i) => i.ports ?? []).filter((p) => p.error);
  if (failed.length === 0) return undefined;
  return `the load balancer does not serve ${failed.map((p) => `port ${p.port}/${p.protocol} (${p.error})`).join(', ')} of Service ${service.metadata.namespace}/${service.metadata.name}`;
}

/** What of a Service its balancer is made from: a change means ensure again. */
function balancerSpec(service: api.Service): string {
  const s = service.spec ?? {};
  return JSON.stringify([s.ports, s.loadBalancerIP, s.loadBalancerSourceRanges, service.metadata.annotations?.['service.beta.kubernetes.io/load-balancer-source-ranges'], s.externalTrafficPolicy, s.healthCheckNodePort]);
}

export function serviceController(ctx: CcmContext): Controller {
  const balancers = ctx.cloud.loadBalancer();
  if (!balancers) throw new Error(`cloud provider "${ctx.cloud.providerName()}" does not support load balancers, which the service controller needs`);
  const events = ctx.events('service-controller');
  /** Per Service key: the spec and node set its balancer was last made from. */
  const applied = new Map<string, { spec: string; nodes: string }>();

  const controller = new Controller({
    clock: ctx.clock,
    name: 'service-controller',
    workers: 2,
    sync: (key) => sync(key),
    queue: { baseDelayMs: 5_000, maxDelayMs: 300_000 },
    // Once the caches have synced, before any Service is reconciled: balancers no Service has.
    onStarted: async () => {
      try {
        await removeOrphans();
      } catch (e) {
        log.warn({ err: e }, 'could not remove orphaned load balancers; the Services themselves are still reconciled');
      }
    },
  });
  controller.watch(ctx.services);
  // A change in the set of eligible nodes touches every LoadBalancer Service.
  controller.watch(ctx.nodes, (node, type, old) => {
    const before = type === 'add' ? false : eligibleNode(old ?? node);
    const after = type === 'delete' ? false : eligibleNode(node);
    if (before === after) return undefined;
    return ctx.services.list().filter(wantsLoadBalancer).map(keyOf);
  });

  const nodes = () => ctx.nodes.list().filter(eligibleNode).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

  async function sync(key: string): Promise<SyncResult | void> {
    const service = ctx.services.getByKey(key);
    if (!service) {
      applied.delete(key);
      return;
    }
    if (!wantsLoadBalancer(service)) {
      if (hasFinalizer(service)) return deleteBalancer(key, service);
      return;
    }
    let current = service;
    if (!hasFinalizer(current)) {
      current = await ctx.client.mergePatch(SERVICES, service.metadata.name, service.metadata.namespace, {
        metadata: { resourceVersion: service.metadata.resourceVersion, finalizers: [...(service.metadata.finalizers ?? []), LB_CLEANUP_FINALIZER] },
      });
    }
    const targets = nodes();
    if (targets.length === 0) void events.event(asService(current), 'Warning', 'UnAvailableLoadBalancer', 'There are no available nodes for LoadBalancer');
    const want = { spec: balancerSpec(current), nodes: targets.map((n) => n.metadata.name).join(',') };
    const last = applied.get(key);
    const hasIngress = (current.status?.loadBalancer?.ingress ?? []).length > 0;
    if (last && last.spec === want.spec && hasIngress) {
      if (last.nodes === want.nodes) return;
      // A node sync of this Service's balancer: counted and timed as upstream's (metrics.ts).
      ctx.metrics.loadBalancerSync.inc();
      const endNodeSync = ctx.metrics.nodeSyncLatency.startTimer();
      const endHostUpdate = ctx.metrics.updateHostLatency.startTimer();
      try {
        await balancers!.updateLoadBalancer(ctx.clusterName, current, targets);
      } catch (e) {
        if (e instanceof RetryError) return { requeueAfterMs: e.retryAfterMs };
        ctx.metrics.nodeSyncErrors.inc();
        void events.event(asService(current), 'Warning', 'UpdateLoadBalancerFailed', `Error updating load balancer with new hosts ${want.nodes}, error: ${(e as Error).message}`);
        throw e;
      } finally {
        endHostUpdate();
        endNodeSync();
      }
      applied.set(key, want);
      void events.event(asService(current), 'Normal', 'UpdatedLoadBalancer', 'Updated load balancer with new hosts');
      return;
    }
    void events.event(asService(current), 'Normal', 'EnsuringLoadBalancer', 'Ensuring load balancer');
    let status;
    let warnings: EnsuredLoadBalancer['warnings'];
    try {
      ({ warnings, ...status } = await balancers!.ensureLoadBalancer(ctx.clusterName, current, targets));
    } catch (e) {
      if (e instanceof RetryError) return { requeueAfterMs: e.retryAfterMs };
      void events.event(asService(current), 'Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: failed to ensure load balancer: ${(e as Error).message}`);
      // Ports the cloud can never carry: said on the Service too, and not retried until it changes.
      if (e instanceof UnsupportedPortsError) {
        await writeStatus(current, current.status?.loadBalancer ?? {}, withPortsCondition(current, (e as Error).message, new Date(ctx.clock.now())));
        throw new TerminalError((e as Error).message);
      }
      throw e;
    }
    await writeStatus(current, status, withPortsCondition(current, portsError(current, status), new Date(ctx.clock.now())));
    applied.set(key, want);
    void events.event(asService(current), 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
    for (const w of warnings ?? []) void events.event(asService(current), 'Warning', w.reason, w.message);
  }

  /** Writes status.loadBalancer and the conditions through services/status when they differ. */
  async function writeStatus(service: api.Service, loadBalancer: ServiceLoadBalancerStatus, conditions: Condition[]): Promise<void> {
    const sameLb = JSON.stringify(service.status?.loadBalancer ?? {}) === JSON.stringify(loadBalancer);
    const same = sameLb && sameConditions(service.status?.conditions, conditions) && (service.status?.conditions ?? []).length === conditions.length;
    if (same) return;
    await ctx.client.mergePatch(SERVICES, service.metadata.name, service.metadata.namespace, { status: { loadBalancer, ...(conditions.length ? { conditions } : {}) } }, 'status');
  }

  /** As upstream: Deleting/Deleted events around the cloud call (Deleting only when there is a
   *  balancer), a failure reported as SyncLoadBalancerFailed; the status emptied, then the
   *  finalizer removed. */
  async function deleteBalancer(key: string, service: api.Service): Promise<SyncResult | void> {
    const failed = (e: unknown) => void events.event(asService(service), 'Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: failed to delete load balancer: ${(e as Error).message}`);
    try {
      if (await balancers!.getLoadBalancer(ctx.clusterName, service)) {
        void events.event(asService(service), 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
        await balancers!.ensureLoadBalancerDeleted(ctx.clusterName, service);
      }
    } catch (e) {
      if (e instanceof RetryError) return { requeueAfterMs: e.retryAfterMs };
      failed(e);
      throw e;
    }
    const { name, namespace } = service.metadata;
    try {
      let current = service;
      // A Service that stopped being a LoadBalancer keeps living: its status no longer names a balancer.
      if (!service.metadata.deletionTimestamp && service.status?.loadBalancer?.ingress) {
        current = await ctx.client.mergePatch(SERVICES, name, namespace, { status: { loadBalancer: null } }, 'status');
      }
      await ctx.client.mergePatch(SERVICES, name, namespace, {
        metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: (current.metadata.finalizers ?? []).filter((f) => f !== LB_CLEANUP_FINALIZER) },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    void events.event(asService(service), 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
    applied.delete(key);
  }

  /** Balancers of this cluster whose Service is gone: left by a CCM stopped mid-delete (or by a
   *  Service deleted while no CCM ran and its finalizer was forced off). */
  async function removeOrphans(): Promise<void> {
    if (!balancers!.listLoadBalancerNames || !balancers!.deleteLoadBalancerByName) return;
    const owned = new Set(ctx.services.list().filter((s) => wantsLoadBalancer(s) || hasFinalizer(s)).map((s) => balancers!.getLoadBalancerName(ctx.clusterName, s)));
    for (const name of await balancers!.listLoadBalancerNames(ctx.clusterName)) {
      if (owned.has(name)) continue;
      log.info(`removing orphaned load balancer ${name}: no Service of this cluster has it`);
      await balancers!.deleteLoadBalancerByName(name);
    }
  }

  return controller;
}
