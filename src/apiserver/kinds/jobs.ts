// Jobs (batch/v1): kube's defaults (parallelism 1, and one completion unless parallelism is set —
// a work queue has none; backoffLimit 6, completionMode NonIndexed, not suspended, pods replaced
// once terminated or failed; without manualSelector, a selector on the Job's own uid and the labels
// that go with it, which the Job carries too), kube's validation (counts not below zero, a known
// completion mode, pods that end: restartPolicy OnFailure or Never, a selector of one's own only
// with manualSelector), and the STATUS / COMPLETIONS / DURATION columns.
import type * as api from '../../api/index.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { isPlainObject } from '../../common/json.js';
import { storedSelectorMatches } from '../../common/label-selectors.js';
import { invalidValue, unsupported, type FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, condition, humanDuration, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { containersProblems } from './pods.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, nonNegative } from './workloads.js';
import { jobUpdateProblems } from './immutable.js';

const COMPLETION_MODES = ['NonIndexed', 'Indexed'];
/** sets.List order, as kube prints them. */
const REPLACEMENT_POLICIES = ['Failed', 'TerminatingOrFailed'];
/** Most pods an Indexed Job runs at once (kube's maxParallelismForIndexedJob). */
const MAX_INDEXED_PARALLELISM = 100_000;

const isSet = (value: unknown): boolean => value !== undefined && value !== null;

/**
 * kube's validateJobSpec, for a Job's spec and a CronJob's Job template (`path` names where it
 * is): counts and seconds not below zero; a known completion mode, Indexed with a completion
 * count, and the per-index limits only with it; a known pod replacement policy (Failed under a pod
 * failure policy); the template's containers; and pods that end — restartPolicy OnFailure or
 * Never (Never under a pod failure policy). A template without one has the default, Always, which
 * kube refuses as "Required value".
 */
export function jobSpecProblems(spec: unknown, path: string): FieldProblem[] {
  if (!isPlainObject(spec)) return [];
  const s = spec as Partial<NonNullable<api.Job['spec']>>;
  const problems: FieldProblem[] = [];
  for (const field of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes'] as const) {
    problems.push(...nonNegative(s[field], `${path}.${field}`));
  }
  if (isSet(s.maxFailedIndexes) && !isSet(s.backoffLimitPerIndex)) {
    problems.push({ type: 'FieldValueRequired', field: `${path}.backoffLimitPerIndex`, message: 'Required value: when maxFailedIndexes is specified' });
  }
  const mode = s.completionMode;
  if (isSet(mode) && !COMPLETION_MODES.includes(mode!)) problems.push(unsupported(`${path}.completionMode`, mode, COMPLETION_MODES));
  if (mode === 'Indexed') {
    if (!isSet(s.completions)) problems.push({ type: 'FieldValueRequired', field: `${path}.completions`, message: 'Required value: when completion mode is Indexed' });
    if (typeof s.parallelism === 'number' && s.parallelism > MAX_INDEXED_PARALLELISM) {
      problems.push(invalidValue(`${path}.parallelism`, s.parallelism, `must be less than or equal to ${MAX_INDEXED_PARALLELISM} when completion mode is Indexed`));
    }
    if (typeof s.completions === 'number' && typeof s.maxFailedIndexes === 'number' && s.maxFailedIndexes > s.completions) {
      problems.push(invalidValue(`${path}.maxFailedIndexes`, s.maxFailedIndexes, 'must be less than or equal to completions'));
    }
  } else if (!isSet(mode) || mode === 'NonIndexed') {
    if (isSet(s.backoffLimitPerIndex)) problems.push(invalidValue(`${path}.backoffLimitPerIndex`, s.backoffLimitPerIndex, 'requires indexed completion mode'));
    if (isSet(s.maxFailedIndexes)) problems.push(invalidValue(`${path}.maxFailedIndexes`, s.maxFailedIndexes, 'requires indexed completion mode'));
  }
  const replacement = s.podReplacementPolicy;
  if (isSet(replacement)) {
    const supported = s.podFailurePolicy ? ['Failed'] : REPLACEMENT_POLICIES;
    if (!supported.includes(replacement!)) problems.push(unsupported(`${path}.podReplacementPolicy`, replacement, supported));
  }
  const podSpec = isPlainObject(s.template) && isPlainObject(s.template.spec) ? s.template.spec : undefined;
  problems.push(...containersProblems(podSpec?.containers, `${path}.template.spec.containers`));
  if (podSpec) {
    const field = `${path}.template.spec.restartPolicy`;
    const policy = podSpec.restartPolicy;
    if (policy === 'Always' || !policy) problems.push({ type: 'FieldValueRequired', field, message: 'Required value: valid values: "OnFailure", "Never"' });
    else if (policy !== 'OnFailure' && policy !== 'Never') problems.push(unsupported(field, policy, ['OnFailure', 'Never']));
    else if (s.podFailurePolicy && policy !== 'Never') problems.push(invalidValue(field, policy, 'only "Never" is supported when podFailurePolicy is specified'));
  }
  return problems;
}

/**
 * A new Job's own checks beyond its spec's (kube's ValidateJob): a selector, one that matches the
 * template's labels, and — unless the Job says manualSelector — only the labels the server
 * generates (a selector of one's own needs manualSelector: true: "`selector` not auto-generated").
 */
function jobSelectorProblems(job: api.Job): FieldProblem[] {
  const selector = job.spec?.selector;
  if (!isPlainObject(selector)) return [{ type: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' }];
  const problems: FieldProblem[] = [];
  const { uid = '', name } = job.metadata;
  const generated = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name, 'controller-uid': uid, 'job-name': name };
  if (!job.spec?.manualSelector && !storedSelectorMatches(selector, generated)) problems.push(invalidValue('spec.selector', selector, '`selector` not auto-generated'));
  const labels = job.spec?.template?.metadata?.labels ?? {};
  if (!storedSelectorMatches(selector, labels)) problems.push(invalidValue('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  return problems;
}

export const jobs: KindStrategy<api.Job> = {
  type: builtinType('batch', 'v1', 'jobs', 'Job', { categories: ALL, status: true, fieldSelectors: ['status.successful'] }),
  fieldValues: { 'status.successful': (o) => String(o.status?.succeeded ?? 0) },
  defaults(object, previous) {
    // kube's SetDefaults_Job. The template it may lack is refused by validation, which follows.
    const spec = objectField<NonNullable<api.Job['spec']>>(object, 'spec');
    if (!spec) return;
    // One completion only for a Job that says neither: one with parallelism and no completions is
    // a work queue (done at its first success), which a default completion count would undo.
    if ((spec.completions === undefined || spec.completions === null) && (spec.parallelism === undefined || spec.parallelism === null)) spec.completions = 1;
    fillUnset(spec, {
      parallelism: 1,
      // A Job with a limit per index is not limited as a whole (math.MaxInt32).
      backoffLimit: spec.backoffLimitPerIndex === undefined || spec.backoffLimitPerIndex === null ? 6 : 2_147_483_647,
      completionMode: 'NonIndexed',
      suspend: false,
      // JobPodReplacementPolicy (on by default since 1.29): replacements wait for the pod to be gone,
      // except under a pod failure policy, which needs the pod Failed.
      podReplacementPolicy: spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed',
      manualSelector: false,
    });
    for (const rule of Array.isArray(spec.podFailurePolicy?.rules) ? spec.podFailurePolicy.rules : []) {
      for (const pattern of Array.isArray(rule?.onPodConditions) ? rule.onPodConditions : []) if (isPlainObject(pattern)) fillUnset(pattern, { status: 'True' });
    }
    defaultPodTemplate(spec.template, previous?.spec?.template, previous !== undefined);
    if (!previous && !spec.manualSelector && !spec.selector) {
      // Set by the server before defaults run.
      const uid = object.metadata.uid ?? '';
      const name = object.metadata.name;
      spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
      const template = (spec.template ??= {});
      template.metadata = { ...(template.metadata ?? {}) };
      template.metadata.labels = { ...(template.metadata.labels ?? {}), 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name, 'controller-uid': uid, 'job-name': name };
    }
    // A Job without labels of its own carries its pods' (kube defaults them so on every read: a new
    // Job shows the selector's labels).
    const podLabels = spec.template?.metadata?.labels;
    if (isPlainObject(podLabels) && Object.keys(podLabels).length > 0 && Object.keys(object.metadata.labels ?? {}).length === 0) object.metadata.labels = { ...(podLabels as Record<string, string>) };
  },
  generation: specChanged,
  validate(o, previous) {
    // (A Job an earlier bosun stored, one whose template restarts Always, is refused on update only
    // for what the update brings: the registry's ratcheting.)
    return [...jobSpecProblems(o.spec, 'spec'), ...(previous ? [] : jobSelectorProblems(o)), ...jobUpdateProblems(o, previous)];
  },
  printer: {
    columns: [NAME_COLUMN, column('Status'), column('Completions'), column('Duration'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => {
      const has = (type: string) => condition(o, type)?.status === 'True';
      const status = has('Complete') ? 'Complete' : has('Failed') ? 'Failed' : o.metadata?.deletionTimestamp ? 'Terminating' : has('Suspended') ? 'Suspended' : has('FailureTarget') ? 'FailureTarget' : has('SuccessCriteriaMet') ? 'SuccessCriteriaMet' : 'Running';
      const succeeded = o.status?.succeeded ?? 0;
      const parallelism = o.spec?.parallelism ?? 0;
      const completions = o.spec?.completions !== undefined && o.spec?.completions !== null ? `${succeeded}/${o.spec.completions}` : parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
      const start = Date.parse(o.status?.startTime ?? '');
      const end = o.status?.completionTime ? Date.parse(o.status.completionTime) : now;
      return [o.metadata.name, status, completions, Number.isNaN(start) ? '' : humanDuration(end - start), ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)];
    },
  },
};
