// A Machine's status from what the Machine controller observed, as Cluster API's machine
// controller computes it: initialization flags, the conditions it owns (BootstrapConfigReady,
// InfrastructureReady, NodeReady, NodeHealthy, UpToDate, Ready, Available, Deleting), nodeRef and
// nodeInfo, the addresses and failure domain the infrastructure machine reports, and the phase:
//
//   Pending ──bootstrap data──▶ Provisioning ──infrastructure provisioned, providerID──▶
//   Provisioned ──a Node with that providerID──▶ Running;   any ──deletionTimestamp──▶ Deleting;
//   provisioned infrastructure that disappeared ──▶ Failed.
//
// Conditions other controllers own (HealthCheckSucceeded, OwnerRemediated) are kept as they are.
// Pure: the caller reads the objects and writes the result.
import type * as api from '../api/index.js';
import { type Condition, findCondition, rfc3339 } from '../kube/index.js';
import { canonicalJson, withoutEmpty } from '../kube/canonical.js';
import { type CapiCondition, type NewCapiCondition, CONDITION, type InfraMachine, type MachinePhase, isDeleting, setCapiCondition } from './api.js';

export interface MachineObservation {
  machine: api.Machine;
  /** The bootstrap data Secret exists. */
  bootstrapReady: boolean;
  /** Why not, when not. */
  bootstrapMessage?: string;
  /** The infrastructure machine, undefined when it does not exist. */
  infra?: InfraMachine;
  /** The Node whose spec.providerID is the Machine's. */
  node?: api.Node;
  /**
   * Set when the Machine's Nodes cannot be read (a workload cluster's API not reachable): why. The
   * node conditions turn Unknown and nodeRef, nodeInfo and a Running phase stay as they were, so
   * an API that is down is not mistaken for a Node that is gone.
   */
  nodeUnreachable?: string;
  /** The Machine matches its MachineDeployment's current template (undefined: no such owner). */
  upToDate?: boolean;
  /** Set while deleting: the step the deletion waits on. */
  deleting?: { reason: string; message: string };
  /** When the machine's certificates expire (the certificates-expiry annotation of the Machine or its bootstrap config). */
  certificatesExpiryDate?: string;
  now: number;
}

export type MachineStatus = NonNullable<api.Machine['status']>;

export interface MachineStatusResult {
  /** Conditions always set. */
  status: MachineStatus & { conditions: CapiCondition[] };
  /** Reconcile again after this long (a minReadySeconds wait), if anything. */
  recheckAfterMs?: number;
}

const cond = (type: string, status: boolean | 'Unknown', reason: string, message = ''): NewCapiCondition => ({
  type, status: status === 'Unknown' ? 'Unknown' : status ? 'True' : 'False', reason, message,
});

function nodeConditions(o: MachineObservation): { ready: NewCapiCondition; healthy: NewCapiCondition } {
  const { node, machine } = o;
  if (o.nodeUnreachable !== undefined) {
    const message = `Cannot read the Node${machine.status?.nodeRef?.name ? ` ${machine.status.nodeRef.name}` : ''}: ${o.nodeUnreachable}`;
    return { ready: cond(CONDITION.nodeReady, 'Unknown', 'ConnectionDown', message), healthy: cond(CONDITION.nodeHealthy, 'Unknown', 'ConnectionDown', message) };
  }
  if (!node) {
    const hadNode = Boolean(machine.status?.nodeRef?.name);
    const reason = hadNode ? 'NodeDeleted' : 'NodeDoesNotExist';
    const message = hadNode ? `Node ${machine.status?.nodeRef?.name} has been deleted` : 'Waiting for a Node with spec.providerID to exist';
    return { ready: cond(CONDITION.nodeReady, 'Unknown', reason, message), healthy: cond(CONDITION.nodeHealthy, 'Unknown', reason, message) };
  }
  const nodeReady = findCondition(node.status?.conditions, 'Ready');
  const ready = nodeReady?.status === 'True'
    ? cond(CONDITION.nodeReady, true, 'NodeReady')
    : nodeReady?.status === 'False'
      ? cond(CONDITION.nodeReady, false, 'NodeNotReady', `Node ${node.metadata.name}: ${nodeReady.message ?? 'not ready'}`)
      : cond(CONDITION.nodeReady, 'Unknown', 'NodeReadyUnknown', `Node ${node.metadata.name}: ${nodeReady?.message ?? 'no Ready condition'}`);
  const pressures = (node.status?.conditions ?? []).filter((c) => c.type !== 'Ready' && c.type.endsWith('Pressure') && c.status === 'True').map((c) => c.type);
  const healthy = ready.status === 'True' && pressures.length === 0
    ? cond(CONDITION.nodeHealthy, true, 'NodeHealthy')
    : ready.status === 'Unknown'
      ? cond(CONDITION.nodeHealthy, 'Unknown', 'NodeHealthyUnknown', ready.message)
      : cond(CONDITION.nodeHealthy, false, 'NodeNotHealthy', pressures.length ? `Node ${node.metadata.name}: ${pressures.join(', ')}` : ready.message);
  return { ready, healthy };
}

function phaseOf(o: MachineObservation, infraProvisioned: boolean, infraLost: boolean): MachinePhase {
  if (isDeleting(o.machine)) return 'Deleting';
  if (infraLost) return 'Failed';
  if (o.node && infraProvisioned) return 'Running';
  if (o.nodeUnreachable !== undefined && o.machine.status?.nodeRef?.name && infraProvisioned) return 'Running';
  if (infraProvisioned && o.infra?.spec?.providerID) return 'Provisioned';
  if (o.bootstrapReady) return 'Provisioning';
  return 'Pending';
}

