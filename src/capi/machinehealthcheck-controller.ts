// The MachineHealthCheck controller (Cluster API's machinehealthcheck controller). Each pass
// judges every target (the Machines of spec.clusterName in the check's namespace that
// spec.selector selects, not being deleted) with health.ts, then:
//   - remediation allowed: unhealthy Machines get HealthCheckSucceeded=False (the reason says
//     which check failed) and OwnerRemediated=False/WaitingForRemediation — their MachineSet then
//     deletes and replaces them — and the Event MachineMarkedUnhealthy; healthy ones
//     HealthCheckSucceeded=True;
//   - too many unhealthy (remediation.triggerIf): RemediationAllowed=False/TooManyUnhealthy on
//     the check, the Warning Event RemediationRestricted, and only HealthCheckSucceeded is
//     written — nothing is handed over, so a cluster-wide failure does not delete every machine.
// Status: expectedMachines, currentHealthy, remediationsAllowed, targets. A pass is scheduled
// again for the earliest moment a target may turn unhealthy (a timeout running).
// The Nodes judged are those of the check's cluster (remote.ts): a workload cluster's own, or the
// management API's for the cluster bosun runs in. While a workload API cannot be read nothing is
// judged (Cluster API skips the check until its cluster cache connects): an API that is down is
// not a Node that is gone, and remediating on it would delete every machine.
import type * as api from '../api/index.js';
import { Controller, isConflict, isNotFound, keyOf } from '../kube/index.js';
import { storedSelectorMatches } from '../common/label-selectors.js';
import { ANNOTATION, type NewCapiCondition, CONDITION, MACHINES, MACHINE_HEALTH_CHECKS, eventTarget, isDeleting, machineCondition, setCapiCondition } from './api.js';
import { type CapiContext, informers, onUnpause, pausedCheck } from './context.js';
import { type HealthVerdict, judgeTarget, remediationAllowance } from './health.js';
import { sameStatus } from './machine-status.js';
import { RemoteUnavailable, remoteClusters } from './remote.js';

/** The statuses of a Node's conditions, to tell a heartbeat from a change worth a pass. */
const conditionStatuses = (node: api.Node | undefined) => JSON.stringify((node?.status?.conditions ?? []).map((c) => [c.type, c.status]));

