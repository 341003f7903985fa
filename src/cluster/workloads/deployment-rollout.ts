// One sync of one Deployment, as kube's deployment controller does it, over the ReplicaSets it
// owns: find or create the new ReplicaSet (named `<deployment>-<pod-template-hash>`), resize on a
// scaling event (proportionally in mid-rollout), roll — RollingUpdate grows the new ReplicaSet
// within maxSurge and shrinks the old ones within maxUnavailable, unhealthy replicas first;
// Recreate scales the old ones to zero and waits for their pods to be gone before the new one
// grows — delete history beyond revisionHistoryLimit once complete, and write the status. Every
// write keeps this sync's copy of the objects current, and every write carries the
// resourceVersion it was computed from, so two syncs on stale caches cannot both act.
import type * as api from '../../api/index.js';
import { type SyncResult, isAlreadyExists, isNotFound } from '../../kube/index.js';
import { sameJson } from '../../kube/canonical.js';
import type { WorkloadContext } from './context.js';
import { historyToDelete, maxRevision, newReplicaSetAnnotations, replicasAnnotations, replicasAnnotationsNeedUpdate, revisionOf } from './deployment-revisions.js';
import { activeOrLatest, byCreation, isRollingUpdate, maxUnavailable, newReplicaSetSize, proportionalSizes, replicasOf, sumReplicas } from './deployment-scaling.js';
import {
  availableReplicas, calculateStatus, condition, type DeploymentStatus, deploymentComplete, hasProgressDeadline, newCondition, pausedCondition, progressDeadline, REASON, rolloutStatus, setCondition, storedStatus,
} from './deployment-status.js';
import { isTerminal } from './pods.js';
import { controllerOf, controllerReference } from '../../kube/index.js';
import { DEPLOYMENTS, DESIRED_REPLICAS, REPLICA_SETS, REVISION } from './resources.js';
import { equalIgnoringHash, POD_TEMPLATE_HASH, templateHash } from '../../kube/template-hash.js';

const available = (rs: api.ReplicaSet) => Math.min(rs.status?.availableReplicas ?? 0, replicasOf(rs));
const isActiveRS = (rs: api.ReplicaSet) => replicasOf(rs) > 0;

export class DeploymentRollout {
  private newUid?: string;

  constructor(
    private readonly ctx: WorkloadContext,
    private d: api.Deployment,
    private rss: api.ReplicaSet[],
    private readonly pods: () => api.Pod[],
  ) {}

  private now(): number {
    return this.ctx.clock.now();
  }

  /** The new ReplicaSet (this sync's copy) and the old ones. */
  private split(): { newRS?: api.ReplicaSet; oldRSs: api.ReplicaSet[] } {
    const newRS = this.rss.find((rs) => rs.metadata.uid === this.newUid);
    return { newRS, oldRSs: this.rss.filter((rs) => rs !== newRS) };
  }

  private replace(updated: api.ReplicaSet): api.ReplicaSet {
    const i = this.rss.findIndex((rs) => rs.metadata.uid === updated.metadata.uid);
    if (i >= 0) this.rss[i] = updated;
    else this.rss.push(updated);
    return updated;
  }

  private async updateStatus(status: DeploymentStatus): Promise<void> {
    const stored = storedStatus(status);
    if (sameJson(stored, this.d.status ?? {})) return;
    const updated = await this.ctx.client.update(DEPLOYMENTS, { ...this.d, status: stored }, 'status');
    this.d = { ...this.d, metadata: { ...this.d.metadata, resourceVersion: updated.metadata.resourceVersion }, status: updated.status };
  }

  private async setCondition(next: ReturnType<typeof newCondition>): Promise<void> {
    await this.updateStatus({ ...(this.d.status ?? {}), conditions: setCondition(this.d.status?.conditions, next) });
  }

