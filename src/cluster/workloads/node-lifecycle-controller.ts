// The node lifecycle controller, as kube-controller-manager's (with its taint-eviction part): per
// node, level-triggered from the Node, its Lease in kube-node-lease and its pods (node-lifecycle.ts):
//   1. a kubelet silent past the grace period: the node's conditions go Unknown;
//   2. the taints follow the conditions (not-ready / unreachable NoExecute and NoSchedule, …);
//   3. pods on a node that went Unknown are marked not Ready (their kubelet can no longer say);
//   4. pods that do not tolerate its NoExecute taints are deleted, at once or when their
//      tolerationSeconds run out (an Event TaintManagerEviction on each), so that their
//      controllers replace them elsewhere.
// Evicting taints are added at most --node-eviction-rate nodes per second per zone (burst 1), none
// in a small zone that is partially disrupted, and in master disruption mode — every node of every
// zone not Ready, as after the host slept or the control plane lost its network — none at all, and
// those already there are lifted: then the fault is more likely the control plane's than every
// node's, and evicting every pod of the cluster would only make it worse.
import type * as api from '../../api/index.js';
import { Controller, type SyncResult, isNotFound, rfc3339 } from '../../kube/index.js';
import { sameJson } from '../../kube/canonical.js';
import type { WorkloadContext } from './context.js';
import { logger } from '../../common/log.js';
import { disruption, EvictionLimiter, evictionDelay, LARGE_CLUSTER_THRESHOLD, NODE_EVICTION_RATE, NODE_MONITOR_GRACE_MS, SECONDARY_NODE_EVICTION_RATE, NODE_STARTUP_GRACE_MS, type NoExecutePolicy, nodeHealth, wantedTaints, wantsNewEvictingTaint, zoneEvictionRate, zoneOf } from './node-lifecycle.js';
import { NODES, PODS } from './resources.js';
import { isPodReady, nodeReadyStatus } from '../../kube/readiness.js';

export interface NodeLifecycleOptions {
  /** --node-monitor-grace-period */
  gracePeriodMs?: number;
  /** --node-startup-grace-period */
  startupGracePeriodMs?: number;
  /** --node-eviction-rate: nodes per second per zone that may get evicting taints (default 0.1). */
  evictionRate?: number;
}

const log = logger('node-lifecycle-controller');

