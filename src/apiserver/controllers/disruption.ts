// PodDisruptionBudgets: the status the disruption controller keeps (currentHealthy, desiredHealthy,
// expectedPods, disruptionsAllowed, the DisruptionAllowed condition) and the decision the
// `pods/eviction` subresource makes, both as kube-controller-manager and kube-apiserver do them.
// Pure functions over plain objects; the caller reads pods and PDBs and writes the results.

import { rfc3339 } from '../../common/time.js';
import type { OwnerReference } from '../../common/kube-types.js';
import { storedSelectorMatches, type MetaLabelSelector } from '../../common/label-selectors.js';
import { isPodReady } from '../../kube/readiness.js';

export interface Pod {
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: OwnerReference[];
  };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface PdbStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: Condition[];
}

export interface Pdb {
  metadata: { name: string; namespace?: string; generation?: number };
  spec: {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    selector?: MetaLabelSelector | null;
    unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
  };
  status?: PdbStatus;
}

/** How long an eviction counts as in progress before the pod is expected gone (kube's DeletionTimeout). */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

export function pdbMatchesPod(pdb: Pdb, pod: Pod): boolean {
  return (pdb.metadata.namespace ?? '') === (pod.metadata.namespace ?? '') && storedSelectorMatches(pdb.spec.selector, pod.metadata.labels);
}


