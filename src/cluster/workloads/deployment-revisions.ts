// A Deployment's revisions, kept as kube keeps them: each ReplicaSet carries
// `deployment.kubernetes.io/revision`; the new one gets the highest old revision + 1, so rolling
// back to an old template (`kubectl rollout undo` edits the template back) reuses that ReplicaSet
// under a new number and remembers the old numbers in `revision-history`. The Deployment's own
// annotations are copied onto its ReplicaSets (kubectl's change-cause shows in `rollout history`).
// Old ReplicaSets beyond revisionHistoryLimit, scaled to zero, are deleted oldest revision first.
// Pure.
import type * as api from '../../api/index.js';
import { maxSurge, replicasOf } from './deployment-scaling.js';
import { DESIRED_REPLICAS, MAX_REPLICAS, REVISION, REVISION_HISTORY } from './resources.js';

/** kube-controller-manager's --deployment-controller… default for the history annotation's length. */
const MAX_HISTORY_CHARS = 2000;

/** Annotations that belong to one object and are never copied from Deployment to ReplicaSet. */
const NOT_COPIED = new Set(['kubectl.kubernetes.io/last-applied-configuration', REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, 'deprecated.deployment.rollback.to']);

export function revisionOf(object: api.KubeObject | undefined): number {
  const n = Number.parseInt(object?.metadata?.annotations?.[REVISION] ?? '', 10);
  return Number.isFinite(n) ? n : 0;
}

export function maxRevision(rss: api.ReplicaSet[]): number {
  return Math.max(0, ...rss.map(revisionOf));
}

/** The desired-replicas and max-replicas annotations a ReplicaSet of `d` should carry. */
export function replicasAnnotations(d: api.Deployment): Record<string, string> {
  return { [DESIRED_REPLICAS]: String(replicasOf(d)), [MAX_REPLICAS]: String(replicasOf(d) + maxSurge(d)) };
}

export function replicasAnnotationsNeedUpdate(rs: api.ReplicaSet, d: api.Deployment): boolean {
  const want = replicasAnnotations(d);
  return Object.entries(want).some(([k, v]) => rs.metadata?.annotations?.[k] !== v);
}

/**
 * The new ReplicaSet's annotations (kube's SetNewReplicaSetAnnotations): the Deployment's copied,
 * the revision raised to `newRevision` if lower (the old one moved into the history), and for a
 * ReplicaSet about to be created the replicas annotations.
 */
export function newReplicaSetAnnotations(d: api.Deployment, rs: api.ReplicaSet, newRevision: number, exists: boolean): { annotations: Record<string, string>; changed: boolean } {
  const annotations: Record<string, string> = { ...(rs.metadata?.annotations ?? {}) };
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) {
    if (NOT_COPIED.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  const oldText = annotations[REVISION];
  const old = revisionOf(rs);
  if (old < newRevision) {
    annotations[REVISION] = String(newRevision);
    changed = true;
    if (oldText !== undefined) {
      const history = annotations[REVISION_HISTORY] ? annotations[REVISION_HISTORY].split(',') : [];
      history.push(oldText);
      while (history.length > 1 && history.join(',').length > MAX_HISTORY_CHARS) history.shift();
      annotations[REVISION_HISTORY] = history.join(',');
    }
  }
  if (!exists) {
    Object.assign(annotations, replicasAnnotations(d));
    changed = true;
  }
  return { annotations, changed };
}

/** Old ReplicaSets to delete beyond revisionHistoryLimit (kube's cleanupDeployment). */
export function historyToDelete(d: api.Deployment, oldRSs: api.ReplicaSet[]): api.ReplicaSet[] {
  const limit = d.spec?.revisionHistoryLimit;
  if (limit === undefined || limit === null) return [];
  const alive = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const excess = alive.length - limit;
  if (excess <= 0) return [];
  const byRevision = [...alive].sort((a, b) => revisionOf(a) - revisionOf(b) || ((a.metadata.creationTimestamp ?? '') < (b.metadata.creationTimestamp ?? '') ? -1 : 1));
  return byRevision
    .slice(0, excess)
    .filter((rs) => (rs.status?.replicas ?? 0) === 0 && replicasOf(rs) === 0 && (rs.metadata.generation ?? 0) <= (rs.status?.observedGeneration ?? 0));
}
