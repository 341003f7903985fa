// The DaemonSet controller's decisions, as kube's: which nodes should run a daemon pod (and which
// may keep one), the pod it makes for a node — with the tolerations the controller adds by itself
// and a required node affinity on the node's name, so that the scheduler binds it there as it
// does in kube today — which pods are up to date, the rolling update's next step within
// maxSurge and maxUnavailable, and the status counts. Pure.
import type * as api from '../../api/index.js';
import { scaledValue } from '../../kube/int-or-percent.js';
import { matchesRequiredNodeAffinity } from '../scheduler/node-affinity.js';
import { firstUntoleratedTaint, toleratesTaintWith } from '../scheduler/taints.js';
import type { Node, Pod } from '../scheduler/types.js';
import { isAvailable, isReady, podFromTemplate } from './pods.js';
import { CONTROLLER_REVISION_HASH, POD_TEMPLATE_GENERATION } from './resources.js';

/** Set by kube-apiserver on DaemonSets; when present, pods carry it as pod-template-generation. */
const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

/**
 * What every daemon pod tolerates (kube's AddOrUpdateDaemonPodTolerations): node problems never
 * evict it nor keep it off a node. `node.cloudprovider.kubernetes.io/uninitialized` is not among
 * them: a DaemonSet that must run before the cloud provider initialises the node says so itself.
 */
export function daemonTolerations(podSpec: api.PodSpec): api.Toleration[] {
  const added: api.Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (podSpec.hostNetwork) added.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  let tolerations: api.Toleration[] = [...(podSpec.tolerations ?? [])];
  for (const t of added) {
    // kube's AddOrUpdateTolerationInPodSpec: one with the same key and effect is replaced.
    const same = tolerations.findIndex((x) => x.key === t.key && x.effect === t.effect);
    if (same >= 0) tolerations = tolerations.map((x, i) => (i === same ? t : x));
    else tolerations.push(t);
  }
  return tolerations;
}

export interface NodeVerdict {
  /** A daemon pod should be created here if there is none. */
  shouldRun: boolean;
  /** A daemon pod already here may stay (only an untolerated NoExecute taint evicts it). */
  shouldContinueRunning: boolean;
}

/** kube's NodeShouldRunDaemonPod. */
export function nodeVerdict(node: api.Node, ds: api.DaemonSet): NodeVerdict {
  // A template without a spec is not admitted; an empty one makes every rule below pass.
  const spec: api.PodSpec = ds.spec?.template?.spec ?? { containers: [] };
  if (spec.nodeName && spec.nodeName !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false };
  // The same node affinity and taint rules as the scheduler's filters (kube's DaemonSet predicates).
  if (!matchesRequiredNodeAffinity({ metadata: {}, spec } as Pod, node as Node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = daemonTolerations(spec);
  const taints: api.Taint[] = node.spec?.taints ?? [];
  if (firstUntoleratedTaint(taints, tolerations)) {
    return { shouldRun: false, shouldContinueRunning: !taints.some((t) => t.effect === 'NoExecute' && !toleratesTaintWith(tolerations, t)) };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

function templateGeneration(ds: api.DaemonSet): string | undefined {
  return ds.metadata?.annotations?.[TEMPLATE_GENERATION];
}

/**
 * The pod for `nodeName`: the template with the revision labels, the daemon tolerations and the
 * template's required node affinity replaced by one term on the node's name (kube's
 * ReplaceDaemonSetPodNodeNameNodeAffinity; the node was already checked against the original).
 */
export function daemonPod(ds: api.DaemonSet, hash: string, nodeName: string): api.Pod {
  const labels: Record<string, string> = { [CONTROLLER_REVISION_HASH]: hash };
  const generation = templateGeneration(ds);
  if (generation !== undefined) labels[POD_TEMPLATE_GENERATION] = generation;
  const pod = podFromTemplate(ds.spec?.template, ds, labels);
  pod.spec.tolerations = daemonTolerations(pod.spec);
  const affinity = pod.spec.affinity ?? {};
  const nodeAffinity = affinity.nodeAffinity ?? {};
  pod.spec.affinity = {
    ...affinity,
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] },
    },
  };
  return pod;
}

/** The node a daemon pod is for: where it is bound, or the one its node affinity names. */
export function targetNode(pod: api.Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  for (const term of pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const field of term.matchFields ?? []) {
      if (field.key === 'metadata.name' && field.operator === 'In' && field.values?.length === 1) return field.values[0];
    }
  }
  return undefined;
}

/** kube's IsPodUpdated: the pod was made from the current template. */
export function isUpdated(pod: api.Pod, hash: string, ds: api.DaemonSet): boolean {
  const labels = pod.metadata?.labels ?? {};
  const generation = templateGeneration(ds);
  return labels[CONTROLLER_REVISION_HASH] === hash || (generation !== undefined && labels[POD_TEMPLATE_GENERATION] === generation);
}

/** Bound pods first, then oldest, then by name (kube's podByCreationTimestampAndPhase). */
export function oldestFirst(pods: api.Pod[]): api.Pod[] {
  return [...pods].sort((a, b) => {
    if (Boolean(a.spec?.nodeName) !== Boolean(b.spec?.nodeName)) return a.spec?.nodeName ? -1 : 1;
    const ta = a.metadata?.creationTimestamp ?? '';
    const tb = b.metadata?.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a.metadata.name < b.metadata.name ? -1 : 1;
  });
}

