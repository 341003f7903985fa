// The pod garbage collector, as kube-controller-manager's podgc: one level-triggered pass over all
// pods whenever pods or nodes change (and at least every 20 s, kube's period), collecting what
// pod-gc.ts picks. Before
// deleting a pod for its missing node it asks the API server whether the node is really gone, and
// it marks the pod as kube does (phase Failed unless finished, condition DisruptionTarget
// DeletionByPodGC) so that its controllers see why it went; terminating pods on an out-of-service
// node are failed and deleted likewise. Deletions are forced (grace 0): no kubelet is left to
// finish them — a graceful deletion already running on such a node is cut short.
import type * as api from '../../api/index.js';
import { Controller, type SyncResult, isNotFound, rfc3339 } from '../../kube/index.js';
import type { WorkloadContext } from './context.js';
import { excessTerminated, orphaned, ORPHAN_QUARANTINE_MS, TERMINATED_POD_THRESHOLD, terminatingOutOfService, unscheduledTerminating } from './pod-gc.js';
import { isTerminal } from './pods.js';
import { NODES, PODS } from './resources.js';

const KEY = 'pods';
const PERIOD_MS = 20_000;

export interface PodGcOptions {
  terminatedThreshold?: number;
  quarantineMs?: number;
}

export function podGcController(ctx: WorkloadContext, options: PodGcOptions = {}): Controller {
  const { pods, nodes } = ctx.informers;
  const threshold = options.terminatedThreshold ?? TERMINATED_POD_THRESHOLD;
  const quarantineMs = options.quarantineMs ?? ORPHAN_QUARANTINE_MS;
  /** When each missing node was first seen missing. */
  const missingSince = new Map<string, number>();

  const controller = new Controller({ name: 'pod-garbage-collector', clock: ctx.clock, sync: () => sync() });
  controller.watch(pods, () => KEY);
  controller.watch(nodes, () => KEY);

  async function forceDelete(pod: api.Pod): Promise<void> {
    try {
      await ctx.client.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? '')}/pods/${encodeURIComponent(pod.metadata.name)}`, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** kube's markFailedAndDeletePodWithCondition: phase Failed unless finished (and the condition, if any), then a forced deletion. */
  async function markFailedAndDelete(pod: api.Pod, condition?: api.PodCondition): Promise<void> {
    const conditions = condition ? [...(pod.status?.conditions ?? []).filter((c) => c.type !== condition.type), condition] : undefined;
    try {
      if (!isTerminal(pod) || conditions) await ctx.client.mergePatch(PODS, pod.metadata.name, pod.metadata.namespace, { status: { ...(isTerminal(pod) ? {} : { phase: 'Failed' }), ...(conditions ? { conditions } : {}) } }, 'status');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    await forceDelete(pod);
  }

  async function sync(): Promise<SyncResult | void> {
    const all = pods.list();
    for (const pod of excessTerminated(all, threshold)) await forceDelete(pod);
    const now = ctx.clock.now();
    const known = new Set(nodes.list().map((n) => n.metadata.name));
    for (const node of missingSince.keys()) if (known.has(node)) missingSince.delete(node);
    let recheckInMs: number | undefined;
    for (const pod of orphaned(all, known)) {
      // orphaned() returns bound pods only.
      const node = pod.spec?.nodeName ?? '';
      const since = missingSince.get(node) ?? now;
      missingSince.set(node, since);
      if (now - since < quarantineMs) {
        recheckInMs = Math.min(recheckInMs ?? Infinity, since + quarantineMs - now);
        continue;
      }
      if (await ctx.client.read(NODES, node)) continue; // the cache was behind
      await markFailedAndDelete(pod, { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists', lastTransitionTime: rfc3339(new Date(now)) });
    }
    const byName = new Map(nodes.list().map((n) => [n.metadata.name, n]));
    for (const pod of terminatingOutOfService(all, byName)) await markFailedAndDelete(pod);
    for (const pod of unscheduledTerminating(all)) await forceDelete(pod);
    return { requeueAfterMs: Math.min(PERIOD_MS, (recheckInMs ?? PERIOD_MS) + 50) };
  }

  return controller;
}
