// The Job controller's decisions, as kube's (NonIndexed completion mode, pod failure counted by
// pods, not container restarts): how many pods should be active, whether the Job has met its
// success criteria or failed (backoff limit, active deadline), the back-off before replacing
// failed pods, and the conditions and status fields in kube's words. Pure.
import type * as api from '../../api/index.js';
import { rfc3339 } from '../../kube/index.js';

/** The finalizer that keeps a finished pod until its outcome is counted in the Job's status. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

export interface JobCondition {
  type: string;
  status: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export const SUCCEEDED = { reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' };
export const BACKOFF_LIMIT_EXCEEDED = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
export const DEADLINE_EXCEEDED = { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };

export function hasCondition(job: api.Job, type: string): boolean {
  return (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** Complete or Failed: nothing more to do but let go of the pods. */
export function isFinished(job: api.Job): boolean {
  return hasCondition(job, 'Complete') || hasCondition(job, 'Failed');
}

/** Condition list with `type` set (kept as it was when status, reason and message agree). */
export function withCondition(conditions: JobCondition[] | undefined, type: string, status: string, reason: string | undefined, message: string | undefined, now: number): JobCondition[] {
  const list = conditions ?? [];
  const current = list.find((c) => c.type === type);
  if (current && current.status === status && current.reason === reason && current.message === message) return list;
  const time = rfc3339(new Date(now));
  const next = { type, status, lastProbeTime: time, lastTransitionTime: current && current.status === status ? current.lastTransitionTime : time, reason, message };
  return current ? list.map((c) => (c === current ? next : c)) : [...list, next];
}

/** A pod whose outcome is final: Succeeded, Failed, or deleted before it succeeded (kube counts that as failed). */
export function outcome(pod: api.Pod): 'succeeded' | 'failed' | undefined {
  if (pod.status?.phase === 'Succeeded') return 'succeeded';
  if (pod.status?.phase === 'Failed' || pod.metadata?.deletionTimestamp) return 'failed';
  return undefined;
}

/** Why the Job fails now, if it does: more failures than backoffLimit, or past activeDeadlineSeconds. */
export function failure(job: api.Job, failed: number, now: number): { reason: string; message: string } | undefined {
  if (failed > (job.spec?.backoffLimit ?? 6)) return BACKOFF_LIMIT_EXCEEDED;
  const deadline = job.spec?.activeDeadlineSeconds;
  const started = Date.parse(job.status?.startTime ?? '');
  if (deadline !== undefined && deadline !== null && Number.isFinite(started) && started + deadline * 1000 <= now) return DEADLINE_EXCEEDED;
  return undefined;
}

/** When activeDeadlineSeconds runs out (ms since epoch), to look again then. */
export function deadlineAt(job: api.Job): number | undefined {
  const deadline = job.spec?.activeDeadlineSeconds;
  const started = Date.parse(job.status?.startTime ?? '');
  return deadline !== undefined && deadline !== null && Number.isFinite(started) ? started + deadline * 1000 : undefined;
}

/** Success criteria: completions reached; without completions (a work queue), one success and none active. */
export function succeededEnough(job: api.Job, succeeded: number, active: number): boolean {
  const completions = job.spec?.completions;
  if (completions === undefined || completions === null) return succeeded > 0 && active === 0;
  return succeeded >= completions;
}

/** How many pods should be active now (kube's manageJob for NonIndexed Jobs). */
export function wantActive(job: api.Job, succeeded: number, active: number): number {
  if (job.spec?.suspend) return 0;
  const parallelism = job.spec?.parallelism ?? 1;
  const completions = job.spec?.completions;
  if (completions === undefined || completions === null) return succeeded > 0 ? Math.min(active, parallelism) : parallelism;
  return Math.max(0, Math.min(parallelism, completions - succeeded));
}

/** Back-off before new pods after `consecutiveFailures` (kube: 10 s doubling, at most 6 min). */
export function failureBackoffMs(consecutiveFailures: number, base: { initialMs: number; maxMs: number }): number {
  if (consecutiveFailures <= 0) return 0;
  return Math.min(base.maxMs, base.initialMs * 2 ** (consecutiveFailures - 1));
}
