// The DaemonSet controller, as kube-controller-manager's: one pod per node that should run one
// (daemonset.ts), created with a required node affinity on the node's name so that the scheduler
// binds it — what kube has done since ScheduleDaemonSetPods went GA — and deleted where the node
// no longer admits it; duplicates and failed pods replaced (failed ones with back-off); a rolling
// update within maxSurge and maxUnavailable; the template history in ControllerRevisions
// (controller-history.ts); the status counts `kubectl rollout status daemonset` reads. It follows nodes
// joining, changing and leaving through the node informer. Pods bound to a deleted node are the
// pod garbage collector's to remove, as in kube; unscheduled pods aimed at a deleted node are this
// controller's.
import type * as api from '../../api/index.js';
import { Controller, controllerOf, type SyncResult } from '../../kube/index.js';
import { matchesLabels } from '../../common/label-selectors.js';
import { sameJson } from '../../kube/canonical.js';
import { claim, ownerStillThere } from './claim.js';
import { controllingOwner, keyFor, type WorkloadContext } from './context.js';
import { claimHistory, cleanupHistory, constructHistory } from './controller-history.js';
import { daemonPod, daemonSetStatus, isUpdated, nodeVerdict, oldestFirst, rollingUpdateStep, targetNode, updateBudget } from './daemonset.js';
import { Expectations } from './expectations.js';
import { BURST_REPLICAS, createPods, deletePods, observePods } from './pod-control.js';
import { isTerminal, msUntilAvailable } from './pods.js';
import { ownerKeys, selectorOf } from './owners.js';
import { DAEMON_SETS, PODS } from './resources.js';
import { templateHash } from '../../kube/template-hash.js';

/** Back-off before a failed daemon pod is replaced again (kube: 1 s doubling to 15 min). */
const FAILED_POD_BACKOFF = { initialMs: 1000, maxMs: 15 * 60_000 };

