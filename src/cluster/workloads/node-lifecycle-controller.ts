// The node lifecycle controller, as kube-controller-manager's (with its taint-eviction part): per
// node, level-triggered from the Node, its Lease in kube-node-lease and its pods (node-lifecycle.ts):
//   1. a kubelet silent past the grace period: the node's conditions go Unknown;
//   2. the taints follow the conditions (not-ready / unreachable NoExecute and NoSchedule, …);
//   3. pods on a node that went Unknown are marked not Ready (their kubelet can no longer say);
//   4. pods that do not tolerate its NoExecute taints are deleted, at once or when their
//      tolerationSeconds run out (an Event TaintManagerEviction on each), so that their
//      controllers replace them elsewhere.
// Unlike kube it evicts without its per-zone rate limits.
import { Controller, type Obj, type SyncResult, isNotFound, rfc3339 } from '../../kube/index.js';
import { sameJson } from './canonical.js';
import type { WorkloadContext } from './context.js';
import { evictionDelay, NODE_MONITOR_GRACE_MS, NODE_STARTUP_GRACE_MS, nodeHealth, wantedTaints } from './node-lifecycle.js';
import { NODES, PODS } from './resources.js';

export interface NodeLifecycleOptions {
  /** --node-monitor-grace-period */
  gracePeriodMs?: number;
  /** --node-startup-grace-period */
  startupGracePeriodMs?: number;
}

export function nodeLifecycleController(ctx: WorkloadContext, options: NodeLifecycleOptions = {}): Controller {
  const { nodes, nodeLeases, pods } = ctx.informers;
  const graceMs = options.gracePeriodMs ?? NODE_MONITOR_GRACE_MS;
  const startupGraceMs = options.startupGracePeriodMs ?? NODE_STARTUP_GRACE_MS;

  const controller = new Controller({ name: 'node-lifecycle-controller', workers: 2, sync: (key) => sync(key) });
  controller.watch(nodes);
  controller.watch(nodeLeases, (lease) => lease.metadata.name);
  controller.watch(pods, (pod) => pod.spec?.nodeName || undefined);

  async function sync(name: string): Promise<SyncResult | void> {
    let node = nodes.get(name);
    if (!node) return;
    const now = ctx.clock.now();
    const health = nodeHealth(node, nodeLeases.get(name, 'kube-node-lease'), now, graceMs, startupGraceMs);
    if (health.conditions) {
      const wentUnknown = node.status?.conditions?.find((c: Obj) => c.type === 'Ready')?.status !== 'Unknown';
      node = await ctx.client.update(NODES, { ...node, status: { ...(node.status ?? {}), conditions: health.conditions } }, 'status');
      if (wentUnknown) {
        void ctx.events.event(node!, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        await markPodsNotReady(name);
      }
    }
    const taints = wantedTaints(node!, now);
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
        await ctx.client.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace)}/pods/${encodeURIComponent(pod.metadata.name)}`, {
          body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: pod.metadata.uid } },
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const waits = [health.recheckInMs, nextEvictionMs].filter((ms): ms is number => ms !== undefined);
    if (waits.length) return { requeueAfterMs: Math.min(...waits) + 50 };
  }

  /** kube's MarkPodsNotReady: the pods of an unreachable node are not Ready as far as anyone can tell. */
  async function markPodsNotReady(node: string): Promise<void> {
    const time = rfc3339(new Date(ctx.clock.now()));
    for (const pod of pods.list().filter((p) => p.spec?.nodeName === node)) {
      const conditions: Obj[] = pod.status?.conditions ?? [];
      if (!conditions.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
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
