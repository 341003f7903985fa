// The Deployment controller, as kube-controller-manager's: claims the ReplicaSets its selector
// matches (adopting orphans, releasing what no longer matches), then, level-triggered from the
// Deployment and its ReplicaSets, runs one sync (deployment-rollout.ts): status only while it is
// being deleted; scaling only while paused or when only `replicas` changed; otherwise a
// RollingUpdate or Recreate step. Pod deletions wake it too, since Recreate waits for old pods.
import { Controller, type SyncResult } from '../../kube/index.js';
import { matchesLabels } from '../../common/label-selectors.js';
import { claim, ownerStillThere } from './claim.js';
import { controllingOwner, keyFor, type WorkloadContext } from './context.js';
import { DeploymentRollout } from './deployment-rollout.js';
import { isRollingUpdate } from './deployment-scaling.js';
import { ownerKeys, selectorOf } from './owners.js';
import { DEPLOYMENTS, REPLICA_SETS } from './resources.js';

export function deploymentController(ctx: WorkloadContext): Controller {
  const { deployments, replicaSets, pods } = ctx.informers;

  const controller = new Controller({ name: 'deployment-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(deployments);
  // A ReplicaSet event concerns its Deployment, or for an orphan every one selecting it.
  controller.watch(replicaSets, (rs, _type, old) => ownerKeys(rs, old, 'Deployment', deployments));
  controller.watch(pods, (pod, type) => {
    if (type !== 'delete') return undefined;
    const owner = controllingOwner(controllingOwner(pod, 'ReplicaSet', replicaSets), 'Deployment', deployments);
    return owner && owner.spec?.strategy?.type === 'Recreate' ? keyFor(owner) : undefined;
  });

  async function sync(key: string): Promise<SyncResult | void> {
    const cached = deployments.getByKey(key);
    if (!cached) return;
    const d = structuredClone(cached);
    const selector = selectorOf(d);
    if (selector.length === 0) {
      void ctx.events.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        await ctx.client.update(DEPLOYMENTS, { ...d, status: { ...(d.status ?? {}), observedGeneration: d.metadata.generation } }, 'status');
      }
      return;
    }
    const candidates = replicaSets.list().filter((rs) => rs.metadata.namespace === d.metadata.namespace);
    const owned = await claim(candidates, {
      client: ctx.client,
      resource: REPLICA_SETS,
      owner: d,
      matches: (rs) => matchesLabels(selector, rs.metadata.labels),
      canAdopt: ownerStillThere(ctx.client, DEPLOYMENTS, d),
    });
    const rollout = new DeploymentRollout(ctx, d, owned, () => pods.list().filter((p) => p.metadata.namespace === d.metadata.namespace));
    if (d.metadata.deletionTimestamp) return rollout.syncStatusOnly();
    await rollout.checkPaused();
    if (d.spec?.paused || (await rollout.isScalingEvent())) return rollout.syncScale();
    return isRollingUpdate(d) ? rollout.rolling() : rollout.recreate();
  }

  return controller;
}
