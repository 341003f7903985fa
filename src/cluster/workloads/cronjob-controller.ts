// The CronJob controller, as kube-controller-manager's (cronjob_controllerv2): at each scheduled
// time it creates the Job of the CronJob's template, named after the CronJob and the scheduled
// minute (a run is created once, however often the controller looks or restarts), and records it
// in status.active and status.lastScheduleTime; a run missed while the controller was away is made
// up once (the latest only), unless it is past startingDeadlineSeconds; concurrencyPolicy Forbid
// skips a run while one is active, Replace deletes the active ones first; finished Jobs leave
// status.active (Complete ones set lastSuccessfulTime), and beyond the history limits the oldest
// are deleted. Nothing happens while the CronJob is suspended. Events in kube's words:
// SuccessfulCreate, SawCompletedJob, SuccessfulDelete, MissingJob, UnexpectedJob, FailedCreate,
// MissSchedule, TooManyMissedTimes, UnparseableSchedule, UnknownTimeZone, JobAlreadyActive. Between
// runs the CronJob is looked at again when its next time comes (requeued, on the clock).
import type * as api from '../../api/index.js';
import { isKnownTimeZone, ScheduleError } from '../../common/cron-schedule.js';
import { Controller, controllerOf, isAlreadyExists, rfc3339, type SyncResult } from '../../kube/index.js';
import { sameJson } from '../../kube/canonical.js';
import type { WorkloadContext } from './context.js';
import { activeReference, beyondHistory, dueRun, finishedAs, jobFromTemplate, scheduleOf, TOO_MANY_MISSED, tooLate } from './cronjob.js';
import { CRON_JOBS, JOBS } from './resources.js';

type CronJobStatus = NonNullable<api.CronJob['status']>;

/** A little past the scheduled time, so that the clock has reached it when the key is looked at. */
const AFTER_SCHEDULE_MS = 100;

