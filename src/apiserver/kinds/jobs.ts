// Jobs (batch/v1): kube's defaults (parallelism 1, and one completion unless parallelism is set —
// a work queue has none; backoffLimit 6, completionMode NonIndexed, not suspended, pods replaced
// once terminated or failed; without manualSelector, a selector on the Job's own uid and the labels
// that go with it, which the Job carries too), the template's containers, and the STATUS /
// COMPLETIONS / DURATION columns.
import type * as api from '../../api/index.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { isPlainObject } from '../../common/json.js';
import { AGE_COLUMN, ageCell, column, condition, humanDuration, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { containersProblems } from './pods.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames } from './workloads.js';
import { jobUpdateProblems } from './immutable.js';

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
  validate: (o, previous) => [...containersProblems(o.spec?.template?.spec?.containers, 'spec.template.spec.containers'), ...jobUpdateProblems(o, previous)],
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
