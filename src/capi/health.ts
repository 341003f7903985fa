// The judgements of a MachineHealthCheck, as Cluster API's health check makes them. Pure.
//
// A target (a Machine the check selects) is unhealthy when:
//   - it carries the cluster.x-k8s.io/remediate-machine annotation (HasRemediateAnnotation);
//   - it had a Node and the Node is gone (NodeDeleted);
//   - it has no Node nodeStartupTimeoutSeconds (default 600; 0 disables) after it started —
//     its creation, or the time its infrastructure became ready, whichever is later
//     (NodeStartupTimeout);
//   - one of its Node's conditions has been in an unhealthy status for that condition's
//     timeoutSeconds (UnhealthyNode); likewise a Machine condition in unhealthyMachineConditions
//     (UnhealthyMachine).
// Otherwise it is healthy, with the time at which one of these may next become true.
// Remediation is allowed while the unhealthy count is at most
// remediation.triggerIf.unhealthyLessThanOrEqualTo (an int or a percentage of the targets,
// default 100%) or, when given, within unhealthyInRange "[min-max]".
import { scaledValue } from '../kube/int-or-percent.js';
import type * as api from '../api/index.js';
import { findCondition } from '../kube/index.js';
import { ANNOTATION, CONDITION } from './api.js';

export const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS = 600;

export type HealthVerdict =
  | { healthy: true; nextCheckMs?: number }
  | { healthy: false; reason: 'HasRemediateAnnotation' | 'NodeDeleted' | 'NodeStartupTimeout' | 'UnhealthyNode' | 'UnhealthyMachine'; message: string };

const since = (time: string | undefined) => (time ? Date.parse(time) : Number.NaN);

/** The health of one target; `node` is the Node status.nodeRef names, if it exists. */
export function judgeTarget(check: api.MachineHealthCheck, machine: api.Machine, node: api.Node | undefined, now: number): HealthVerdict {
  const name = machine.metadata.name;
  if (machine.metadata.annotations?.[ANNOTATION.remediateMachine] !== undefined) {
    return { healthy: false, reason: 'HasRemediateAnnotation', message: `Machine ${name} has the ${ANNOTATION.remediateMachine} annotation` };
  }
  const nodeName = machine.status?.nodeRef?.name;
  if (nodeName && !node) return { healthy: false, reason: 'NodeDeleted', message: `Node ${nodeName} has been deleted` };
  const checks = check.spec?.checks ?? {};
  let next: number | undefined;
  const consider = (deadline: number) => {
    const wait = deadline - now;
    if (wait > 0 && (next === undefined || wait < next)) next = wait;
  };
  for (const c of checks.unhealthyMachineConditions ?? []) {
    const found = findCondition(machine.status?.conditions, c.type);
    if (!found || found.status !== c.status) continue;
    const deadline = since(found.lastTransitionTime) + (c.timeoutSeconds ?? 0) * 1000;
    if (deadline <= now) return { healthy: false, reason: 'UnhealthyMachine', message: `Condition ${c.type} on Machine ${name} has been ${c.status} for more than ${c.timeoutSeconds}s` };
    consider(deadline);
  }
  if (!node) {
    const timeoutS = checks.nodeStartupTimeoutSeconds ?? DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS;
    if (timeoutS === 0) return { healthy: true };
    const infraReady = findCondition(machine.status?.conditions, CONDITION.infrastructureReady);
    const started = Math.max(since(machine.metadata.creationTimestamp), infraReady?.status === 'True' ? since(infraReady.lastTransitionTime) : Number.NEGATIVE_INFINITY);
    const deadline = started + timeoutS * 1000;
    if (deadline <= now) return { healthy: false, reason: 'NodeStartupTimeout', message: `Machine ${name} has no Node after ${timeoutS}s (node startup timeout)` };
    consider(deadline);
    return { healthy: true, nextCheckMs: next };
  }
  for (const c of checks.unhealthyNodeConditions ?? []) {
    const found = findCondition(node.status?.conditions, c.type);
    if (!found || found.status !== c.status) continue;
    const deadline = since(found.lastTransitionTime) + (c.timeoutSeconds ?? 0) * 1000;
    if (deadline <= now) return { healthy: false, reason: 'UnhealthyNode', message: `Condition ${c.type} on Node ${node.metadata.name} has been ${c.status} for more than ${c.timeoutSeconds}s` };
    consider(deadline);
  }
  return { healthy: true, nextCheckMs: next };
}

export interface RemediationAllowance {
  allowed: boolean;
  /** How many more may be remediated (0 when not allowed). */
  remaining: number;
  /** Why not, in Cluster API's words. */
  message?: string;
}

/** Whether the check may remediate, given its targets and how many are unhealthy. */
export function remediationAllowance(check: api.MachineHealthCheck, total: number, unhealthy: number): RemediationAllowance {
  const trigger = check.spec?.remediation?.triggerIf ?? {};
  const range = /^\[(\d+)-(\d+)\]$/.exec(trigger.unhealthyInRange ?? '');
  if (range) {
    const [min, max] = [Number(range[1]), Number(range[2])];
    if (unhealthy >= min && unhealthy <= max) return { allowed: true, remaining: max - unhealthy };
    return { allowed: false, remaining: 0, message: `Remediation is not allowed, the number of not started or unhealthy machines does not fall within the range (total: ${total}, unhealthy: ${unhealthy}, unhealthyRange: ${trigger.unhealthyInRange})` };
  }
  const limitText = trigger.unhealthyLessThanOrEqualTo ?? '100%';
  const limit = scaledValue(limitText, total, false);
  if (unhealthy <= limit) return { allowed: true, remaining: limit - unhealthy };
  return { allowed: false, remaining: 0, message: `Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: ${total}, unhealthy: ${unhealthy}, maxUnhealthy: ${limitText})` };
}