export function cronJobController(ctx: WorkloadContext): Controller {
  const { cronJobs, jobs } = ctx.informers;
  const controller = new Controller({ name: 'cronjob-controller', clock: ctx.clock, sync: (key) => sync(key) });
  controller.watch(cronJobs);
  controller.watch(jobs, (job) => {
    const ref = controllerOf(job);
    return ref?.kind === 'CronJob' ? `${job.metadata.namespace}/${ref.name}` : undefined;
  });

  const ownedJobs = (cronJob: api.CronJob): api.Job[] =>
    jobs.list().filter((j) => j.metadata.namespace === cronJob.metadata.namespace && controllerOf(j)?.uid === cronJob.metadata.uid);

  async function sync(key: string): Promise<SyncResult | void> {
    let cronJob = cronJobs.getByKey(key);
    if (!cronJob) return;
    const now = ctx.clock.now();
    const owned = ownedJobs(cronJob);
    // A running Job its cached status does not list may be one it has just recorded: ask the API server.
    const listed = (c: api.CronJob, uid: string | undefined) => (c.status?.active ?? []).some((r) => r.uid === uid);
    if (owned.some((j) => !finishedAs(j) && !listed(cronJob!, j.metadata.uid))) {
      const fresh = await ctx.client.read(CRON_JOBS, cronJob.metadata.name, cronJob.metadata.namespace);
      if (!fresh) return;
      cronJob = fresh;
    }
    const status: CronJobStatus = structuredClone(cronJob.status ?? {});
    let active = [...(status.active ?? [])];
    const isActive = (uid: string | undefined) => active.some((r) => r.uid === uid);

    // What became of the Jobs it ran.
    for (const job of owned) {
      const finished = finishedAs(job);
      if (!finished && !isActive(job.metadata.uid)) {
        void ctx.events.event(cronJob, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${job.metadata.name}`);
      } else if (finished && isActive(job.metadata.uid)) {
        active = active.filter((r) => r.uid !== job.metadata.uid);
        void ctx.events.event(cronJob, 'Normal', 'SawCompletedJob', `Saw completed job: ${job.metadata.name}, condition: ${finished}`);
      }
      const completed = finished === 'Complete' ? job.status?.completionTime : undefined;
      if (completed && (!status.lastSuccessfulTime || Date.parse(completed) > Date.parse(status.lastSuccessfulTime))) status.lastSuccessfulTime = completed;
    }
    for (const ref of active.filter((r) => !owned.some((j) => j.metadata.uid === r.uid))) {
      // The cache may be behind: only a Job the API server does not have is missing.
      const current = await ctx.client.read(JOBS, ref.name ?? '', cronJob.metadata.namespace);
      if (current && current.metadata.uid === ref.uid) continue;
      active = active.filter((r) => r !== ref);
      void ctx.events.event(cronJob, 'Normal', 'MissingJob', `Active job went missing: ${ref.name}`);
    }

    const writeStatus = async (): Promise<void> => {
      const next: CronJobStatus = { ...status, active: active.length ? active : undefined };
      if (next.active === undefined) delete next.active;
      if (sameJson(next, cronJob!.status ?? {})) return;
      cronJob = await ctx.client.update(CRON_JOBS, { ...cronJob!, status: next }, 'status');
    };
    const deleteJob = async (name: string): Promise<void> => {
      await ctx.client.delete(JOBS, name, cronJob!.metadata.namespace, { propagationPolicy: 'Background' });
      void ctx.events.event(cronJob!, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`);
    };

    if (cronJob.metadata.deletionTimestamp) return writeStatus();
    const zone = cronJob.spec?.timeZone;
    if (zone && !isKnownTimeZone(zone)) {
      void ctx.events.event(cronJob, 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(zone)}`);
      return writeStatus();
    }
    // History is kept whether or not runs go on.
    for (const job of beyondHistory(cronJob, owned.filter((j) => !isActive(j.metadata.uid)))) await deleteJob(job.metadata.name);
    if (cronJob.spec?.suspend) return writeStatus();

    let schedule;
    try {
      schedule = scheduleOf(cronJob);
    } catch (e) {
      if (!(e instanceof ScheduleError)) throw e;
      void ctx.events.event(cronJob, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(cronJob.spec?.schedule)} : ${e.message}`);
      return writeStatus();
    }
    const requeue = (): SyncResult => ({ requeueAfterMs: Math.max(0, schedule.next(now) - now) + AFTER_SCHEDULE_MS });
    const due = dueRun(cronJob, schedule, now);
    if (due.missed > TOO_MANY_MISSED) {
      void ctx.events.event(cronJob, 'Warning', 'TooManyMissedTimes', `too many missed start times: ${due.missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`);
    }
    const scheduled = due.time;
    if (scheduled === undefined || (status.lastScheduleTime && Date.parse(status.lastScheduleTime) >= scheduled)) {
      await writeStatus();
      return requeue();
    }
    if (tooLate(cronJob, scheduled, now)) {
      void ctx.events.event(cronJob, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${new Date(scheduled).toUTCString().replace('GMT', '+0000')}`);
      await writeStatus();
      return requeue();
    }
    const policy = cronJob.spec?.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && active.length > 0) {
      void ctx.events.event(cronJob, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      await writeStatus();
      return requeue();
    }
    if (policy === 'Replace') {
      for (const ref of active) await deleteJob(ref.name ?? '');
      active = [];
    }

    const wanted = jobFromTemplate(cronJob, scheduled);
    let job: api.Job;
    try {
      job = await ctx.client.create(JOBS, wanted);
      void ctx.events.event(cronJob, 'Normal', 'SuccessfulCreate', `Created job ${job.metadata.name}`);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        void ctx.events.event(cronJob, 'Warning', 'FailedCreate', `Error creating job: ${(e as Error).message}`);
        await writeStatus();
        throw e;
      }
      // Created before a crash or a stale look: the run is done; it is active if it is ours and running.
      const existing = await ctx.client.read(JOBS, wanted.metadata.name, cronJob.metadata.namespace);
      job = existing && controllerOf(existing)?.uid === cronJob.metadata.uid ? existing : wanted;
    }
    if (job.metadata.uid && !finishedAs(job) && !isActive(job.metadata.uid)) active.push(activeReference(job));
    status.lastScheduleTime = rfc3339(new Date(scheduled));
    await writeStatus();
    return requeue();
  }

  return controller;
}

