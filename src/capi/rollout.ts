// The numbers of a MachineDeployment rollout, as Cluster API's mdutil computes them (Kubernetes'
// Deployment rules with Cluster API's defaults, maxSurge 1 and maxUnavailable 0): the template
// hash that names and labels the current MachineSet, the fenceposts, and one step of a rolling
// update — the new MachineSet grows while the total stays within replicas + maxSurge, old ones
// shrink (unavailable machines first, then oldest sets first) while the available machines stay
// at least replicas − maxUnavailable. So with maxSurge 1 / maxUnavailable 0 a new machine is
// available before an old one goes. Pure.
import { templateHash as hashTemplate } from '../kube/template-hash.js';
import { scaledValue } from '../kube/int-or-percent.js';
import type * as api from '../api/index.js';
import { desiredReplicas } from './api.js';

/**
 * The machine-template-hash of a MachineDeployment's template: its machine spec only — labels and
 * annotations of the template are carried to the MachineSet in place, without a rollout, as
 * Cluster API does.
 */
export function templateHash(deployment: api.MachineDeployment): string {
  return hashTemplate({ spec: deployment.spec?.template?.spec ?? {} });
}

/** [maxSurge, maxUnavailable] for the MachineDeployment's replicas (both 0 means one may be unavailable). */
export function fenceposts(deployment: api.MachineDeployment): [number, number] {
  const rolling = deployment.spec?.rollout?.strategy?.rollingUpdate ?? {};
  const replicas = desiredReplicas(deployment);
  const surge = scaledValue(rolling.maxSurge, replicas, true, 1);
  const unavailable = scaledValue(rolling.maxUnavailable, replicas, false, 0);
  if (surge === 0 && unavailable === 0) return [0, 1];
  return [surge, Math.min(unavailable, replicas)];
}

export interface SetState {
  name: string;
  replicas: number;
  available: number;
}

/** The replicas each MachineSet should have after one rolling step (only the ones that change). */
export function rollingStep(desired: number, surge: number, unavailable: number, current: SetState, old: SetState[]): Map<string, number> {
  const sizes = new Map<string, number>();
  const all = [current, ...old];
  const total = all.reduce((n, s) => n + s.replicas, 0);
  // Grow the new set within the surge (or shrink it when the deployment was scaled below it).
  let next = current.replicas;
  if (current.replicas > desired) next = desired;
  else if (total < desired + surge) next = Math.min(desired, current.replicas + (desired + surge - total));
  if (next !== current.replicas) sizes.set(current.name, next);

  // Shrink the old sets within the availability floor.
  const minAvailable = desired - unavailable;
  const newUnavailable = Math.max(0, current.replicas - current.available);
  let budget = total - minAvailable - newUnavailable;
  const remaining = new Map(old.map((s) => [s.name, s.replicas]));
  // Unavailable old machines first: removing them costs no availability.
  for (const s of old) {
    if (budget <= 0) break;
    const unhealthy = Math.min(budget, Math.max(0, s.replicas - s.available));
    if (unhealthy > 0) {
      remaining.set(s.name, s.replicas - unhealthy);
      budget -= unhealthy;
    }
  }
  const available = all.reduce((n, s) => n + s.available, 0);
  let scaleDown = Math.min(budget, available - minAvailable);
  for (const s of old) {
    if (scaleDown <= 0) break;
    const left = remaining.get(s.name)!;
    const take = Math.min(left, scaleDown);
    remaining.set(s.name, left - take);
    scaleDown -= take;
  }
  for (const s of old) if (remaining.get(s.name) !== s.replicas) sizes.set(s.name, remaining.get(s.name)!);
  return sizes;
}
