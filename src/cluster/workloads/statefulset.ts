// What kube's StatefulSet controller decides, as pure functions (pkg/controller/statefulset):
// the pods of a StatefulSet are `<set>-<ordinal>` for the ordinals [start, start + replicas),
// each with a stable identity (the labels statefulset.kubernetes.io/pod-name and
// apps.kubernetes.io/pod-index, its hostname, the governing Service as its subdomain) and its own
// PersistentVolumeClaims `<template>-<set>-<ordinal>`. One sync takes the next steps: recreate a
// failed pod, create a missing one (a new pod runs the update revision, except below the partition
// — or below the current replica count while a rolling update runs — where it runs the current
// one), delete pods beyond the replicas highest ordinal first, then roll: the highest-ordinal pod
// not at the update revision is deleted (and comes back at it). With podManagementPolicy
// OrderedReady (the default) each step waits for the pods before it to be Running and Ready (and
// available, with minReadySeconds); Parallel waits for nothing but the rolling update's one pod.
import type * as api from '../../api/index.js';
import { controllerReference } from '../../kube/index.js';
import { isAvailable, isReady, podFromTemplate } from './pods.js';
import { CONTROLLER_REVISION_HASH } from './resources.js';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** A revision of the set's template: its ControllerRevision's name and the template it holds. */
export interface Revision {
  name: string;
  template: api.PodTemplateSpec;
}

/** The first ordinal (spec.ordinals.start, 0 when unset). */
export function startOrdinal(set: api.StatefulSet): number {
  return set.spec?.ordinals?.start ?? 0;
}

/** The ordinal in a pod's name `<set>-<n>`, or undefined when the name is not of that shape. */
export function ordinalOf(set: api.StatefulSet, pod: api.Pod): number | undefined {
  const name = pod.metadata?.name ?? '';
  const prefix = `${set.metadata.name}-`;
  if (!name.startsWith(prefix)) return undefined;
  const digits = name.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(digits) ? Number(digits) : undefined;
}

export function podName(set: api.StatefulSet, ordinal: number): string {
  return `${set.metadata.name}-${ordinal}`;
}

/** The claim a volumeClaimTemplate gives the pod of `ordinal`. */
export function claimName(template: { metadata?: { name?: string } }, set: api.StatefulSet, ordinal: number): string {
  return `${template.metadata?.name ?? ''}-${set.metadata.name}-${ordinal}`;
}

export const revisionOf = (pod: api.Pod): string | undefined => pod.metadata?.labels?.[CONTROLLER_REVISION_HASH];
const isTerminating = (pod: api.Pod) => Boolean(pod.metadata?.deletionTimestamp);
const isRunningAndReady = (pod: api.Pod) => pod.status?.phase === 'Running' && isReady(pod);
const isHealthy = (pod: api.Pod) => isRunningAndReady(pod) && !isTerminating(pod);
const isFinished = (pod: api.Pod) => pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';

/** The identity labels of the pod of `ordinal`. */
function identityLabels(set: api.StatefulSet, ordinal: number): Record<string, string> {
  return { [POD_NAME_LABEL]: podName(set, ordinal), [POD_INDEX_LABEL]: String(ordinal) };
}

/**
 * The pod of `ordinal` from a revision's template (kube's newVersionedStatefulSetPod): its stable
 * name, identity labels, hostname and subdomain, its claims mounted in place of any volume of the
 * same name, the revision's name in controller-revision-hash.
 */
export function statefulPod(set: api.StatefulSet, revision: Revision, ordinal: number): api.Pod & { spec: api.PodSpec } {
  const pod = podFromTemplate(revision.template, set, { ...identityLabels(set, ordinal), [CONTROLLER_REVISION_HASH]: revision.name });
  const name = podName(set, ordinal);
  delete (pod.metadata as api.ObjectMeta).generateName;
  pod.metadata.name = name;
  pod.spec.hostname = name;
  if (set.spec?.serviceName) pod.spec.subdomain = set.spec.serviceName;
  const claims = set.spec?.volumeClaimTemplates ?? [];
  if (claims.length) {
    const claimed = new Set(claims.map((c) => c.metadata?.name));
    pod.spec.volumes = [
      ...(pod.spec.volumes ?? []).filter((v) => !claimed.has(v.name)),
      ...claims.map((c) => ({ name: c.metadata?.name ?? '', persistentVolumeClaim: { claimName: claimName(c, set, ordinal) } })),
    ];
  }
  return pod;
}

