// The drain controller: answers a daemon's drain requests (drain.ts says what is asked). For
// `drain-<config>`: cordon the node (spec.unschedulable), evict its pods through the eviction API
// — so PodDisruptionBudgets hold — leaving DaemonSet and mirror pods, wait for the evicted pods
// to be gone, then write lastAppliedDrain = the request. For `uncordon-<config>`: uncordon and
// answer the same way. An eviction a budget refuses is tried again on drain.ts's schedule; each
// failure is an Event DrainFailed naming the pod that blocks (DrainThresholdExceeded once it has
// failed for the threshold), and the node's lastDrainError annotation says the same until the
// drain succeeds: the daemon, waiting longer than its drain timeout, degrades the node with it,
// which the pool reports (NodeDegraded, Degraded) naming the node and the pod. A drain failing past
// the drain timeout (an hour) sets mcc_drain_err{node} until it succeeds (metrics.ts).
import { Controller, type SyncContext, type SyncResult } from '../../kube/controller.js';
import type { Node } from '../../api/index.js';
import { isNotFound, KubeApiError, resourcePath } from '../../kube/index.js';
import type { Patch } from '../../kube/client.js';
import { resources } from '../../kube/resources.js';
import type { McoContext } from './context.js';
import { DEFAULT_DRAIN_TIMING, drainRequest, drainRetry, podsToEvict, type DrainTiming } from './drain.js';
import { DESIRED_DRAIN_ANNOTATION, DRAIN_ERROR_ANNOTATION, LAST_APPLIED_DRAIN_ANNOTATION, type NodeView } from './types.js';

/** While a requested drain is not done: terminating pods are looked at again this soon. */
const TERMINATING_POLL_MS = 500;

export function drainController(ctx: McoContext, timing: DrainTiming = DEFAULT_DRAIN_TIMING): Controller {
  const failingSince = new Map<string, { value: string; since: number }>();
  const controller = new Controller({
    name: 'machine-config-controller-drain',
    clock: ctx.clock,
    sync: (key, sc) => syncDrain(ctx, key, sc, timing, failingSince),
    // As OpenShift's (five workers): nodes of a rollout with maxUnavailable > 1 are drained side
    // by side, not each behind the other's cordon, list and evictions.
    workers: 5,
    queue: { baseDelayMs: 1000, maxDelayMs: timing.slowRetryMs },
  });
  controller.watch(ctx.informers.nodes);
  return controller;
}

async function syncDrain(ctx: McoContext, name: string, { log }: SyncContext, timing: DrainTiming, failingSince: Map<string, { value: string; since: number }>): Promise<SyncResult | void> {
  const node = ctx.informers.nodes.get(name);
  const settled = () => { failingSince.delete(name); ctx.metrics.drainErr.remove({ node: name }); };
  if (!node) return settled();
  const request = drainRequest(node.metadata.annotations, DESIRED_DRAIN_ANNOTATION, LAST_APPLIED_DRAIN_ANNOTATION);
  if (request.action === 'none') return settled();
  const asNode: Node = { apiVersion: 'v1', kind: 'Node', metadata: node.metadata };

  if (request.action === 'uncordon') {
    // Uncordoned and answered in one write: the daemon completes the moment it sees the answer.
    await answer(ctx, node, request.value, node.spec?.unschedulable ? { unschedulable: null } : undefined);
    settled();
    log.info({ node: name, request: request.value }, 'node uncordoned');
    void ctx.events.event(asNode, 'Normal', 'Uncordon', `Uncordoned node ${name} (${request.value})`);
    return;
  }

  if (!node.spec?.unschedulable) {
    await ctx.client.mergePatch(resources.nodes, name, undefined, { spec: { unschedulable: true } });
    void ctx.events.event(asNode, 'Normal', 'Cordon', `Cordoned node ${name} (${request.value})`);
  }
  const pods = (await ctx.client.list(resources.pods, undefined, { fieldSelector: `spec.nodeName=${name}` })).items;
  const { evict, terminating } = podsToEvict(pods);
  const blocked: string[] = [];
  for (const pod of evict) {
    const { namespace, name: podName } = pod.metadata;
    try {
      await ctx.client.request('POST', `${resourcePath(resources.pods, namespace, podName)}/eviction`, {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: podName, namespace } },
      });
      log.info({ node: name, pod: `${namespace}/${podName}` }, 'pod evicted');
    } catch (e) {
      if (isNotFound(e)) continue;
      if (e instanceof KubeApiError && (e.code === 429 || e.code === 500)) { blocked.push(`${namespace}/${podName}: ${e.message}`); continue; }
      throw e;
    }
  }
  if (blocked.length) {
    const failing = failingSince.get(name)?.value === request.value ? failingSince.get(name)! : { value: request.value, since: ctx.clock.now() };
    failingSince.set(name, failing);
    const { afterMs, thresholdExceeded, timedOut } = drainRetry(failing.since, ctx.clock.now(), timing);
    // Past the drain timeout: still retried, and said for MCCDrainError.
    if (timedOut) ctx.metrics.drainErr.set({ node: name }, 1);
    const error = `error when evicting pods: ${blocked.join('; ')}`;
    const message = `Drain failed on node ${name}, will retry in ${Math.round(afterMs / 1000)}s: ${error}`;
    if (node.metadata.annotations?.[DRAIN_ERROR_ANNOTATION] !== error) await ctx.client.mergePatch(resources.nodes, name, undefined, { metadata: { annotations: { [DRAIN_ERROR_ANNOTATION]: error } } });
    log.warn({ node: name, blocked }, 'drain blocked');
    void ctx.events.event(asNode, 'Warning', thresholdExceeded ? 'DrainThresholdExceeded' : 'DrainFailed', message);
    return { requeueAfterMs: afterMs };
  }
  // Evicted pods still shutting down: look again soon (their deletion also wakes nothing here).
  if (evict.length || terminating.length) return { requeueAfterMs: TERMINATING_POLL_MS };
  await answer(ctx, node, request.value);
  settled();
  log.info({ node: name, request: request.value }, 'node drained');
  void ctx.events.event(asNode, 'Normal', 'Drain', `Drained node ${name} (${request.value})`);
}

/** lastAppliedDrain = the request (with any spec change in the same write); a drain error is gone. */
async function answer(ctx: McoContext, node: NodeView, value: string, spec?: Patch): Promise<void> {
  const clear = node.metadata.annotations?.[DRAIN_ERROR_ANNOTATION] !== undefined ? { [DRAIN_ERROR_ANNOTATION]: null } : {};
  await ctx.client.mergePatch(resources.nodes, node.metadata.name!, undefined, { metadata: { annotations: { [LAST_APPLIED_DRAIN_ANNOTATION]: value, ...clear } }, ...(spec ? { spec } : {}) });
}
