// The ReplicaSet status kube's ReplicaSet controller writes, computed from the pods it owns: pure.
import type * as api from '../../api/index.js';
import type { Condition } from '../../kube/index.js';
import { rfc3339 } from '../../kube/index.js';
import { omitEmpty } from '../../kube/canonical.js';
import { isAvailable, isReady } from './pods.js';

/** Why managing replicas failed, for the ReplicaFailure condition. */
export interface ManageFailure {
  reason: 'FailedCreate' | 'FailedDelete';
  message: string;
}

export function hasAllLabels(labels: Record<string, string> | undefined, wanted: Record<string, string> | undefined): boolean {
  return Object.entries(wanted ?? {}).every(([k, v]) => labels?.[k] === v);
}

/**
 * The status for `pods` (the active pods the ReplicaSet owns): counts, observedGeneration, and a
 * ReplicaFailure condition while creating or deleting fails (kept as it was until it clears, as kube).
 */
export function replicaSetStatus(rs: api.ReplicaSet, pods: api.Pod[], failure: ManageFailure | undefined, now: number): NonNullable<api.ReplicaSet['status']> {
  const minReadySeconds = rs.spec?.minReadySeconds ?? 0;
  const templateLabels = rs.spec?.template?.metadata?.labels;
  const ready = pods.filter(isReady);
  let conditions: Condition[] = [...(rs.status?.conditions ?? [])];
  const existing = conditions.find((c) => c.type === 'ReplicaFailure');
  if (failure && !existing) {
    conditions.push({ type: 'ReplicaFailure', status: 'True', lastTransitionTime: rfc3339(new Date(now)), reason: failure.reason, message: failure.message });
  } else if (!failure && existing) {
    conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  }
  return omitEmpty(
    {
      replicas: pods.length,
      fullyLabeledReplicas: pods.filter((p) => hasAllLabels(p.metadata?.labels, templateLabels)).length,
      readyReplicas: ready.length,
      availableReplicas: ready.filter((p) => isAvailable(p, minReadySeconds, now)).length,
      observedGeneration: rs.metadata?.generation,
      conditions,
    },
    ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration', 'conditions'],
  );
}
