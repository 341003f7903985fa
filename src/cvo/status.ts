// The ClusterVersion status the CVO writes, computed purely: from the current status, what a step
// did (a payload accepted or refused, a pass of the graph with its errors), and the time (the
// CVO's injected clock) to the next status. The shell (operator.ts) reads and writes; the rules
// live here, table-tested in test/cvo/status.test.ts.
//
// A pass's errors are judged by their effect (errors.ts), as OpenShift's CVO judges
// payload.UpdateError: `none` is progress ("waiting on X"), slow after slowOperatorMs (30
// minutes; 90 for machine-config, which reboots nodes) — Failing=Unknown, SlowClusterOperator;
// `fail-after-interval` is progress until degradedToleranceMs (40 minutes) from the start of the
// update, failing after; `report` and `fail` fail. While Reconciling every error fails, as
// nothing is in progress.
import { createHash } from 'node:crypto';
import { setCondition as setKubeCondition, type Condition } from '../kube/conditions.js';
import { rfc3339 } from '../common/time.js';
import type { Manifest } from './payload/manifest.js';
import { describeManifest } from './payload/manifest.js';
import type { GraphMode } from './task-graph.js';
import type { UpdateError } from './errors.js';

import type * as api from '../api/index.js';

/** The ClusterVersion status as the CVO builds it (fields filled in as it goes). */
export type VersionStatus = Partial<api.ClusterVersionStatus>;
type VersionCondition = api.ClusterVersionCondition;
type History = api.UpdateHistory;

export interface StatusTimers {
  /** How long waiting on a ClusterOperator during an update is normal (machine-config: 3×). */
  slowOperatorMs: number;
  /** How long a Degraded ClusterOperator is tolerated from the start of an update. */
  degradedToleranceMs: number;
}

export const defaultTimers: StatusTimers = { slowOperatorMs: 30 * 60_000, degradedToleranceMs: 40 * 60_000 };

const time = (now: number) => rfc3339(new Date(now));

/** Sets a condition (lastTransitionTime moves only when the status changes) and puts it last. */
export function setCondition(conditions: readonly VersionCondition[], type: string, status: string, reason: string, message: string, now: number): VersionCondition[] {
  const [next] = setKubeCondition(conditions.filter((c) => c.type === type) as Condition[], { type, status, reason, message }, new Date(now));
  return [...conditions.filter((c) => c.type !== type), next as VersionCondition];
}

/** A release the CVO will not run: ReleaseAccepted=False with the step and why; nothing else moves. */
export function refusedStatus(status: VersionStatus, generation: number | undefined, reason: string, message: string, now: number): VersionStatus {
  return { ...status, observedGeneration: generation, conditions: setCondition(status.conditions ?? [], 'ReleaseAccepted', 'False', reason, message, now) };
}

export interface Accepted {
  version: string;
  image: string;
  verified: boolean;
  acceptedRisks?: string;
  /** The ReleaseAccepted message ("Payload loaded version=… image=…"). */
  message: string;
}

/**
 * A release loaded and accepted: desired names it, a new Partial history entry starts (the
 * previous one, if still Partial, ends now), ReleaseAccepted=True (PayloadLoaded).
 */
export function acceptedStatus(status: VersionStatus, generation: number | undefined, accepted: Accepted, now: number): VersionStatus {
  const history: History[] = [...(status.history ?? [])];
  if (history[0]?.image !== accepted.image) {
    if (history[0]?.state === 'Partial') history[0] = { ...history[0], completionTime: time(now) };
    history.unshift({
      state: 'Partial', startedTime: time(now), completionTime: null, version: accepted.version, image: accepted.image, verified: accepted.verified,
      ...(accepted.acceptedRisks ? { acceptedRisks: accepted.acceptedRisks } : {}),
    });
  }
  return {
    ...status,
    observedGeneration: generation,
    desired: { version: accepted.version, image: accepted.image, ...(status.desired?.channels ? { channels: status.desired.channels } : {}) },
    history: history.slice(0, 100),
    versionHash: createHash('sha256').update(accepted.image).digest().subarray(0, 8).toString('base64url'),
    conditions: setCondition(status.conditions ?? [], 'ReleaseAccepted', 'True', 'PayloadLoaded', accepted.message, now),
  };
}

/** "Working towards 1.0.1: 3 of 10 done (30% complete)[, waiting on a, b]". */
export function progressMessage(version: string, done: number, total: number, waitingOn: readonly string[] = []): string {
  const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
  return `Working towards ${version}: ${done} of ${total} done (${pct}% complete)${waitingOn.length ? `, waiting on ${waitingOn.join(', ')}` : ''}`;
}

/** Progress during a pass: Progressing=True with the message. */
export function progressingStatus(status: VersionStatus, message: string, now: number): VersionStatus {
  return { ...status, conditions: setCondition(status.conditions ?? [], 'Progressing', 'True', '', message, now) };
}

/** What one pass over the graph did. */
export interface SyncResult {
  mode: GraphMode;
  version: string;
  image: string;
  done: number;
  total: number;
  errors: UpdateError[];
  /** The first task node the pass did not reach, and how many it did not. */
  firstIncomplete?: Manifest;
  incomplete?: number;
}

export interface SyncOutcome {
  status: VersionStatus;
  /** completed: the payload is applied; waiting: progress, look again soon; failing: retry with back-off. */
  verdict: 'completed' | 'waiting' | 'failing';
  /** The Progressing message while waiting (for a CLI to show). */
  progress?: string;
  /** The ClusterOperators the pass waits on. */
  waitingOn: string[];
}

