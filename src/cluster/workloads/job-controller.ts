// The Job controller, as kube-controller-manager's (NonIndexed Jobs): runs up to `parallelism`
// pods until `completions` succeed, replaces failed ones after a back-off, fails the Job past
// backoffLimit or activeDeadlineSeconds, honours suspend, and reports the status in kube's words.
// Outcomes are tracked with kube's pod finalizer, so a finished pod deleted by anyone still counts:
//   1. a finished pod that still carries the finalizer goes into status.uncountedTerminatedPods;
//   2. then its finalizer is removed;
//   3. once the informer shows it without the finalizer (or gone), it moves into succeeded/failed.
// Each step is written before the next starts, so a crash or a stale cache never counts a pod
// twice or loses it. Success sets SuccessCriteriaMet, failure FailureTarget; Complete or Failed
// follow once no pod is left running or uncounted.
import type * as api from '../../api/index.js';
import { Controller, type SyncResult, isNotFound, rfc3339 } from '../../kube/index.js';
import { matchesLabels } from '../../common/label-selectors.js';
import { sameJson } from '../../kube/canonical.js';
import { claim, ownerStillThere } from './claim.js';
import { keyFor, type WorkloadContext } from './context.js';
import { podsToDelete } from './delete-order.js';
import { Expectations } from './expectations.js';
import {
  deadlineAt, failure, failureBackoffMs, hasCondition, isFinished, JOB_TRACKING_FINALIZER, outcome, SUCCEEDED, succeededEnough, wantActive, withCondition,
} from './job.js';
import { BURST_REPLICAS, createPods, deletePods, observePods } from './pod-control.js';
import { isReady, podFromTemplate } from './pods.js';
import { ownerKeys, selectorOf } from './owners.js';
import { JOBS, PODS } from './resources.js';

/** kube's pod failure back-off for Jobs: 10 s, doubling, at most 6 minutes. */
type JobStatus = NonNullable<api.Job['status']>;

export const DEFAULT_FAILURE_BACKOFF = { initialMs: 10_000, maxMs: 6 * 60_000 };

export interface JobControllerOptions {
  failureBackoff?: { initialMs: number; maxMs: number };
}

const hasFinalizer = (pod: api.Pod) => (pod.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);

