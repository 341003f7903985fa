// Which Machines a MachineSet deletes when it has too many, as Cluster API's deletion orders
// rank them: first those marked with the cluster.x-k8s.io/delete-machine annotation, then the
// unhealthy (a failed health check, no Node yet, not Ready), then by `spec.deletion.order`:
// Oldest (oldest first), Newest (newest first) or Random (the default; here an arbitrary but
// stable order, by uid, so that two passes agree on whom to delete). Pure.
import { createHash } from 'node:crypto';
import type * as api from '../api/index.js';
import { scaledValue } from '../kube/int-or-percent.js';
import { ANNOTATION, CONDITION, conditionIs, desiredReplicas, isDeleting, machineCondition } from './api.js';
import { isMachineReady } from '../kube/readiness.js';

export type DeletionOrder = 'Random' | 'Newest' | 'Oldest';

/** 0 must go first, 1 better goes, 2 could go. */
function priority(machine: api.Machine): number {
  if (machine.metadata?.annotations?.[ANNOTATION.deleteMachine] !== undefined) return 0;
  if (conditionIs(machine, CONDITION.healthCheckSucceeded, 'False')) return 0;
  if (!machine.status?.nodeRef?.name || !isMachineReady(machine)) return 1;
  return 2;
}

const created = (m: api.Machine) => String(m.metadata?.creationTimestamp ?? '');
const stable = (m: api.Machine) => createHash('sha256').update(String(m.metadata?.uid ?? m.metadata?.name)).digest('hex');

export function machinesToDelete(machines: api.Machine[], count: number, order: DeletionOrder = 'Random'): api.Machine[] {
  if (count <= 0) return [];
  const tieBreak = (a: api.Machine, b: api.Machine): number => {
    if (order === 'Oldest') return created(a).localeCompare(created(b)) || a.metadata.name.localeCompare(b.metadata.name);
    if (order === 'Newest') return created(b).localeCompare(created(a)) || b.metadata.name.localeCompare(a.metadata.name);
    return stable(a).localeCompare(stable(b));
  };
  return [...machines].sort((a, b) => priority(a) - priority(b) || tieBreak(a, b)).slice(0, count);
}

/** The Machines a health check handed to their owner (HealthCheckSucceeded and OwnerRemediated False). */
export function machinesToRemediate(machines: api.Machine[]): api.Machine[] {
  return machines.filter((m) => conditionIs(m, CONDITION.healthCheckSucceeded, 'False') && conditionIs(m, CONDITION.ownerRemediated, 'False'));
}

/**
 * How many of a MachineDeployment's machines may be remediated now under its
 * spec.remediation.maxInFlight (an int or a percentage of its replicas, rounded up; unset: no
 * limit): the limit less the machines already being deleted for remediation.
 */
export function remediationBudget(deployment: api.MachineDeployment | undefined, deploymentMachines: api.Machine[]): number {
  const maxInFlight = deployment?.spec?.remediation?.maxInFlight;
  if (maxInFlight === undefined || maxInFlight === null) return Number.POSITIVE_INFINITY;
  const limit = scaledValue(maxInFlight, desiredReplicas(deployment!), true);
  const inFlight = deploymentMachines.filter((m) => isDeleting(m) && machineCondition(m, CONDITION.ownerRemediated)?.reason === 'MachineDeleting').length;
  return Math.max(0, limit - inFlight);
}