/**
 * The claims the pod of `ordinal` needs (kube's getPersistentVolumeClaims): each template's spec,
 * labels with the set's selector labels, and owner references as persistentVolumeClaimRetentionPolicy
 * asks — `whenDeleted: Delete` makes the set an owner, so the garbage collector deletes the claim
 * with it (`whenScaled: Delete` is applied when the pod is condemned: claimOwnedByPod).
 */
export function podClaims(set: api.StatefulSet, ordinal: number): api.PersistentVolumeClaim[] {
  const deleteWithSet = set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete';
  return (set.spec?.volumeClaimTemplates ?? []).map((template) => {
    const metadata: api.ObjectMeta = {
      name: claimName(template, set, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
    };
    if (template.metadata?.annotations) metadata.annotations = { ...template.metadata.annotations };
    if (deleteWithSet) metadata.ownerReferences = [{ ...controllerReference(set), controller: false }];
    return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata, spec: structuredClone(template.spec ?? {}) } as api.PersistentVolumeClaim;
  });
}

/** Whether a condemned pod's claims are to go with it (`whenScaled: Delete`). */
export function claimsGoWhenScaled(set: api.StatefulSet): boolean {
  return set.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete';
}

/** What one sync does, in order: pods to delete, pods (with their claims) to create, labels to repair. */
export interface StatefulSetPlan {
  /** Pods to delete and why: a finished pod to recreate, a pod beyond the replicas, a pod to roll. */
  delete: Array<{ pod: api.Pod; why: 'recreate' | 'scale-down' | 'update' }>;
  /** Pods to create, lowest ordinal first, each after its claims. */
  create: Array<{ ordinal: number; pod: api.Pod; claims: api.PersistentVolumeClaim[] }>;
  /** Pods whose identity labels are missing or wrong (a user removed one): the labels to set. */
  relabel: Array<{ pod: api.Pod; labels: Record<string, string> }>;
  /** Why an OrderedReady set stopped here (the pod it waits for), when it did. */
  waitingFor?: string;
}

/**
 * The next steps for `set` (kube's updateStatefulSet), over the pods it controls, with its current
 * revision (the one pods below the partition keep) and its update revision (the template now).
 */