export function daemonSetController(ctx: WorkloadContext, expectations = new Expectations(ctx.clock)): Controller {
  const { pods, nodes, daemonSets, controllerRevisions } = ctx.informers;
  observePods(ctx, 'DaemonSet', expectations);
  const failedBackoff = new Map<string, { delayMs: number; notBefore: number }>();


  const controller = new Controller({ name: 'daemonset-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(daemonSets);
  controller.watch(pods, (pod, _type, old) => ownerKeys(pod, old, 'DaemonSet', daemonSets));
  // Any node change may change where daemon pods belong; there are few DaemonSets.
  controller.watch(nodes, () => daemonSets.list().map(keyFor));
  controller.watch(controllerRevisions, (history) => (controllingOwner(history, 'DaemonSet', daemonSets) ? `${history.metadata.namespace}/${controllerOf(history)!.name}` : undefined));

  async function sync(key: string): Promise<SyncResult | void> {
    const ds = daemonSets.getByKey(key);
    if (!ds) {
      expectations.forget(key);
      return;
    }
    if (ds.metadata.deletionTimestamp) return;
    const selector = selectorOf(ds);
    const candidates = pods.list().filter((p) => p.metadata.namespace === ds.metadata.namespace);
    const owned = await claim(candidates, {
      client: ctx.client,
      resource: PODS,
      owner: ds,
      matches: (p) => matchesLabels(selector, p.metadata.labels),
      canAdopt: ownerStillThere(ctx.client, DAEMON_SETS, ds),
    });
    const hash = templateHash(ds.spec?.template ?? {}, ds.status?.collisionCount);
    const histories = await claimHistory(ctx, ds, DAEMON_SETS, selector);
    const { old } = await constructHistory(ctx, ds, DAEMON_SETS, histories, hash);
    const nodeList = nodes.list();
    const satisfied = expectations.satisfied(key);
    let error: Error | undefined;
    let requeueAfterMs: number | undefined;
    if (satisfied) {
      const managed = await manage(ds, nodeList, byNode(owned), hash);
      error = managed.error;
      requeueAfterMs = managed.retryFailedInMs;
      if (!error && expectations.satisfied(key) && (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        error = await rollingUpdate(ds, nodeList, byNode(owned), hash);
      }
      if (!error) await cleanupHistory(ctx, ds, old, owned);
    }
    const now = ctx.clock.now();
    const status = daemonSetStatus(ds, nodeList, byNode(owned), hash, now, satisfied);
    if (!sameJson(status, ds.status ?? {})) await ctx.client.update(DAEMON_SETS, { ...ds, status }, 'status');
    if (error) throw error;
    const waits = owned.map((p) => msUntilAvailable(p, ds.spec?.minReadySeconds ?? 0, now)).filter((ms): ms is number => ms !== undefined);
    if (requeueAfterMs !== undefined) waits.push(requeueAfterMs);
    if (waits.length) return { requeueAfterMs: Math.min(...waits) + 50 };
  }

  /** kube's manage: create where missing, delete duplicates, failed pods and pods where they no longer belong. */
  async function manage(ds: api.DaemonSet, nodeList: api.Node[], podsByNode: Map<string, api.Pod[]>, hash: string): Promise<{ error?: Error; retryFailedInMs?: number }> {
    const key = keyFor(ds);
    const now = ctx.clock.now();
    const needPods: string[] = [];
    const toDelete: api.Pod[] = [];
    let retryFailedInMs: number | undefined;
    for (const node of nodeList) {
      const name = node.metadata.name;
      const onNode = podsByNode.get(name) ?? [];
      const verdict = nodeVerdict(node, ds);
      if (verdict.shouldRun && onNode.length === 0) {
        needPods.push(name);
      } else if (verdict.shouldContinueRunning) {
        const running: api.Pod[] = [];
        for (const pod of onNode) {
          if (pod.metadata.deletionTimestamp) continue;
          if (pod.status?.phase === 'Failed') {
            const backoffKey = `${key}/${name}`;
            const backoff = failedBackoff.get(backoffKey);
            if (backoff && backoff.notBefore > now) {
              retryFailedInMs = Math.min(retryFailedInMs ?? Infinity, backoff.notBefore - now);
              continue;
            }
            const delayMs = Math.min(FAILED_POD_BACKOFF.maxMs, backoff ? backoff.delayMs * 2 : FAILED_POD_BACKOFF.initialMs);
            failedBackoff.set(backoffKey, { delayMs, notBefore: now + delayMs });
            void ctx.events.event(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${name}, will try to kill it`);
            toDelete.push(pod);
          } else if (isTerminal(pod)) {
            toDelete.push(pod);
          } else {
            running.push(pod);
          }
        }
        if (updateBudget(ds, 1)[0] === 0) {
          toDelete.push(...oldestFirst(running).slice(1));
        } else {
          // Surging: the oldest up-to-date pod and the oldest old pod may both stay.
          const sorted = oldestFirst(running);
          const keepFresh = sorted.find((p) => isUpdated(p, hash, ds));
          const keepOld = sorted.find((p) => !isUpdated(p, hash, ds));
          toDelete.push(...sorted.filter((p) => p !== keepFresh && p !== keepOld));
        }
      } else {
        toDelete.push(...onNode.filter((p) => !p.metadata.deletionTimestamp));
      }
    }
    // Unscheduled pods aimed at a node that is gone can never run; nothing else would delete them.
    const existing = new Set(nodeList.map((n) => n.metadata.name));
    for (const [node, onNode] of podsByNode) if (!existing.has(node)) toDelete.push(...onNode.filter((p) => !p.spec?.nodeName && !p.metadata.deletionTimestamp));
    return { error: await syncNodes(ds, needPods, toDelete, hash), retryFailedInMs };
  }

  async function syncNodes(ds: api.DaemonSet, needPods: string[], toDelete: api.Pod[], hash: string): Promise<Error | undefined> {
    const create = needPods.slice(0, BURST_REPLICAS);
    const remove = toDelete.slice(0, BURST_REPLICAS);
    if (!create.length && !remove.length) return undefined;
    expectations.expect(keyFor(ds), create.length, remove.map(keyFor));
    const [created, deleted] = await Promise.all([createPods(ctx, ds, create.length, (i) => daemonPod(ds, hash, create[i]), expectations), deletePods(ctx, ds, remove, expectations)]);
    return created ?? deleted;
  }

  async function rollingUpdate(ds: api.DaemonSet, nodeList: api.Node[], podsByNode: Map<string, api.Pod[]>, hash: string): Promise<Error | undefined> {
    let desired = 0;
    const wanted = new Set<string>();
    for (const node of nodeList) {
      if (!nodeVerdict(node, ds).shouldRun) continue;
      desired++;
      wanted.add(node.metadata.name);
      if (!podsByNode.has(node.metadata.name)) podsByNode.set(node.metadata.name, []);
    }
    const step = rollingUpdateStep(ds, desired, podsByNode, (node) => wanted.has(node), hash, ctx.clock.now());
    return syncNodes(ds, step.surgeNodes, step.deletions, hash);
  }

  return controller;
}

/** The DaemonSet's pods by the node each is for. */
function byNode(pods: api.Pod[]): Map<string, api.Pod[]> {
  const map = new Map<string, api.Pod[]>();
  for (const pod of pods) {
    const node = targetNode(pod);
    if (!node) continue;
    map.set(node, [...(map.get(node) ?? []), pod]);
  }
  return map;
}