export function nodeLifecycleController(ctx: WorkloadContext, options: NodeLifecycleOptions = {}): Controller {
  const { nodes, nodeLeases, pods } = ctx.informers;
  const graceMs = options.gracePeriodMs ?? NODE_MONITOR_GRACE_MS;
  const startupGraceMs = options.startupGracePeriodMs ?? NODE_STARTUP_GRACE_MS;

  const controller = new Controller({ name: 'node-lifecycle-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(nodes);
  // A node's readiness changes its zone's state, and with it what may happen to every other node.
  nodes.on((type, node, old) => {
    if (type === 'update' && readyOf(node) === readyOf(old)) return;
    lastDisruption = undefined;
    for (const n of nodes.list()) if (n.metadata.name !== node.metadata.name) controller.enqueue(n.metadata.name);
  });
  const limiters = new Map<string, EvictionLimiter>();
  let masterDisruption = false;
  controller.watch(nodeLeases, (lease) => lease.metadata.name);
  controller.watch(pods, (pod) => pod.spec?.nodeName || undefined);

  async function sync(name: string): Promise<SyncResult | void> {
    let node = nodes.get(name);
    if (!node) return;
    const now = ctx.clock.now();
    const health = nodeHealth(node, nodeLeases.get(name, 'kube-node-lease'), now, graceMs, startupGraceMs);
    if (health.conditions) {
      const wentUnknown = nodeReadyStatus(node) !== 'Unknown';
      node = await ctx.client.update(NODES, { ...node, status: { ...(node.status ?? {}), conditions: health.conditions } }, 'status');
      if (wentUnknown) {
        void ctx.events.event(node!, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        await markPodsNotReady(name);
      }
    }
    const taints = wantedTaints(node!, now, evictionPolicy(node!, now));
    if (!sameJson(taints, node!.spec?.taints ?? [])) {
      node = await ctx.client.mergePatch(NODES, name, undefined, { spec: { taints: taints.length ? taints : null }, metadata: { resourceVersion: node!.metadata.resourceVersion } });
    }
    let nextEvictionMs: number | undefined;
    for (const pod of pods.list().filter((p) => p.spec?.nodeName === name && !p.metadata.deletionTimestamp)) {
      const delay = evictionDelay(pod, taints, now);
      if (delay === undefined) continue;
      if (delay > 0) {
        nextEvictionMs = Math.min(nextEvictionMs ?? Infinity, delay);
        continue;
      }
      void ctx.events.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${pod.metadata.namespace}/${pod.metadata.name}`);
      try {
        await ctx.client.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? '')}/pods/${encodeURIComponent(pod.metadata.name)}`, {
          body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: pod.metadata.uid } },
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const waits = [health.recheckInMs, nextEvictionMs, heldForMs.get(name)].filter((ms): ms is number => ms !== undefined);
    if (waits.length) return { requeueAfterMs: Math.min(...waits) + 50 };
  }

  const heldForMs = new Map<string, number>();

  let lastDisruption: { at: number; value: ReturnType<typeof disruption> } | undefined;
  /**
   * The zones' disruption as a monitor pass over every node sees it (kube's every 5 s; here at most
   * once a second): a node past its grace counts as not Ready even before its own sync marks it, so
   * that nodes falling silent together are seen together, not tainted one by one first.
   */
  function currentDisruption(now: number): ReturnType<typeof disruption> {
    if (lastDisruption && now - lastDisruption.at < 1000) return lastDisruption.value;
    const seen = nodes.list().map((n) => {
      const conditions = nodeHealth(n, nodeLeases.get(n.metadata.name, 'kube-node-lease'), now, graceMs, startupGraceMs).conditions;
      return conditions ? { ...n, status: { ...n.status, conditions } } : n;
    });
    lastDisruption = { at: now, value: disruption(seen) };
    return lastDisruption.value;
  }

  /** What may happen to the node's evicting taints now, given its zone and the whole cluster. */
  function evictionPolicy(node: api.Node, now: number): NoExecutePolicy {
    heldForMs.delete(node.metadata.name);
    const d = currentDisruption(now);
    if (d.allFullyDisrupted !== masterDisruption) {
      masterDisruption = d.allFullyDisrupted;
      if (masterDisruption) log.warn({ nodes: nodes.list().length }, 'Controller detected that all Nodes are not-Ready. Entering master disruption mode.');
      else log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode.');
      limiters.clear();
      for (const n of nodes.list()) if (n.metadata.name !== node.metadata.name) controller.enqueue(n.metadata.name);
    }
    if (masterDisruption) return 'remove';
    if (!wantsNewEvictingTaint(node)) return 'add';
    const zone = zoneOf(node);
    const { state, size } = d.zones.get(zone) ?? { state: 'Normal' as const, size: 1 };
    const rate = zoneEvictionRate(state, size, { normal: options.evictionRate ?? NODE_EVICTION_RATE, secondary: SECONDARY_NODE_EVICTION_RATE, largeCluster: LARGE_CLUSTER_THRESHOLD });
    let limiter = limiters.get(zone);
    if (!limiter) limiters.set(zone, (limiter = new EvictionLimiter(rate, now)));
    else limiter.setRate(rate, now);
    const wait = limiter.take(now);
    if (wait === 0) return 'add';
    if (Number.isFinite(wait)) heldForMs.set(node.metadata.name, wait);
    log.info({ node: node.metadata.name, zone, zoneState: state, ...(Number.isFinite(wait) ? { retryInMs: wait } : {}) }, 'eviction held by the zone\'s eviction rate');
    return 'hold';
  }

  /** kube's MarkPodsNotReady: the pods of an unreachable node are not Ready as far as anyone can tell. */
  async function markPodsNotReady(node: string): Promise<void> {
    const time = rfc3339(new Date(ctx.clock.now()));
    for (const pod of pods.list().filter((p) => p.spec?.nodeName === node)) {
      const conditions: api.PodCondition[] = pod.status?.conditions ?? [];
      if (!isPodReady(pod)) continue;
      const next = conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: time } : c));
      try {
        await ctx.client.mergePatch(PODS, pod.metadata.name, pod.metadata.namespace, { status: { conditions: next } }, 'status');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  return controller;
}

function readyOf(node: api.Node | undefined): string | undefined {
  return nodeReadyStatus(node);
}