export function machineStatus(o: MachineObservation): MachineStatusResult {
  const { machine, infra, node, now } = o;
  const at = new Date(now);
  const previous: Partial<MachineStatus> = machine.status ?? {};
  const wasProvisioned = previous.initialization?.infrastructureProvisioned === true;
  const infraProvisioned = infra?.status?.initialization?.provisioned === true || (wasProvisioned && Boolean(infra));
  const infraLost = wasProvisioned && !infra && !isDeleting(machine);
  let conditions = previous.conditions ?? [];
  const set = (c: NewCapiCondition) => (conditions = setCapiCondition(conditions, c, at));

  set(o.bootstrapReady
    ? cond(CONDITION.bootstrapConfigReady, true, 'DataSecretProvided')
    : cond(CONDITION.bootstrapConfigReady, false, 'NotReady', o.bootstrapMessage ?? 'Waiting for bootstrap data'));
  const infraName = machine.spec?.infrastructureRef ? `${machine.spec.infrastructureRef.kind} ${machine.spec.infrastructureRef.name}` : 'infrastructure';
  set(infraLost
    ? cond(CONDITION.infrastructureReady, false, 'Deleted', `${infraName} has been deleted while the Machine still exists`)
    : !infra
      ? cond(CONDITION.infrastructureReady, false, 'DoesNotExist', `${infraName} does not exist`)
      : infraProvisioned
        ? cond(CONDITION.infrastructureReady, true, 'Ready')
        : cond(CONDITION.infrastructureReady, false, 'NotReady', findCondition(infra.status?.conditions, 'Ready')?.message || `${infraName} is not provisioned yet`));
  const { ready: nodeReady, healthy: nodeHealthy } = nodeConditions(o);
  set(nodeReady);
  set(nodeHealthy);
  if (o.upToDate !== undefined) {
    set(o.upToDate ? cond(CONDITION.upToDate, true, 'UpToDate') : cond(CONDITION.upToDate, false, 'NotUpToDate', "The Machine's template differs from its MachineDeployment's"));
  }
  set(o.deleting ? cond(CONDITION.deleting, true, o.deleting.reason, o.deleting.message) : cond(CONDITION.deleting, false, 'NotDeleting'));

  const healthCheckFailed = findCondition(conditions, CONDITION.healthCheckSucceeded)?.status === 'False';
  const problems = [
    o.deleting && 'Machine is deleting',
    !o.bootstrapReady && 'bootstrap data not ready',
    !infraProvisioned && 'infrastructure not provisioned',
    nodeHealthy.status !== 'True' && (nodeHealthy.message || 'node not healthy'),
    healthCheckFailed && `health check failed: ${findCondition(conditions, CONDITION.healthCheckSucceeded)?.message ?? ''}`,
  ].filter(Boolean) as string[];
  set(problems.length === 0 ? cond(CONDITION.ready, true, 'Ready') : cond(CONDITION.ready, false, 'NotReady', problems.join('; ')));

  // Available: Ready for at least minReadySeconds.
  let recheckAfterMs: number | undefined;
  const readyCondition = findCondition(conditions, CONDITION.ready)!;
  const minReadyMs = (machine.spec?.minReadySeconds ?? 0) * 1000;
  if (readyCondition.status !== 'True') set(cond(CONDITION.available, false, 'NotReady'));
  else {
    const readyFor = now - Date.parse(readyCondition.lastTransitionTime ?? rfc3339(at));
    if (readyFor >= minReadyMs) set(cond(CONDITION.available, true, 'Available'));
    else {
      set(cond(CONDITION.available, false, 'WaitingForMinReadySeconds'));
      recheckAfterMs = minReadyMs - readyFor;
    }
  }

  const status: MachineStatusResult['status'] = {
    ...previous,
    conditions,
    initialization: { ...(previous.initialization ?? {}), bootstrapDataSecretCreated: o.bootstrapReady, infrastructureProvisioned: infraProvisioned },
    phase: phaseOf(o, infraProvisioned, infraLost),
    observedGeneration: machine.metadata?.generation,
  };
  if (node) {
    status.nodeRef = { name: node.metadata.name };
    if (node.status?.nodeInfo) status.nodeInfo = node.status.nodeInfo;
  }
  if (o.certificatesExpiryDate) status.certificatesExpiryDate = o.certificatesExpiryDate;
  else delete status.certificatesExpiryDate;
  if (infra?.status?.addresses) status.addresses = infra.status.addresses;
  const failureDomain = infra?.status?.failureDomain ?? machine.spec?.failureDomain;
  if (failureDomain) status.failureDomain = failureDomain;
  return { status, recheckAfterMs };
}

/** A status of any kind: its conditions are compared without their transition times. */
type StatusWithConditions = object & { conditions?: readonly Condition[] };

/** True when two statuses say the same thing (condition transition times aside). */
export function sameStatus(a: StatusWithConditions | undefined, b: StatusWithConditions | undefined): boolean {
  const strip = (s: StatusWithConditions | undefined) => canonicalJson(withoutEmpty({
    ...(s ?? {}),
    conditions: [...(s?.conditions ?? [])].map(({ lastTransitionTime: _t, ...rest }) => rest).sort((x, y) => x.type.localeCompare(y.type)),
  }));
  return strip(a) === strip(b);
}