/** An int-or-string scaled against a total; percentages round up, as kube's GetScaledValueFromIntOrPercent(…, true). */
export function scaledValue(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) {
    if (/^\d+$/.test(value)) return Number(value);
    throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage: ${JSON.stringify(value)}`);
  }
  return Math.ceil((Number(m[1]) * total) / 100);
}

/**
 * The scale of a pod's controller (a ReplicaSet's owning Deployment's replicas, a StatefulSet's
 * replicas, ...), or undefined when it is not known.
 */
export type ControllerScale = (namespace: string, controller: OwnerReference) => number | undefined;

function expectedFromControllers(pods: Pod[], scaleOf: ControllerScale): number | undefined {
  const counted = new Map<string, number>();
  for (const pod of pods) {
    const controller = pod.metadata.ownerReferences?.find((r) => r.controller);
    if (!controller) return undefined;
    if (counted.has(controller.uid)) continue;
    const scale = scaleOf(pod.metadata.namespace ?? '', controller);
    if (scale === undefined) return undefined;
    counted.set(controller.uid, scale);
  }
  return [...counted.values()].reduce((a, b) => a + b, 0);
}

/**
 * The PDB's status given every pod in its namespace. `now` decides which entries of
 * disruptedPods have expired (the pod should have gone by then) and stamps condition transitions.
 */
export function computePdbStatus(pdb: Pdb, namespacePods: Pod[], scaleOf: ControllerScale, now: Date): PdbStatus {
  const pods = namespacePods.filter((p) => pdbMatchesPod(pdb, p));
  const byName = new Map(pods.map((p) => [p.metadata.name, p]));
  const disruptedPods: Record<string, string> = {};
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = byName.get(name);
    if (pod && !pod.metadata.deletionTimestamp && Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS > now.getTime()) disruptedPods[name] = at;
  }
  const currentHealthy = pods.filter((p) => !p.metadata.deletionTimestamp && !disruptedPods[p.metadata.name] && isPodReady(p)).length;

  const { minAvailable, maxUnavailable } = pdb.spec;
  let expectedPods: number;
  let desiredHealthy: number;
  if (maxUnavailable !== undefined) {
    expectedPods = expectedFromControllers(pods, scaleOf) ?? pods.length;
    desiredHealthy = Math.max(0, expectedPods - scaledValue(maxUnavailable, expectedPods));
  } else if (typeof minAvailable === 'string' && minAvailable.endsWith('%')) {
    expectedPods = expectedFromControllers(pods, scaleOf) ?? pods.length;
    desiredHealthy = scaledValue(minAvailable, expectedPods);
  } else {
    expectedPods = pods.length;
    desiredHealthy = scaledValue(minAvailable ?? 0, expectedPods);
  }
  const disruptionsAllowed = expectedPods <= 0 ? 0 : Math.max(0, currentHealthy - desiredHealthy);
  const status: PdbStatus = {
    observedGeneration: pdb.metadata.generation,
    disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods,
    conditions: disruptionAllowedConditions(pdb.status?.conditions, disruptionsAllowed, pdb.metadata.generation, now),
  };
  if (Object.keys(disruptedPods).length > 0) status.disruptedPods = disruptedPods;
  return status;
}

function disruptionAllowedConditions(previous: Condition[] | undefined, disruptionsAllowed: number,
  generation: number | undefined, now: Date): Condition[] {
  const allowed = disruptionsAllowed > 0;
  const old = previous?.find((c) => c.type === 'DisruptionAllowed');
  const status = allowed ? 'True' : 'False';
  const condition: Condition = {
    type: 'DisruptionAllowed', status, reason: allowed ? 'SufficientPods' : 'InsufficientPods', message: '',
    observedGeneration: generation,
    lastTransitionTime: old && old.status === status ? old.lastTransitionTime : rfc3339(now),
  };
  return [...(previous ?? []).filter((c) => c.type !== 'DisruptionAllowed'), condition];
}

/** A kube `Status` object for a refused eviction. */
export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details: { causes?: { reason?: string; message: string }[]; retryAfterSeconds?: number };
  code: number;
}

export type EvictionDecision =
  /** Delete the pod; when `pdb` is set, first write this status to it (the decremented budget). */
  | { action: 'delete'; pdb?: { name: string; status: PdbStatus } }
  | { action: 'refuse'; status: StatusObject };

const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

function tooManyRequests(cause: string, retryAfterSeconds: number): EvictionDecision {
  return {
    action: 'refuse',
    status: {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: VIOLATION, reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: cause }], retryAfterSeconds: retryAfterSeconds || undefined },
      code: 429,
    },
  };
}

/** What `POST pods/<p>/eviction` does for this pod given the PDBs of its namespace. */
export function decideEviction(pod: Pod, namespacePdbs: Pdb[], now: Date): EvictionDecision {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata.deletionTimestamp) return { action: 'delete' };
  const pdbs = namespacePdbs.filter((p) => pdbMatchesPod(p, pod));
  if (pdbs.length === 0) return { action: 'delete' };
  if (pdbs.length > 1) {
    const message = 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
    return {
      action: 'refuse',
      status: {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`,
        reason: 'InternalError', details: { causes: [{ message }] }, code: 500,
      },
    };
  }
  const pdb = pdbs[0];
  const status = pdb.status;
  if (!status || (status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) {
    return tooManyRequests(`The disruption budget ${pdb.metadata.name} is still being processed by the server.`, 10);
  }
  // A pod that is not Ready does not count towards the budget; evicting it costs nothing as long
  // as the application is healthy (policy IfHealthyBudget) or always (AlwaysAllow).
  if (!isPodReady(pod)) {
    const policy = pdb.spec.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
    if (policy === 'AlwaysAllow' || status.currentHealthy >= status.desiredHealthy) return { action: 'delete' };
  }
  if (status.disruptionsAllowed <= 0) {
    return tooManyRequests(`The disruption budget ${pdb.metadata.name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`, 0);
  }
  const disruptionsAllowed = status.disruptionsAllowed - 1;
  const next: PdbStatus = {
    ...status, disruptionsAllowed,
    disruptedPods: { ...(status.disruptedPods ?? {}), [pod.metadata.name]: rfc3339(now) },
  };
  if (disruptionsAllowed === 0) next.conditions = disruptionAllowedConditions(status.conditions, 0, status.observedGeneration, now);
  return { action: 'delete', pdb: { name: pdb.metadata.name, status: next } };
}