function operatorOf(e: UpdateError): string {
  return e.operator ?? String(e.manifest?.object.metadata?.name ?? 'unknown');
}

function minutes(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} minutes` : `${Math.round(ms / 1000)} seconds`;
}

/** The SlowClusterOperator message for operators waited on too long, or undefined. */
function slowMessage(names: string[], elapsed: number, timers: StatusTimers): string | undefined {
  const slowOthers = names.filter((n) => n !== 'machine-config' && elapsed > timers.slowOperatorMs);
  const slowMachineConfig = names.includes('machine-config') && elapsed > 3 * timers.slowOperatorMs;
  const others = `${slowOthers.join(', ')} over ${minutes(timers.slowOperatorMs)}`;
  const machineConfig = `machine-config over ${minutes(3 * timers.slowOperatorMs)}`;
  if (slowOthers.length && slowMachineConfig) return `waiting on ${others} and ${machineConfig} which is longer than expected`;
  if (slowOthers.length) return `waiting on ${others} which is longer than expected`;
  if (slowMachineConfig) return `waiting on ${machineConfig} which is longer than expected`;
  return undefined;
}

/** The status after a pass: Completed, waiting on operators, or failing — by the errors' effects. */
export function syncStatus(status: VersionStatus, result: SyncResult, now: number, timers: StatusTimers = defaultTimers): SyncOutcome {
  const { mode, version, errors } = result;
  const history: History[] = [...(status.history ?? [])];
  if (errors.length === 0) {
    if (history[0]?.image === result.image && history[0].state !== 'Completed') history[0] = { ...history[0], state: 'Completed', completionTime: time(now) };
    let conditions = setCondition(status.conditions ?? [], 'Available', 'True', '', `Done applying ${version}`, now);
    conditions = setCondition(conditions, 'Failing', 'False', '', '', now);
    conditions = setCondition(conditions, 'Progressing', 'False', '', `Cluster version is ${version}`, now);
    return { status: { ...status, history, conditions }, verdict: 'completed', waitingOn: [] };
  }

  // Time is counted from the start of this release's history entry (none yet: from now).
  const started = history[0]?.image === result.image ? Date.parse(history[0]?.startedTime ?? '') : Number.NaN;
  const elapsed = Number.isFinite(started) ? now - started : 0;
  const isProgress = (e: UpdateError) =>
    mode !== 'Reconciling' && (e.effect === 'none' || (e.effect === 'fail-after-interval' && elapsed < timers.degradedToleranceMs));
  const failing = errors.filter((e) => !isProgress(e));
  const waitingOn = [...new Set(errors.filter(isProgress).map(operatorOf))].sort();

  if (failing.length === 0) {
    const progress = progressMessage(version, result.done, result.total, waitingOn);
    const slow = slowMessage([...new Set(errors.filter((e) => e.effect === 'none').map(operatorOf))], elapsed, timers);
    let conditions = setCondition(status.conditions ?? [], 'Progressing', 'True', '', progress, now);
    conditions = slow ? setCondition(conditions, 'Failing', 'Unknown', 'SlowClusterOperator', slow, now) : setCondition(conditions, 'Failing', 'False', '', '', now);
    return { status: { ...status, conditions }, verdict: 'waiting', progress, waitingOn };
  }

  const [first] = failing;
  const message = failing.length > 1 ? `Multiple errors are preventing progress:\n* ${failing.map((e) => e.message).join('\n* ')}` : first.message;
  const incomplete = result.firstIncomplete ? ` (${result.incomplete} incomplete task nodes, beginning with ${describeManifest(result.firstIncomplete)})` : '';
  let conditions = setCondition(status.conditions ?? [], 'Failing', 'True', first.reason, `${message}${incomplete}`, now);
  if (mode !== 'Reconciling') {
    // Errors that are only reported leave the work progressing; others stop it.
    conditions = failing.every((e) => e.effect === 'report')
      ? setCondition(conditions, 'Progressing', 'True', '', progressMessage(version, result.done, result.total), now)
      : setCondition(conditions, 'Progressing', 'True', first.reason, `Unable to apply ${version}: ${first.message}`, now);
  }
  if (!history.some((h) => h.state === 'Completed')) conditions = setCondition(conditions, 'Available', 'False', '', '', now);
  return { status: { ...status, conditions }, verdict: 'failing', waitingOn };
}

/** Upgradeable=False on the ClusterVersion, with every operator's reason, when any operator says so; removed otherwise. */
export function upgradeableStatus(status: VersionStatus, clusterOperators: readonly api.ClusterOperator[], now: number): VersionStatus {
  const blocking = clusterOperators
    .map((co) => ({ name: co.metadata.name, c: (co.status?.conditions ?? []).find((x) => x.type === 'Upgradeable') }))
    .filter((x) => x.c?.status === 'False');
  if (blocking.length === 0) return { ...status, conditions: (status.conditions ?? []).filter((c) => c.type !== 'Upgradeable') };
  const reason = blocking.length === 1 ? (blocking[0].c!.reason ?? 'OperatorNotUpgradeable') : 'ClusterOperatorsNotUpgradeable';
  const message =
    blocking.length === 1
      ? `Cluster operator ${blocking[0].name} should not be upgraded between minor versions: ${blocking[0].c!.message ?? blocking[0].c!.reason ?? ''}`
      : `Multiple cluster operators should not be upgraded between minor versions:\n${blocking.map((b) => `* Cluster operator ${b.name}: ${b.c!.reason ?? ''}: ${b.c!.message ?? ''}`).join('\n')}`;
  return { ...status, conditions: setCondition(status.conditions ?? [], 'Upgradeable', 'False', reason, message, now) };
}
