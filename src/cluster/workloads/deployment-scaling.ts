// The numbers of a Deployment rollout, as kube's deployment util computes them: maxSurge rounds
// up and maxUnavailable down (both zero means one may be unavailable), how far the new ReplicaSet
// may grow, and how a resize of a Deployment in mid-rollout spreads over its ReplicaSets in
// proportion to their sizes. Pure.
import type * as api from '../../api/index.js';
import { scaledValue } from '../../kube/int-or-percent.js';
import { MAX_REPLICAS } from './resources.js';

/** What has a size: a Deployment or a ReplicaSet. */
type Scalable = api.Deployment | api.ReplicaSet;

export function replicasOf(object: Scalable | undefined): number {
  return object?.spec?.replicas ?? 1;
}

export function isRollingUpdate(d: api.Deployment): boolean {
  return (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** kube's ResolveFenceposts: [maxSurge, maxUnavailable] for the Deployment's replicas. */
export function fenceposts(d: api.Deployment): [number, number] {
  const rolling = d.spec?.strategy?.rollingUpdate ?? {};
  const replicas = replicasOf(d);
  const surge = scaledValue(rolling.maxSurge, replicas, true, '25%');
  const unavailable = scaledValue(rolling.maxUnavailable, replicas, false, '25%');
  if (surge === 0 && unavailable === 0) return [0, 1];
  return [surge, unavailable];
}

export function maxSurge(d: api.Deployment): number {
  return isRollingUpdate(d) ? fenceposts(d)[0] : 0;
}

export function maxUnavailable(d: api.Deployment): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0;
  return Math.min(fenceposts(d)[1], replicasOf(d));
}

export function sumReplicas(rss: api.ReplicaSet[]): number {
  return rss.reduce((n, rs) => n + replicasOf(rs), 0);
}

/** Desired size of the new ReplicaSet this round (kube's NewRSNewReplicas). */
export function newReplicaSetSize(d: api.Deployment, all: api.ReplicaSet[], newRS: api.ReplicaSet): number {
  if (!isRollingUpdate(d)) return replicasOf(d);
  const total = sumReplicas(all);
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (total >= maxTotal) return replicasOf(newRS);
  const up = Math.min(maxTotal - total, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + up;
}

function creationOrder(a: api.ReplicaSet, b: api.ReplicaSet): number {
  const ta = a.metadata?.creationTimestamp ?? '';
  const tb = b.metadata?.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

/** Oldest first, by creation time then name (kube's ReplicaSetsByCreationTimestamp). */
export function byCreation(rss: api.ReplicaSet[]): api.ReplicaSet[] {
  return [...rss].sort(creationOrder);
}

/**
 * The one ReplicaSet to resize when the Deployment is scaled (kube's FindActiveOrLatest): the only
 * active one, or with none active the new one or else the newest old one; undefined when several
 * are active (then the resize is shared out proportionally).
 */
export function activeOrLatest(newRS: api.ReplicaSet | undefined, oldRSs: api.ReplicaSet[]): api.ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const active = [...oldRSs, ...(newRS ? [newRS] : [])].filter((rs) => replicasOf(rs) > 0);
  if (active.length === 1) return active[0];
  if (active.length > 1) return undefined;
  return newRS ?? byCreation(oldRSs).at(-1);
}

function maxReplicasAnnotation(rs: api.ReplicaSet): number | undefined {
  const value = Number.parseInt(rs.metadata?.annotations?.[MAX_REPLICAS] ?? '', 10);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * New sizes for the active ReplicaSets when a Deployment in mid-rollout is resized: each grows or
 * shrinks in proportion to its share (by the max-replicas each was last sized for), larger and
 * newer ones first when growing, older first when shrinking; what rounding leaves goes to the
 * first (kube's DeploymentController.scale).
 */
export function proportionalSizes(d: api.Deployment, active: api.ReplicaSet[]): Map<string, number> {
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowed - sumReplicas(active);
  const bySize = (newerFirst: boolean) => (a: api.ReplicaSet, b: api.ReplicaSet) => {
    if (replicasOf(a) !== replicasOf(b)) return replicasOf(b) - replicasOf(a);
    return newerFirst ? creationOrder(b, a) : creationOrder(a, b);
  };
  const ordered = [...active].sort(bySize(toAdd > 0));
  const sizes = new Map<string, number>();
  let added = 0;
  for (const rs of ordered) {
    let proportion = 0;
    if (replicasOf(rs) !== 0 && toAdd !== 0 && toAdd !== added) {
      const sizedFor = maxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0;
      const fraction =
        replicasOf(d) === 0 ? -replicasOf(rs) : sizedFor > 0 ? Math.round((replicasOf(rs) * (replicasOf(d) + maxSurge(d))) / sizedFor) - replicasOf(rs) : 0;
      const left = toAdd - added;
      proportion = toAdd > 0 ? Math.min(fraction, left) : Math.max(fraction, left);
    }
    sizes.set(rs.metadata.name, replicasOf(rs) + proportion);
    added += proportion;
  }
  if (ordered.length && added !== toAdd) {
    const first = ordered[0].metadata.name;
    sizes.set(first, Math.max(0, (sizes.get(first) ?? 0) + toAdd - added));
  }
  return sizes;
}