export function jobController(ctx: WorkloadContext, options: JobControllerOptions = {}, expectations = new Expectations(ctx.clock)): Controller {
  const { pods, jobs } = ctx.informers;
  const backoffPolicy = options.failureBackoff ?? DEFAULT_FAILURE_BACKOFF;
  /** Consecutive failures and when the last was counted, per Job (kube keeps this in memory too). */
  const backoffs = new Map<string, { failures: number; lastAt: number }>();
  observePods(ctx, 'Job', expectations);


  const controller = new Controller({ name: 'job-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(jobs);
  controller.watch(pods, (pod, _type, old) => ownerKeys(pod, old, 'Job', jobs));

  async function removeFinalizer(pod: api.Pod): Promise<void> {
    const rest = (pod.metadata.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER);
    try {
      await ctx.client.mergePatch(PODS, pod.metadata.name, pod.metadata.namespace, { metadata: { finalizers: rest.length ? rest : null, resourceVersion: pod.metadata.resourceVersion } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async function sync(key: string): Promise<SyncResult | void> {
    let job = jobs.getByKey(key);
    if (!job) {
      expectations.forget(key);
      backoffs.delete(key);
      return;
    }
    const selector = selectorOf(job);
    const owned = await claim(
      pods.list().filter((p) => p.metadata.namespace === job!.metadata.namespace),
      { client: ctx.client, resource: PODS, owner: job, matches: (p) => matchesLabels(selector, p.metadata.labels), canAdopt: ownerStillThere(ctx.client, JOBS, job) },
    );
    if (isFinished(job)) {
      for (const pod of owned.filter(hasFinalizer)) await removeFinalizer(pod);
      return;
    }
    const now = ctx.clock.now();
    const writeStatus = async (status: JobStatus) => {
      if (sameJson(status, job!.status ?? {})) return;
      job = await ctx.client.update(JOBS, { ...job!, status }, 'status');
    };

    // 1. Newly finished pods become uncounted outcomes, durably, before anything else.
    const uncounted = { succeeded: [...(job.status?.uncountedTerminatedPods?.succeeded ?? [])], failed: [...(job.status?.uncountedTerminatedPods?.failed ?? [])] };
    const listed = new Set([...uncounted.succeeded, ...uncounted.failed]);
    const fresh = owned.filter((p) => hasFinalizer(p) && outcome(p) && !listed.has(p.metadata.uid ?? ''));
    for (const pod of fresh) uncounted[outcome(pod)!].push(pod.metadata.uid ?? '');
    if (fresh.length) {
      const failures = fresh.filter((p) => outcome(p) === 'failed').length;
      const before = backoffs.get(key)?.failures ?? 0;
      backoffs.set(key, failures ? { failures: before + failures, lastAt: now } : { failures: 0, lastAt: now });
      await writeStatus({ ...(job.status ?? {}), uncountedTerminatedPods: compact(uncounted) });
    }
    // 2. Their finalizers go.
    const uncountedSet = new Set([...uncounted.succeeded, ...uncounted.failed]);
    for (const pod of owned.filter((p) => hasFinalizer(p) && uncountedSet.has(p.metadata.uid ?? ''))) await removeFinalizer(pod);
    // 3. What the cache shows without the finalizer (or gone) is counted.
    const byUid = new Map(pods.list().map((p) => [p.metadata.uid ?? '', p]));
    const settled = (uid: string) => !byUid.get(uid) || !hasFinalizer(byUid.get(uid)!);
    const succeeded = (job.status?.succeeded ?? 0) + uncounted.succeeded.filter(settled).length;
    const failed = (job.status?.failed ?? 0) + uncounted.failed.filter(settled).length;
    uncounted.succeeded = uncounted.succeeded.filter((uid) => !settled(uid));
    uncounted.failed = uncounted.failed.filter((uid) => !settled(uid));
    const allSucceeded = succeeded + uncounted.succeeded.length;
    const allFailed = failed + uncounted.failed.length;

    let active = owned.filter((p) => !outcome(p));
    const status: JobStatus = { ...(job.status ?? {}) };
    let conditions = status.conditions;
    if (!status.startTime && !job.spec?.suspend) status.startTime = rfc3339(new Date(now));
    let requeueAfterMs: number | undefined;
    const stopPods = async () => {
      if (!active.length) return;
      expectations.expect(key, 0, active.map(keyFor));
      const error = await deletePods(ctx, job!, active, expectations);
      if (error) throw error;
      active = [];
    };
    const settledAll = () => active.length === 0 && uncounted.succeeded.length === 0 && uncounted.failed.length === 0;
    let created = 0;
    const failing = (conditions ?? []).find((c) => c.type === 'FailureTarget' && c.status === 'True') ?? failure({ ...job, status }, allFailed, now);
    if (failing) {
      conditions = withCondition(conditions, 'FailureTarget', 'True', failing.reason, failing.message, now);
      await stopPods();
      if (settledAll()) {
        conditions = withCondition(conditions, 'Failed', 'True', failing.reason, failing.message, now);
        void ctx.events.event(job, 'Warning', failing.reason ?? '', failing.message ?? '');
      }
    } else if (hasCondition(job, 'SuccessCriteriaMet') || succeededEnough(job, allSucceeded, active.length)) {
      conditions = withCondition(conditions, 'SuccessCriteriaMet', 'True', SUCCEEDED.reason, SUCCEEDED.message, now);
      await stopPods();
      if (settledAll()) {
        conditions = withCondition(conditions, 'Complete', 'True', SUCCEEDED.reason, SUCCEEDED.message, now);
        status.completionTime = rfc3339(new Date(now));
        void ctx.events.event(job, 'Normal', 'Completed', 'Job completed');
      }
    } else {
      if (job.spec?.suspend) conditions = withCondition(conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now);
      else if (hasCondition(job, 'Suspended')) conditions = withCondition(conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', now);
      if (job.spec?.suspend) delete status.startTime;
      if (expectations.satisfied(key)) {
        const want = wantActive(job, allSucceeded, active.length);
        if (active.length > want) {
          const victims = podsToDelete(active, [], Math.min(active.length - want, BURST_REPLICAS), now);
          expectations.expect(key, 0, victims.map(keyFor));
          const error = await deletePods(ctx, job, victims, expectations);
          if (error) throw error;
          active = active.filter((p) => !victims.includes(p));
        } else if (active.length < want) {
          const record = backoffs.get(key);
          const wait = record ? failureBackoffMs(record.failures, backoffPolicy) - (now - record.lastAt) : 0;
          if (wait > 0) {
            requeueAfterMs = wait;
          } else {
            const count = Math.min(want - active.length, BURST_REPLICAS);
            expectations.expect(key, count);
            const error = await createPods(ctx, job, count, () => {
              const pod = podFromTemplate(job!.spec?.template, job!);
              pod.metadata.finalizers = [...(pod.metadata.finalizers ?? []), JOB_TRACKING_FINALIZER];
              return pod;
            }, expectations);
            if (error) throw error;
            created = count;
          }
        }
      }
      const deadline = deadlineAt({ ...job, status });
      if (deadline !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, Math.max(0, deadline - now) + 50);
    }
    await writeStatus({
      ...status,
      ...counts({ active: active.length + created, succeeded, failed }),
      ready: active.filter(isReady).length,
      terminating: owned.filter((p) => p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length,
      uncountedTerminatedPods: compact(uncounted),
      ...(conditions?.length ? { conditions } : {}),
    });
    return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
  }

  return controller;
}

/** uncountedTerminatedPods as kube writes it: `{}` when empty. */
function compact(u: { succeeded: string[]; failed: string[] }): JobStatus['uncountedTerminatedPods'] {
  return { ...(u.succeeded.length ? { succeeded: u.succeeded } : {}), ...(u.failed.length ? { failed: u.failed } : {}) };
}

/** active, succeeded and failed as kube writes them: left out when zero. */
function counts(c: { active: number; succeeded: number; failed: number }): Pick<JobStatus, 'active' | 'succeeded' | 'failed'> {
  const status: Pick<JobStatus, 'active' | 'succeeded' | 'failed'> = {};
  for (const k of ['active', 'succeeded', 'failed'] as const) status[k] = c[k] || undefined;
  return status;
}
