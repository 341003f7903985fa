// The ReplicaSet controller, as kube-controller-manager's: keeps `spec.replicas` pods from the
// template, owned through a controller reference; adopts orphans its selector matches and
// releases pods it no longer matches; creates with generated names and deletes in kube's order
// (delete-order.ts); writes the status (replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas after minReadySeconds, observedGeneration, ReplicaFailure). Expectations keep a
// slow informer from making it act twice on the same shortfall.
import type * as api from '../../api/index.js';
import { Controller, type SyncResult } from '../../kube/index.js';
import { matchesLabels } from '../../common/label-selectors.js';
import { sameJson } from '../../kube/canonical.js';
import { claim, ownerStillThere } from './claim.js';
import { keyFor, type WorkloadContext } from './context.js';
import { podsToDelete } from './delete-order.js';
import { Expectations } from './expectations.js';
import { BURST_REPLICAS, createPods, deletePods, observePods } from './pod-control.js';
import { isActive, msUntilAvailable, podFromTemplate } from './pods.js';
import { controllerOf } from '../../kube/index.js';
import { ownerKeys, selectorOf } from './owners.js';
import { replicaSetStatus, type ManageFailure } from './replicaset.js';
import { PODS, REPLICA_SETS } from './resources.js';

export function replicaSetController(ctx: WorkloadContext, expectations = new Expectations(ctx.clock)): Controller {
  const { pods, replicaSets } = ctx.informers;
  observePods(ctx, 'ReplicaSet', expectations);

  const controller = new Controller({ name: 'replicaset-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(replicaSets);
  // A pod event concerns its ReplicaSet, or for an orphan every one (not being deleted) that selects it.
  controller.watch(pods, (pod, _type, old) => ownerKeys(pod, old, 'ReplicaSet', replicaSets, (rs) => !rs.metadata.deletionTimestamp));

  async function sync(key: string): Promise<SyncResult | void> {
    const rs = replicaSets.getByKey(key);
    if (!rs) {
      expectations.forget(key);
      return;
    }
    const needsSync = expectations.satisfied(key);
    const selector = selectorOf(rs);
    const candidates = pods.list().filter((p) => p.metadata.namespace === rs.metadata.namespace && isActive(p));
    const owned = await claim(candidates, {
      client: ctx.client,
      resource: PODS,
      owner: rs,
      matches: (p) => matchesLabels(selector, p.metadata.labels),
      canAdopt: ownerStillThere(ctx.client, REPLICA_SETS, rs),
    });
    let failure: ManageFailure | undefined;
    let manageError: Error | undefined;
    if (needsSync && !rs.metadata.deletionTimestamp) {
      ({ failure, error: manageError } = await manageReplicas(rs, owned));
    }
    const now = ctx.clock.now();
    const status = replicaSetStatus(rs, owned, failure, now);
    if (!sameJson(status, rs.status ?? {})) await ctx.client.update(REPLICA_SETS, { ...rs, status }, 'status');
    if (manageError) throw manageError;
    // Pods ready but not yet for minReadySeconds become available without an event: look again then.
    const waits = owned.map((p) => msUntilAvailable(p, rs.spec?.minReadySeconds ?? 0, now)).filter((ms): ms is number => ms !== undefined);
    if (waits.length) return { requeueAfterMs: Math.min(...waits) + 50 };
  }

  async function manageReplicas(rs: api.ReplicaSet, owned: api.Pod[]): Promise<{ failure?: ManageFailure; error?: Error }> {
    const key = keyFor(rs);
    const diff = owned.length - (rs.spec?.replicas ?? 1);
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      expectations.expect(key, count);
      const error = await createPods(ctx, rs, count, () => podFromTemplate(rs.spec?.template, rs), expectations);
      return error ? { error, failure: { reason: 'FailedCreate', message: error.message } } : {};
    }
    if (diff > 0) {
      const victims = podsToDelete(owned, relatedPods(rs), Math.min(diff, BURST_REPLICAS), ctx.clock.now());
      expectations.expect(key, 0, victims.map(keyFor));
      const error = await deletePods(ctx, rs, victims, expectations);
      return error ? { error, failure: { reason: 'FailedDelete', message: error.message } } : {};
    }
    return {};
  }

  /**
   * The active pods of this ReplicaSet and of its siblings (the ReplicaSets with the same
   * controller), so that scale-down prefers pods on nodes crowded by the whole Deployment.
   */
  function relatedPods(rs: api.ReplicaSet): api.Pod[] {
    const parent = controllerOf(rs)?.uid;
    const siblings = new Set(
      replicaSets
        .list()
        .filter((other) => other.metadata.namespace === rs.metadata.namespace && (other.metadata.uid === rs.metadata.uid || (parent && controllerOf(other)?.uid === parent)))
        .map((other) => other.metadata.uid),
    );
    return pods.list().filter((p) => p.metadata.namespace === rs.metadata.namespace && isActive(p) && siblings.has(controllerOf(p)?.uid ?? ''));
  }

  return controller;
}
