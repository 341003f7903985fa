// The CronJob controller's decisions, as kube's (cronjob_controllerv2 and its utils): which
// scheduled time is due, how many were missed, the Job a run creates (named after the CronJob and
// its scheduled minute, so that a run is created once however often the controller looks), and
// which finished Jobs the history limits let go. Pure.
import type * as api from '../../api/index.js';
import { formatInZone, parseSchedule, type Schedule } from '../../common/cron-schedule.js';
import { controllerReference } from '../../kube/index.js';

/** The annotation a Job gets with the time it was scheduled for, in the CronJob's time zone. */
export const SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

/** More missed runs than this since the last one is worth a warning (kube's threshold). */
export const TOO_MANY_MISSED = 100;

const timeOf = (text: string | undefined | null): number | undefined => {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
};

/** The CronJob's schedule in its time zone (throws ScheduleError as the API server's validation does). */
export function scheduleOf(cronJob: api.CronJob): Schedule {
  return parseSchedule(cronJob.spec?.schedule ?? '', { timeZone: cronJob.spec?.timeZone ?? undefined, start: timeOf(cronJob.metadata.creationTimestamp) ?? 0 });
}

/** The run due now, if any: the latest scheduled time not yet run, and how many were passed over. */
export interface DueRun {
  time?: number;
  missed: number;
}

/**
 * The latest scheduled time after the last run (or the CronJob's creation) and at or before `now`;
 * with startingDeadlineSeconds, times older than that deadline are not looked at.
 */
export function dueRun(cronJob: api.CronJob, schedule: Schedule, now: number): DueRun {
  let earliest = timeOf(cronJob.status?.lastScheduleTime) ?? timeOf(cronJob.metadata.creationTimestamp) ?? now;
  const deadline = cronJob.spec?.startingDeadlineSeconds;
  if (typeof deadline === 'number') earliest = Math.max(earliest, now - deadline * 1000);
  const first = schedule.next(earliest);
  if (first > now) return { missed: 0 };
  const latest = schedule.latest(now) ?? first;
  const second = schedule.next(first);
  // As kube counts them: by the interval between the first two times, not one by one.
  const missed = second > now ? 1 : Math.floor((now - first) / Math.max(1000, second - first)) + 1;
  return { time: latest, missed };
}

/** Whether a due run is past its starting deadline. */
export function tooLate(cronJob: api.CronJob, scheduled: number, now: number): boolean {
  const deadline = cronJob.spec?.startingDeadlineSeconds;
  return typeof deadline === 'number' && scheduled + deadline * 1000 < now;
}

/** The name of the Job a run creates: the CronJob's and its scheduled time in minutes since the epoch. */
export function jobName(cronJob: api.CronJob, scheduled: number): string {
  return `${cronJob.metadata.name}-${Math.floor(scheduled / 60_000)}`;
}

/** The Job of a run: the template's labels, annotations and spec, owned by the CronJob. */
export function jobFromTemplate(cronJob: api.CronJob, scheduled: number): api.Job {
  const template = cronJob.spec?.jobTemplate;
  const zone = cronJob.spec?.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cronJob, scheduled),
      namespace: cronJob.metadata.namespace,
      labels: { ...(template?.metadata?.labels ?? {}) },
      annotations: { ...(template?.metadata?.annotations ?? {}), [SCHEDULED_TIMESTAMP]: formatInZone(scheduled, zone) },
      ownerReferences: [controllerReference({ ...cronJob, apiVersion: 'batch/v1', kind: 'CronJob' })],
    },
    spec: structuredClone(template?.spec) as NonNullable<api.Job['spec']>,
  };
}

/** Complete or Failed, when the Job has finished. */
export function finishedAs(job: api.Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  }
  return undefined;
}

/** A reference to a Job, as status.active lists it. */
export function activeReference(job: api.Job): api.ObjectReference {
  return { apiVersion: 'batch/v1', kind: 'Job', namespace: job.metadata.namespace, name: job.metadata.name, uid: job.metadata.uid, resourceVersion: job.metadata.resourceVersion };
}

/**
 * The finished Jobs the history limits let go: the oldest (by start time, then creation) beyond
 * successfulJobsHistoryLimit of the Complete ones and failedJobsHistoryLimit of the Failed ones.
 */
export function beyondHistory(cronJob: api.CronJob, jobs: api.Job[]): api.Job[] {
  const started = (j: api.Job) => timeOf(j.status?.startTime) ?? timeOf(j.metadata.creationTimestamp) ?? 0;
  const oldestFirst = (list: api.Job[]) => [...list].sort((a, b) => started(a) - started(b) || a.metadata.name.localeCompare(b.metadata.name));
  const excess = (list: api.Job[], limit: number | undefined | null) => (typeof limit === 'number' ? oldestFirst(list).slice(0, Math.max(0, list.length - limit)) : []);
  return [
    ...excess(jobs.filter((j) => finishedAs(j) === 'Complete'), cronJob.spec?.successfulJobsHistoryLimit),
    ...excess(jobs.filter((j) => finishedAs(j) === 'Failed'), cronJob.spec?.failedJobsHistoryLimit),
  ];
}