/** [maxSurge, maxUnavailable] against the desired count, rounded up; both zero means one unavailable (kube's updatedDesiredNodeCounts). */
export function updateBudget(ds: api.DaemonSet, desired: number): [number, number] {
  const rolling = ds.spec?.updateStrategy?.rollingUpdate ?? {};
  const unavailable = scaledValue(rolling.maxUnavailable, desired, true, 1);
  const surge = scaledValue(rolling.maxSurge, desired, true, 0);
  return unavailable === 0 && surge === 0 ? [0, 1] : [surge, unavailable];
}

/** The node's one up-to-date and one old pod; undefined when it has more of either (manage sorts that out). */
function podsOnNode(pods: api.Pod[], hash: string, ds: api.DaemonSet): { fresh?: api.Pod; old?: api.Pod } | undefined {
  const active = pods.filter((p) => !p.metadata.deletionTimestamp);
  const fresh = active.filter((p) => isUpdated(p, hash, ds));
  const old = active.filter((p) => !isUpdated(p, hash, ds));
  return fresh.length > 1 || old.length > 1 ? undefined : { fresh: fresh[0], old: old[0] };
}

export interface RollingStep {
  /** Old pods to delete now. */
  deletions: api.Pod[];
  /** Nodes to create an up-to-date pod on now, beside the old one (surge). */
  surgeNodes: string[];
}

/**
 * The rolling update's next step (kube's rollingUpdate). Without maxSurge: delete old pods that
 * are unavailable anyway, then available old pods while fewer than maxUnavailable nodes lack an
 * available up-to-date pod. With maxSurge: start an up-to-date pod beside an old one (at once
 * where the old one is unavailable, else on at most maxSurge nodes at a time), and delete the old
 * pod once its replacement is available. `byNode` holds every desired node, with no pods if none.
 */
export function rollingUpdateStep(ds: api.DaemonSet, desired: number, byNode: Map<string, api.Pod[]>, shouldRun: (node: string) => boolean, hash: string, now: number): RollingStep {
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const [maxSurge, maxUnavailable] = updateBudget(ds, desired);
  const available = (pod: api.Pod) => isAvailable(pod, minReady, now);
  if (maxSurge === 0) {
    let unavailable = 0;
    const replaceNow: api.Pod[] = [];
    const candidates: api.Pod[] = [];
    for (const pods of byNode.values()) {
      const found = podsOnNode(pods, hash, ds);
      if (!found || Boolean(found.fresh) === Boolean(found.old)) unavailable++;
      else if (found.fresh) {
        if (!available(found.fresh)) unavailable++;
      } else if (!available(found.old!)) replaceNow.push(found.old!);
      else if (unavailable < maxUnavailable) candidates.push(found.old!);
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { deletions: [...replaceNow, ...candidates.slice(0, room)], surgeNodes: [] };
  }
  const deletions: api.Pod[] = [];
  const notWanted: api.Pod[] = [];
  const replaceNow: string[] = [];
  const candidates: string[] = [];
  let surging = 0;
  let availableCount = 0;
  for (const [node, pods] of byNode) {
    const found = podsOnNode(pods, hash, ds);
    if (!found) {
      surging++;
      continue;
    }
    const { fresh, old } = found;
    if ((old && available(old)) || (!old && fresh && available(fresh))) availableCount++;
    if (!old) continue;
    if (!fresh) {
      if (!available(old)) {
        if (shouldRun(node)) replaceNow.push(node);
        else deletions.push(old);
      } else if (!shouldRun(node)) {
        notWanted.push(old);
      } else if (surging < maxSurge) {
        candidates.push(node);
      }
    } else if (!available(fresh)) {
      surging++;
    } else {
      deletions.push(old);
    }
  }
  // Pods on nodes that no longer want one go only while enough others are available elsewhere.
  deletions.push(...notWanted.slice(0, Math.max(0, Math.min(notWanted.length, availableCount - desired))));
  const room = Math.min(Math.max(0, maxSurge - surging), candidates.length);
  return { deletions, surgeNodes: [...replaceNow, ...candidates.slice(0, room)] };
}

/** The status counts (kube's updateDaemonSetStatus); `observe` raises observedGeneration. */
export function daemonSetStatus(ds: api.DaemonSet, nodes: api.Node[], byNode: Map<string, api.Pod[]>, hash: string, now: number, observe: boolean): NonNullable<api.DaemonSet['status']> {
  const minReady = ds.spec?.minReadySeconds ?? 0;
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const pods = byNode.get(node.metadata.name) ?? [];
    if (!nodeVerdict(node, ds).shouldRun) {
      if (pods.length) misscheduled++;
      continue;
    }
    desired++;
    if (!pods.length) continue;
    current++;
    const pod = oldestFirst(pods)[0];
    if (isReady(pod)) {
      ready++;
      if (isAvailable(pod, minReady, now)) available++;
    }
    if (isUpdated(pod, hash, ds)) updated++;
  }
  const status: NonNullable<api.DaemonSet['status']> = {
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
  };
  const observedGeneration = observe ? ds.metadata?.generation : ds.status?.observedGeneration;
  if (observedGeneration) status.observedGeneration = observedGeneration;
  if (updated) status.updatedNumberScheduled = updated;
  if (available) status.numberAvailable = available;
  if (desired - available) status.numberUnavailable = desired - available;
  if (ds.status?.collisionCount !== undefined) status.collisionCount = ds.status.collisionCount;
  if (ds.status?.conditions?.length) status.conditions = ds.status.conditions;
  return status;
}