export function planStatefulSet(set: api.StatefulSet, pods: api.Pod[], current: Revision, update: Revision, now: number): StatefulSetPlan {
  const plan: StatefulSetPlan = { delete: [], create: [], relabel: [] };
  const ordered = (set.spec?.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
  const replicas = set.spec?.replicas ?? 1;
  const start = startOrdinal(set);
  const minReadySeconds = set.spec?.minReadySeconds ?? 0;
  const rolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  const partition = rolling ? (set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
  const byOrdinal = new Map<number, api.Pod>();
  const condemned: api.Pod[] = [];
  for (const pod of pods) {
    const ordinal = ordinalOf(set, pod);
    if (ordinal === undefined) continue;
    if (ordinal >= start && ordinal < start + replicas) byOrdinal.set(ordinal, pod);
    else condemned.push(pod);
  }
  condemned.sort((a, b) => ordinalOf(set, b)! - ordinalOf(set, a)!);
  const wait = (pod: api.Pod, what: string) => {
    plan.waitingFor = `Pod ${pod.metadata.name} to ${what}`;
    return plan;
  };
  // A new pod runs the current revision below the partition (or, with no partition, below the
  // count already at the current revision), else the update revision.
  const currentReplicas = set.status?.currentReplicas ?? 0;
  const revisionFor = (ordinal: number): Revision => {
    const below = set.spec?.updateStrategy?.rollingUpdate ? ordinal < start + partition : ordinal < start + currentReplicas;
    return rolling && below ? current : update;
  };

  for (let ordinal = start; ordinal < start + replicas; ordinal++) {
    const pod = byOrdinal.get(ordinal);
    if (!pod) {
      plan.create.push({ ordinal, pod: statefulPod(set, revisionFor(ordinal), ordinal), claims: podClaims(set, ordinal) });
      if (ordered) return plan;
      continue;
    }
    if (isFinished(pod) && !isTerminating(pod)) {
      // Recreated once it is gone (the next sync finds the ordinal free).
      plan.delete.push({ pod, why: 'recreate' });
      if (ordered) return plan;
      continue;
    }
    const labels = identityLabels(set, ordinal);
    if (Object.entries(labels).some(([k, v]) => pod.metadata.labels?.[k] !== v)) plan.relabel.push({ pod, labels });
    if (!ordered) continue;
    if (isTerminating(pod)) return wait(pod, 'terminate');
    if (!isRunningAndReady(pod)) return wait(pod, 'be Running and Ready');
    if (!isAvailable(pod, minReadySeconds, now)) return wait(pod, `be available for ${minReadySeconds}s`);
  }

  // Scale down: highest ordinal first; an OrderedReady set one at a time, and only while every
  // pod but the one going is healthy.
  const unhealthy = [...byOrdinal.values(), ...condemned].find((p) => !isHealthy(p));
  for (const pod of condemned) {
    if (isTerminating(pod)) {
      if (ordered) return wait(pod, 'terminate');
      continue;
    }
    if (ordered && unhealthy && unhealthy !== pod) return wait(unhealthy, 'be Running and Ready prior to scale down');
    plan.delete.push({ pod, why: 'scale-down' });
    if (ordered) return plan;
  }
  if (!rolling) return plan;

  // Rolling update: from the highest ordinal down to the partition, one pod at a time.
  for (let ordinal = start + replicas - 1; ordinal >= start + partition; ordinal--) {
    const pod = byOrdinal.get(ordinal);
    if (!pod) return plan;
    if (revisionOf(pod) !== update.name && !isTerminating(pod)) {
      plan.delete.push({ pod, why: 'update' });
      return plan;
    }
    if (!isHealthy(pod)) return wait(pod, 'update');
  }
  return plan;
}

/**
 * The status kube's StatefulSet controller writes (and `kubectl rollout status statefulset` reads):
 * pods created, ready, available, at the current and at the update revision; a rolling update
 * whose every pod is updated and ready makes the update revision the current one.
 */
export function statefulSetStatus(set: api.StatefulSet, pods: api.Pod[], current: Revision, update: Revision, now: number): NonNullable<api.StatefulSet['status']> {
  const minReadySeconds = set.spec?.minReadySeconds ?? 0;
  let created = 0;
  let ready = 0;
  let available = 0;
  let atCurrent = 0;
  let atUpdate = 0;
  for (const pod of pods) {
    if (ordinalOf(set, pod) === undefined) continue;
    created++;
    if (isRunningAndReady(pod)) {
      ready++;
      if (isAvailable(pod, minReadySeconds, now)) available++;
    }
    if (isTerminating(pod)) continue;
    if (revisionOf(pod) === current.name) atCurrent++;
    if (revisionOf(pod) === update.name) atUpdate++;
  }
  const status: NonNullable<api.StatefulSet['status']> = {
    observedGeneration: set.metadata.generation,
    replicas: created,
    readyReplicas: ready,
    availableReplicas: available,
    currentReplicas: atCurrent,
    updatedReplicas: atUpdate,
    currentRevision: current.name,
    updateRevision: update.name,
    collisionCount: set.status?.collisionCount ?? 0,
  };
  const rolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  if (rolling && atUpdate === created && ready === created) {
    status.currentReplicas = atUpdate;
    status.currentRevision = update.name;
  }
  return status;
}