  /**
   * The Deployment's revision annotation follows its new ReplicaSet's. Written with the status, as
   * kube does it, so that it is no change of the Deployment's generation.
   */
  private async setRevision(revision: string): Promise<void> {
    if (this.d.metadata.annotations?.[REVISION] === revision) return;
    const metadata = { ...this.d.metadata, annotations: { ...(this.d.metadata.annotations ?? {}), [REVISION]: revision } };
    const updated = await this.ctx.client.update(DEPLOYMENTS, { ...this.d, metadata }, 'status');
    this.d = { ...this.d, metadata: { ...metadata, resourceVersion: updated.metadata.resourceVersion }, status: updated.status };
  }

  /** kube's getNewReplicaSet: the ReplicaSet whose template is the Deployment's, created if asked. */
  private async newReplicaSet(create: boolean): Promise<api.ReplicaSet | undefined> {
    const d = this.d;
    const existing = byCreation(this.rss).find((rs) => equalIgnoringHash(rs.spec?.template, d.spec?.template));
    const newRevision = maxRevision(this.rss.filter((rs) => rs !== existing)) + 1;
    if (existing) {
      this.newUid = existing.metadata.uid;
      const { annotations, changed } = newReplicaSetAnnotations(d, existing, newRevision, true);
      if (changed || (existing.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0)) {
        const spec = { ...existing.spec, minReadySeconds: d.spec?.minReadySeconds ?? 0 } as api.ReplicaSet['spec'];
        return this.replace(await this.ctx.client.update(REPLICA_SETS, { ...existing, metadata: { ...existing.metadata, annotations }, spec }));
      }
      await this.setRevision(existing.metadata.annotations?.[REVISION] ?? String(revisionOf(existing)));
      if (hasProgressDeadline(d) && !condition(this.d.status?.conditions, 'Progressing')) {
        await this.setCondition(newCondition('Progressing', 'True', REASON.foundNewRS, `Found new replica set "${existing.metadata.name}"`, this.now()));
      }
      return existing;
    }
    if (!create) return undefined;
    // A stored Deployment has its spec: the API server requires its selector and template.
    const dSpec = d.spec!;
    const hash = templateHash(dSpec.template, d.status?.collisionCount);
    const template = structuredClone(dSpec.template);
    const labels = { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH]: hash };
    template.metadata = { ...(template.metadata ?? {}), labels };
    const selector = structuredClone(dSpec.selector);
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH]: hash };
    const name = `${d.metadata.name}-${hash}`;
    const spec = { replicas: 0, minReadySeconds: dSpec.minReadySeconds ?? 0, selector, template };
    const rs: api.ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: d.metadata.namespace, labels, ownerReferences: [controllerReference(d)] },
      spec,
    };
    spec.replicas = newReplicaSetSize(d, [...this.rss, rs], rs);
    rs.metadata.annotations = newReplicaSetAnnotations(d, rs, newRevision, false).annotations;
    let created: api.ReplicaSet;
    let alreadyExisted = false;
    try {
      created = await this.ctx.client.create(REPLICA_SETS, rs);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        if (hasProgressDeadline(d)) {
          await this.setCondition(newCondition('Progressing', 'False', REASON.failedRSCreate, `Failed to create new replica set "${name}": ${(e as Error).message}`, this.now()));
        }
        throw e;
      }
      // Ours from a sync whose result the cache has not shown yet, or a hash collision.
      const found = await this.ctx.client.read(REPLICA_SETS, name, d.metadata.namespace);
      if (!found || controllerOf(found)?.uid !== d.metadata.uid || !equalIgnoringHash(dSpec.template, found.spec?.template)) {
        await this.updateStatus({ ...(this.d.status ?? {}), collisionCount: (this.d.status?.collisionCount ?? 0) + 1 });
        throw e;
      }
      created = found;
      alreadyExisted = true;
    }
    this.newUid = created.metadata.uid;
    this.replace(created);
    if (!alreadyExisted && replicasOf(created) > 0) {
      void this.ctx.events.event(this.d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${name} from 0 to ${replicasOf(created)}`);
    }
    await this.setRevision(String(newRevision));
    if (!alreadyExisted && hasProgressDeadline(d)) {
      await this.setCondition(newCondition('Progressing', 'True', REASON.newRSCreated, `Created new replica set "${name}"`, this.now()));
    }
    return created;
  }

  /** Resizes `rs` (and refreshes its replicas annotations); true when its size changed. */
  private async scaleReplicaSet(rs: api.ReplicaSet, size: number): Promise<boolean> {
    const from = replicasOf(rs);
    if (from === size && !replicasAnnotationsNeedUpdate(rs, this.d)) return false;
    const annotations = { ...(rs.metadata.annotations ?? {}), ...replicasAnnotations(this.d) };
    this.replace(await this.ctx.client.update(REPLICA_SETS, { ...rs, metadata: { ...rs.metadata, annotations }, spec: { ...rs.spec, replicas: size } as api.ReplicaSet['spec'] }));
    if (from === size) return false;
    void this.ctx.events.event(this.d, 'Normal', 'ScalingReplicaSet', `Scaled ${size > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${size}`);
    return true;
  }

  private async scaleTo(rs: api.ReplicaSet, size: number): Promise<boolean> {
    return replicasOf(rs) === size ? false : this.scaleReplicaSet(rs, size);
  }

  /** A resize of the Deployment, not a template change: a ReplicaSet's desired-replicas disagrees. */
  async isScalingEvent(): Promise<boolean> {
    await this.newReplicaSet(false);
    return this.rss.filter(isActiveRS).some((rs) => {
      const desired = rs.metadata.annotations?.[DESIRED_REPLICAS];
      return desired !== undefined && Number(desired) !== replicasOf(this.d);
    });
  }

  /** kube's scale: resize the one active ReplicaSet, or share the resize out over all active ones. */
  private async scale(): Promise<void> {
    const { newRS, oldRSs } = this.split();
    const single = activeOrLatest(newRS, oldRSs);
    if (single) {
      await this.scaleTo(single, replicasOf(this.d));
      return;
    }
    const saturated = newRS && replicasOf(newRS) === replicasOf(this.d) && Number(newRS.metadata.annotations?.[DESIRED_REPLICAS]) === replicasOf(this.d) && (newRS.status?.availableReplicas ?? 0) === replicasOf(this.d);
    if (saturated) {
      for (const rs of oldRSs.filter(isActiveRS)) await this.scaleTo(rs, 0);
      return;
    }
    if (!isRollingUpdate(this.d)) return;
    const active = this.rss.filter(isActiveRS);
    const sizes = proportionalSizes(this.d, active);
    for (const rs of active) await this.scaleReplicaSet(rs, sizes.get(rs.metadata.name) ?? replicasOf(rs));
  }

  /** Paused, or resized: scale without rolling (kube's sync). */
  async syncScale(): Promise<SyncResult | void> {
    await this.newReplicaSet(false);
    await this.scale();
    if (this.d.spec?.paused) await this.cleanup();
    await this.updateStatus(calculateStatus(this.rss, this.split().newRS, this.d, this.now()));
  }

  /** Being deleted: only the status follows. */
  async syncStatusOnly(): Promise<void> {
    await this.newReplicaSet(false);
    await this.updateStatus(calculateStatus(this.rss, this.split().newRS, this.d, this.now()));
  }

  /** Progressing=Unknown DeploymentPaused / DeploymentResumed as the Deployment is paused or resumed. */
  async checkPaused(): Promise<void> {
    const next = pausedCondition(this.d, this.now());
    if (next) await this.setCondition(next);
  }

  async rolling(): Promise<SyncResult | void> {
    const newRS = (await this.newReplicaSet(true))!;
    if (await this.reconcileNew(newRS)) return this.syncRolloutStatus();
    if (await this.reconcileOld()) return this.syncRolloutStatus();
    if (deploymentComplete(this.d, this.d.status ?? {})) await this.cleanup();
    return this.syncRolloutStatus();
  }

  private async reconcileNew(newRS: api.ReplicaSet): Promise<boolean> {
    const want = replicasOf(this.d);
    if (replicasOf(newRS) === want) return false;
    if (replicasOf(newRS) > want) return this.scaleTo(newRS, want);
    return this.scaleTo(newRS, newReplicaSetSize(this.d, this.rss, newRS));
  }

  /**
   * Shrinks the old ReplicaSets as far as maxUnavailable allows: their unavailable replicas first
   * (they cost no availability), then available ones while enough stay available.
   */
  private async reconcileOld(): Promise<boolean> {
    const { newRS } = this.split();
    if (sumReplicas(this.split().oldRSs.filter(isActiveRS)) === 0) return false;
    const minAvailable = replicasOf(this.d) - maxUnavailable(this.d);
    const newUnavailable = newRS ? replicasOf(newRS) - available(newRS) : 0;
    const maxScaledDown = sumReplicas(this.rss) - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    let cleaned = 0;
    for (const rs of byCreation(this.split().oldRSs.filter(isActiveRS))) {
      if (cleaned >= maxScaledDown) break;
      const unhealthy = replicasOf(rs) - available(rs);
      if (unhealthy === 0) continue;
      const n = Math.min(maxScaledDown - cleaned, unhealthy);
      await this.scaleTo(rs, replicasOf(rs) - n);
      cleaned += n;
    }
    let scaledDown = 0;
    const canLose = availableReplicas(this.rss) - minAvailable;
    for (const rs of byCreation(this.split().oldRSs.filter(isActiveRS))) {
      if (scaledDown >= canLose) break;
      const n = Math.min(replicasOf(rs), canLose - scaledDown);
      await this.scaleTo(rs, replicasOf(rs) - n);
      scaledDown += n;
    }
    return cleaned + scaledDown > 0;
  }

  async recreate(): Promise<SyncResult | void> {
    let newRS = await this.newReplicaSet(false);
    let scaledDown = false;
    for (const rs of this.split().oldRSs.filter(isActiveRS)) if (await this.scaleTo(rs, 0)) scaledDown = true;
    if (scaledDown || this.oldPodsRunning()) return this.syncRolloutStatus();
    newRS ??= (await this.newReplicaSet(true))!;
    await this.scaleTo(newRS, replicasOf(this.d));
    if (deploymentComplete(this.d, this.d.status ?? {})) await this.cleanup();
    return this.syncRolloutStatus();
  }

  /** Recreate waits until no pod of an old ReplicaSet is left running. */
  private oldPodsRunning(): boolean {
    const { oldRSs } = this.split();
    if (oldRSs.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
    const old = new Set(oldRSs.map((rs) => rs.metadata.uid));
    return this.pods().some((pod) => old.has(controllerOf(pod)?.uid ?? '') && !isTerminal(pod));
  }

  private async cleanup(): Promise<void> {
    for (const rs of historyToDelete(this.d, this.split().oldRSs)) {
      try {
        await this.ctx.client.request('DELETE', `/apis/apps/v1/namespaces/${encodeURIComponent(rs.metadata.namespace ?? '')}/replicasets/${encodeURIComponent(rs.metadata.name)}`, {
          body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: rs.metadata.uid } },
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  /** Writes the rollout status; asks to be run again when the progress deadline falls due. */
  private async syncRolloutStatus(): Promise<SyncResult | void> {
    const before = this.d;
    const status = rolloutStatus(this.rss, this.split().newRS, before, this.now());
    await this.updateStatus(status);
    const progressing = condition(before.status?.conditions, 'Progressing');
    if (!progressing || deploymentComplete(before, status) || progressing.reason === REASON.timedOut) return;
    const deadline = progressDeadline(before, status);
    if (deadline === undefined) return;
    return { requeueAfterMs: Math.max(1000, deadline - this.now() + 1000) };
  }
}