export function machineHealthCheckController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const checks = inf.machineHealthChecks();
  const machines = inf.machines();
  const nodes = inf.nodes();
  const events = ctx.events('machinehealthcheck-controller');
  const clusters = inf.clusters();
  const remote = remoteClusters(ctx);

  const targetsOf = (check: api.MachineHealthCheck) => machines.list().filter((m) =>
    m.metadata.namespace === check.metadata.namespace && m.spec?.clusterName === check.spec.clusterName && !isDeleting(m) && storedSelectorMatches(check.spec.selector, m.metadata.labels));

  /** Writes the Machine's health conditions when they say something new; true when written. */
  async function mark(machine: api.Machine, updates: NewCapiCondition[], remove: string[] = []): Promise<boolean> {
    const now = new Date(ctx.clock.now());
    let conditions = (machine.status?.conditions ?? []).filter((c) => !remove.includes(c.type));
    for (const u of updates) conditions = setCapiCondition(conditions, u, now);
    if (sameStatus({ conditions }, { conditions: machine.status?.conditions })) return false;
    try {
      await ctx.client.update(MACHINES, { ...machine, status: { ...(machine.status ?? {}), conditions } }, 'status');
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  async function sync(key: string) {
    const check = checks.getByKey(key);
    if (!check || isDeleting(check) || paused(check)) return;
    const now = ctx.clock.now();
    const cluster = clusters.get(check.spec.clusterName, check.metadata.namespace);
    let clusterNodes = nodes;
    try {
      if (cluster) clusterNodes = (await remote.access(cluster)).nodes;
    } catch (e) {
      if (e instanceof RemoteUnavailable) return { requeueAfterMs: 10_000 };
      throw e;
    }
    const targets = targetsOf(check);
    const verdicts = new Map<api.Machine, HealthVerdict>();
    for (const m of targets) verdicts.set(m, judgeTarget(check, m, m.status?.nodeRef?.name ? clusterNodes.get(m.status.nodeRef.name) : undefined, now));
    const unhealthy = targets.filter((m) => !verdicts.get(m)!.healthy);
    const healthy = targets.filter((m) => verdicts.get(m)!.healthy);
    const allowance = remediationAllowance(check, targets.length, unhealthy.length);
    const target = eventTarget(check, 'MachineHealthCheck');
    let conflicts = 0;
    const write = async (m: api.Machine, updates: NewCapiCondition[], remove: string[] = []) => {
      try {
        return await mark(m, updates, remove);
      } catch (e) {
        if (!isConflict(e)) throw e;
        conflicts++; // the Machine moved on meanwhile: judged again on the next pass
        return false;
      }
    };

    for (const m of healthy) {
      // A Machine that recovered before its owner acted is no longer handed over.
      const handedOver = ['WaitingForRemediation', 'RemediationDeferred'].includes(String(machineCondition(m, CONDITION.ownerRemediated)?.reason));
      await write(m, [{ type: CONDITION.healthCheckSucceeded, status: 'True', reason: 'HealthCheckSucceeded', message: '' }], handedOver ? [CONDITION.ownerRemediated] : []);
    }
    for (const m of unhealthy) {
      const verdict = verdicts.get(m) as Extract<HealthVerdict, { healthy: false }>;
      const failed: NewCapiCondition = { type: CONDITION.healthCheckSucceeded, status: 'False', reason: verdict.reason, message: verdict.message };
      const skip = m.metadata.annotations?.[ANNOTATION.skipRemediation] !== undefined;
      const handOver = allowance.allowed && !skip && !machineCondition(m, CONDITION.ownerRemediated);
      const handOverCondition: NewCapiCondition = { type: CONDITION.ownerRemediated, status: 'False', reason: 'WaitingForRemediation', message: 'Waiting for remediation' };
      const written = await write(m, handOver ? [failed, handOverCondition] : [failed]);
      if (written && handOver) void events.event(eventTarget(m, 'Machine'), 'Normal', 'MachineMarkedUnhealthy', `Machine ${keyOf(m)} has been marked as unhealthy by ${keyOf(check)}: ${verdict.message}`);
    }
    if (!allowance.allowed && unhealthy.length) void events.event(target, 'Warning', 'RemediationRestricted', allowance.message!);

    const nowDate = new Date(now);
    const status: NonNullable<api.MachineHealthCheck['status']> = {
      ...(check.status ?? {}),
      expectedMachines: targets.length,
      currentHealthy: healthy.length,
      remediationsAllowed: allowance.remaining,
      targets: targets.map((m) => m.metadata.name).sort(),
      observedGeneration: check.metadata.generation,
      conditions: setCapiCondition(check.status?.conditions, allowance.allowed
        ? { type: CONDITION.remediationAllowed, status: 'True', reason: 'RemediationAllowed', message: '' }
        : { type: CONDITION.remediationAllowed, status: 'False', reason: 'TooManyUnhealthy', message: allowance.message! }, nowDate),
    };
    if (!sameStatus(status, check.status)) await ctx.client.update(MACHINE_HEALTH_CHECKS, { ...check, status }, 'status');
    const next = Math.min(...[...verdicts.values()].map((v) => (v.healthy && v.nextCheckMs !== undefined ? v.nextCheckMs : Number.POSITIVE_INFINITY)));
    if (conflicts) return { requeueAfterMs: 500 };
    return Number.isFinite(next) ? { requeueAfterMs: next + 50 } : undefined;
  }

  const controller = new Controller({ name: 'machinehealthcheck-controller', clock: ctx.clock, resyncPeriodMs: 30_000, sync, onStarted: (signal) => remote.attach(signal) });
  const allChecksIn = (namespace?: string) => checks.list().filter((c) => !namespace || c.metadata.namespace === namespace).map(keyOf);
  controller.watch(checks);
  controller.watch(inf.clusters(), onUnpause(checks));
  controller.watch(machines, (m) => allChecksIn(m.metadata?.namespace));
  controller.watch(nodes, (node, type, old) => (type === 'update' && conditionStatuses(node) === conditionStatuses(old) ? undefined : allChecksIn(node.metadata?.annotations?.[ANNOTATION.clusterNamespace])));
  remote.onNodeEvent((cluster, type, node, old) => {
    if (type === 'update' && conditionStatuses(node) === conditionStatuses(old)) return;
    for (const c of checks.list()) if (c.metadata.namespace === cluster.namespace && c.spec.clusterName === cluster.name) controller.enqueue(keyOf(c));
  });
  remote.onConnectionChange((cluster) => {
    for (const c of checks.list()) if (c.metadata.namespace === cluster.namespace && c.spec.clusterName === cluster.name) controller.enqueue(keyOf(c));
  });
  return controller;
}
