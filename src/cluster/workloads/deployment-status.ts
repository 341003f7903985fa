// A Deployment's status and conditions exactly as kube's deployment controller writes them, which
// is what `kubectl rollout status` reads: the replica counts summed over its ReplicaSets;
// Available (MinimumReplicasAvailable / MinimumReplicasUnavailable); Progressing (NewReplicaSetCreated,
// FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded,
// DeploymentPaused / DeploymentResumed) with lastUpdateTime moving on every progress and
// lastTransitionTime only on a change of status. Pure: callers pass the time.
import type * as api from '../../api/index.js';
import { rfc3339 } from '../../kube/index.js';
import { omitEmpty } from '../../kube/canonical.js';
import { maxUnavailable, replicasOf } from './deployment-scaling.js';

export interface DeploymentCondition {
  type: string;
  status: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** A Deployment's status as stored. */
export type DeploymentStatus = NonNullable<api.Deployment['status']>;

export const REASON = {
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  rsUpdated: 'ReplicaSetUpdated',
  newRSAvailable: 'NewReplicaSetAvailable',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  failedRSCreate: 'ReplicaSetCreateError',
  minimumAvailable: 'MinimumReplicasAvailable',
  minimumUnavailable: 'MinimumReplicasUnavailable',
} as const;

export function condition(conditions: DeploymentCondition[] | undefined, type: string): DeploymentCondition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function newCondition(type: string, status: string, reason: string, message: string, now: number): DeploymentCondition {
  const time = rfc3339(new Date(now));
  return { type, status, lastUpdateTime: time, lastTransitionTime: time, reason, message };
}

/**
 * kube's SetDeploymentCondition: the same status and reason changes nothing; the same status keeps
 * its lastTransitionTime; the condition moves to the end of the list.
 */
export function setCondition(conditions: DeploymentCondition[] | undefined, next: DeploymentCondition): DeploymentCondition[] {
  const list = conditions ?? [];
  const current = condition(list, next.type);
  if (current && current.status === next.status && current.reason === next.reason) return list;
  const placed = current && current.status === next.status ? { ...next, lastTransitionTime: current.lastTransitionTime } : next;
  return [...list.filter((c) => c.type !== next.type), placed];
}

export function removeCondition(conditions: DeploymentCondition[] | undefined, type: string): DeploymentCondition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function hasProgressDeadline(d: api.Deployment): boolean {
  const seconds = d.spec?.progressDeadlineSeconds;
  return seconds !== undefined && seconds !== null && seconds !== 2147483647;
}

const sum = (rss: api.ReplicaSet[], field: 'replicas' | 'readyReplicas') => rss.reduce((n, rs) => n + (rs.status?.[field] ?? 0), 0);

/**
 * Available replicas counted as kube counts them (the ReplicaSets' statuses), except that a
 * ReplicaSet never counts more than it is sized for: between a scale-down and its ReplicaSet
 * controller's next status, the status still counts pods about to go.
 */
export function availableReplicas(rss: api.ReplicaSet[]): number {
  return rss.reduce((n, rs) => n + Math.min(rs.status?.availableReplicas ?? 0, replicasOf(rs)), 0);
}

/** kube's calculateStatus: counts and the Available condition (other conditions carried over). */
export function calculateStatus(all: api.ReplicaSet[], newRS: api.ReplicaSet | undefined, d: api.Deployment, now: number): DeploymentStatus {
  const available = availableReplicas(all);
  const total = all.reduce((n, rs) => n + replicasOf(rs), 0);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata?.generation,
    replicas: sum(all, 'replicas'),
    updatedReplicas: newRS ? (newRS.status?.replicas ?? 0) : 0,
    readyReplicas: sum(all, 'readyReplicas'),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    conditions: [...(d.status?.conditions ?? [])],
  };
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  status.conditions =
    available >= replicasOf(d) - maxUnavailable(d)
      ? setCondition(status.conditions, newCondition('Available', 'True', REASON.minimumAvailable, 'Deployment has minimum availability.', now))
      : setCondition(status.conditions, newCondition('Available', 'False', REASON.minimumUnavailable, 'Deployment does not have minimum availability.', now));
  return status;
}

/** The status as stored: kube's omitempty fields left out when zero. */
export function storedStatus(status: DeploymentStatus): DeploymentStatus {
  return omitEmpty(status, ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'conditions']);
}

