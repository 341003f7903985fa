// Facts about pods that every workload controller asks: is a pod active, ready, available (ready
// for minReadySeconds), and the pod a template makes (kube's controller_utils and podutil).
import type * as api from '../../api/index.js';
import { controllerReference } from '../../kube/index.js';
import { isPodReady } from '../../kube/readiness.js';

export function isTerminal(pod: api.Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Counted by its controller: not finished and not being deleted (kube's IsPodActive). */
export function isActive(pod: api.Pod): boolean {
  return !isTerminal(pod) && !pod.metadata?.deletionTimestamp;
}

function readyCondition(pod: api.Pod): api.PodCondition | undefined {
  return (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
}

export function isReady(pod: api.Pod): boolean {
  return isPodReady(pod);
}

/** When the pod last became Ready (undefined when not ready or unknown). */
export function readySince(pod: api.Pod): number | undefined {
  const c = readyCondition(pod);
  if (c?.status !== 'True' || !c.lastTransitionTime) return undefined;
  const t = Date.parse(c.lastTransitionTime);
  return Number.isNaN(t) ? undefined : t;
}

/** Ready for at least minReadySeconds at `now` (kube's IsPodAvailable). */
export function isAvailable(pod: api.Pod, minReadySeconds: number, now: number): boolean {
  if (!isReady(pod)) return false;
  if (!minReadySeconds) return true;
  const since = readySince(pod);
  return since !== undefined && since + minReadySeconds * 1000 <= now;
}

/** How long until the pod becomes available, for a requeue (undefined: not on its way). */
export function msUntilAvailable(pod: api.Pod, minReadySeconds: number, now: number): number | undefined {
  const since = readySince(pod);
  if (since === undefined || !minReadySeconds) return undefined;
  const due = since + minReadySeconds * 1000 - now;
  return due > 0 ? due : undefined;
}

/**
 * A pod from a controller's template (kube's GetPodFromTemplate): the template's labels,
 * annotations, finalizers and spec, a name generated from the controller's, and the controller
 * reference.
 */
export function podFromTemplate(template: api.PodTemplateSpec | undefined, owner: api.KubeObject, extraLabels: Record<string, string> = {}): api.Pod & { spec: api.PodSpec } {
  const meta = template?.metadata ?? {};
  // No name: the API server makes one from generateName.
  const metadata: Omit<api.ObjectMeta, 'name'> = {
    generateName: `${owner.metadata.name}-`,
    namespace: owner.metadata.namespace,
    labels: { ...(meta.labels ?? {}), ...extraLabels },
    ownerReferences: [controllerReference(owner)],
  };
  if (meta.annotations) metadata.annotations = { ...meta.annotations };
  if (meta.finalizers) metadata.finalizers = [...meta.finalizers];
  // Typed as a Pod although its name is still to come (generateName) and its spec is the template's as it is.
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(template?.spec ?? {}) } as api.Pod & { spec: api.PodSpec };
}
