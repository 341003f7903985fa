// CronJobs (batch/v1): kube's defaults (concurrencyPolicy Allow, not suspended, 3 successful and 1
// failed Job kept), its validation (a name short enough for the Jobs named after it, a schedule
// robfig/cron reads, a known IANA time zone and none inside the schedule, the policies, history
// limits and deadline in range, a Job template whose pods may end), and kubectl's columns
// (SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE).
import type * as api from '../../api/index.js';
import { isPlainObject } from '../../common/json.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { isKnownTimeZone, parseSchedule, ScheduleError, scheduleNamesTimeZone } from '../../common/cron-schedule.js';
import { invalidValue, unsupported, type FieldProblem } from '../errors.js';
import { age, AGE_COLUMN, ageCell, column, NAME_COLUMN, orNone, selectorString } from '../printing/columns.js';
import { jobSpecProblems } from './jobs.js';
import { nonNegative } from './workloads.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';

/** A Job's name is the CronJob's and 11 characters of its scheduled time; 63 in all. */
export const CRONJOB_NAME_MAX = 52;

const POLICIES = ['Allow', 'Forbid', 'Replace'];

function scheduleProblems(spec: Partial<NonNullable<api.CronJob['spec']>>): FieldProblem[] {
  const { schedule, timeZone } = spec;
  if (typeof schedule !== 'string' || schedule.trim() === '') return [{ type: 'FieldValueRequired', field: 'spec.schedule', message: 'Required value' }];
  if (scheduleNamesTimeZone(schedule)) {
    return [{ type: 'FieldValueInvalid', field: 'spec.schedule', message: `Invalid value: ${JSON.stringify(schedule)}: cannot use TZ or CRON_TZ in schedule, use timeZone field instead` }];
  }
  const problems: FieldProblem[] = [];
  if (timeZone !== undefined && timeZone !== null && (typeof timeZone !== 'string' || !isKnownTimeZone(timeZone))) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.timeZone', message: `Invalid value: ${JSON.stringify(timeZone)}: unknown time zone ${String(timeZone)}` });
  }
  try {
    parseSchedule(schedule, { timeZone: problems.length === 0 ? timeZone ?? undefined : undefined });
  } catch (e) {
    if (!(e instanceof ScheduleError)) throw e;
    problems.push({ type: 'FieldValueInvalid', field: 'spec.schedule', message: `Invalid value: ${JSON.stringify(schedule)}: ${e.message}` });
  }
  return problems;
}

function cronJobProblems(o: api.CronJob): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (o.metadata.name && o.metadata.name.length > CRONJOB_NAME_MAX) {
    problems.push({ type: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: ${JSON.stringify(o.metadata.name)}: must be no more than ${CRONJOB_NAME_MAX} characters` });
  }
  const spec: Partial<NonNullable<api.CronJob['spec']>> = o.spec ?? {};
  problems.push(...scheduleProblems(spec));
  if (!POLICIES.includes(spec.concurrencyPolicy as string)) {
    problems.push({ type: 'FieldValueNotSupported', field: 'spec.concurrencyPolicy', message: `Unsupported value: ${JSON.stringify(spec.concurrencyPolicy)}: supported values: "Allow", "Forbid", "Replace"` });
  }
  problems.push(
    ...nonNegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'),
    ...nonNegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'),
    ...nonNegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'),
  );
  // The Jobs' spec, as kube checks a Job's (ValidateJobTemplateSpec): the selector is each Job's own.
  const jobSpec = spec.jobTemplate?.spec;
  problems.push(...jobSpecProblems(jobSpec, 'spec.jobTemplate.spec'));
  if (isPlainObject(jobSpec)) {
    if (jobSpec.selector !== undefined && jobSpec.selector !== null) {
      problems.push(invalidValue('spec.jobTemplate.spec.selector', jobSpec.selector, '`selector` will be auto-generated'));
    }
    if (jobSpec.manualSelector === true) {
      problems.push(unsupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
    }
  }
  return problems;
}

export const cronjobs: KindStrategy<api.CronJob> = {
  type: builtinType('batch', 'v1', 'cronjobs', 'CronJob', { categories: ALL, status: true, shortNames: ['cj'] }),
  defaults(object, previous) {
    // What is missing beyond these is refused by validation, which follows.
    // kube's SetDefaults_CronJob.
    const spec = objectField<NonNullable<api.CronJob['spec']>>(object, 'spec');
    if (!spec) return;
    fillUnset(spec, { concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    // The Jobs' pod template, as kube defaults every PodSpec it holds.
    const jobSpec = isPlainObject(spec.jobTemplate) ? spec.jobTemplate.spec : undefined;
    defaultPodTemplate(isPlainObject(jobSpec) ? jobSpec.template : undefined, previous?.spec?.jobTemplate?.spec?.template, previous !== undefined);
  },
  generation: specChanged,
  // (One stored before its Job template was checked as a Job's is refused on update only for what
  // the update brings — the registry's ratcheting — so its controller still writes its status.)
  validate: cronJobProblems,
  printer: {
    columns: [
      NAME_COLUMN, column('Schedule'), column('Timezone'), column('Suspend', 'boolean'), column('Active', 'integer'), column('Last Schedule'), AGE_COLUMN,
      column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1),
    ],
    cells: (o, now) => {
      const containers = o.spec?.jobTemplate?.spec?.template?.spec?.containers ?? [];
      const suspend = o.spec?.suspend;
      return [
        o.metadata.name,
        o.spec?.schedule ?? '',
        orNone(o.spec?.timeZone),
        suspend === undefined || suspend === null ? '<unset>' : suspend ? 'True' : 'False',
        (o.status?.active ?? []).length,
        o.status?.lastScheduleTime ? age(o.status.lastScheduleTime, now) : '<none>',
        ageCell(o, now),
        orNone(containers.map((c) => c.name).join(',')),
        orNone(containers.map((c) => c.image).join(',')),
        selectorString(o.spec?.jobTemplate?.spec?.selector),
      ];
    },
  },
};