export function deploymentComplete(d: api.Deployment, status: DeploymentStatus): boolean {
  const want = replicasOf(d);
  return status.updatedReplicas === want && status.replicas === want && status.availableReplicas === want && (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
}

export function deploymentProgressing(d: api.Deployment, status: DeploymentStatus): boolean {
  const old: DeploymentStatus = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** When the progress deadline passes (ms since epoch), counted from the Progressing condition's lastUpdateTime. */
export function progressDeadline(d: api.Deployment, status: DeploymentStatus): number | undefined {
  if (!hasProgressDeadline(d)) return undefined;
  const progressing = condition(status.conditions, 'Progressing');
  if (!progressing?.lastUpdateTime) return undefined;
  return Date.parse(progressing.lastUpdateTime) + (d.spec?.progressDeadlineSeconds ?? 0) * 1000;
}

export function deploymentTimedOut(d: api.Deployment, status: DeploymentStatus, now: number): boolean {
  const progressing = condition(status.conditions, 'Progressing');
  if (!hasProgressDeadline(d) || !progressing) return false;
  if (progressing.reason === REASON.newRSAvailable) return false;
  if (progressing.reason === REASON.timedOut) return true;
  const deadline = progressDeadline(d, status);
  return deadline !== undefined && deadline < now;
}

/**
 * kube's syncRolloutStatus without the write: the new status with Progressing moved on —
 * complete, progressing (lastUpdateTime refreshed), or timed out.
 */
export function rolloutStatus(all: api.ReplicaSet[], newRS: api.ReplicaSet | undefined, d: api.Deployment, now: number): DeploymentStatus {
  const status = calculateStatus(all, newRS, d, now);
  if (!hasProgressDeadline(d)) status.conditions = removeCondition(status.conditions, 'Progressing');
  const current = condition(d.status?.conditions, 'Progressing');
  const complete = status.replicas === status.updatedReplicas && current?.reason === REASON.newRSAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const subject = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
    if (deploymentComplete(d, status)) {
      status.conditions = setCondition(status.conditions, newCondition('Progressing', 'True', REASON.newRSAvailable, `${subject} has successfully progressed.`, now));
    } else if (deploymentProgressing(d, status)) {
      const next = newCondition('Progressing', 'True', REASON.rsUpdated, `${subject} is progressing.`, now);
      // Progress refreshes lastUpdateTime even with the same reason (kube special-cases this).
      if (current?.status === 'True') next.lastTransitionTime = current.lastTransitionTime;
      status.conditions = [...removeCondition(status.conditions, 'Progressing'), next];
    } else if (deploymentTimedOut(d, status, now)) {
      status.conditions = setCondition(status.conditions, newCondition('Progressing', 'False', REASON.timedOut, `${subject} has timed out progressing.`, now));
    }
  }
  const failure = replicaFailure(all, newRS);
  status.conditions = failure ? setCondition(status.conditions, failure) : removeCondition(status.conditions, 'ReplicaFailure');
  return status;
}

/** The ReplicaSets' ReplicaFailure condition, the new ReplicaSet's first (kube's getReplicaFailures). */
function replicaFailure(all: api.ReplicaSet[], newRS: api.ReplicaSet | undefined): DeploymentCondition | undefined {
  for (const rs of [...(newRS ? [newRS] : []), ...all]) {
    const c = (rs.status?.conditions ?? []).find((x) => x.type === 'ReplicaFailure');
    if (c) return { type: 'ReplicaFailure', status: c.status, lastUpdateTime: c.lastTransitionTime, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: c.message };
  }
  return undefined;
}

/** The Progressing condition pausing or resuming sets, if it must change (kube's checkPausedConditions). */
export function pausedCondition(d: api.Deployment, now: number): DeploymentCondition | undefined {
  if (!hasProgressDeadline(d)) return undefined;
  const current = condition(d.status?.conditions, 'Progressing');
  if (current?.reason === REASON.timedOut) return undefined;
  const pausedNoted = current?.reason === REASON.paused;
  if (d.spec?.paused && !pausedNoted) return newCondition('Progressing', 'Unknown', REASON.paused, 'Deployment is paused', now);
  if (!d.spec?.paused && pausedNoted) return newCondition('Progressing', 'Unknown', REASON.resumed, 'Deployment is resumed', now);
  return undefined;
}
