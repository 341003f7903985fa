// Jobs (batch/v1): kube's defaults (one completion, parallelism 1, backoffLimit 6; without
// manualSelector, a selector on the Job's own uid and the labels that go with it), the
// template's containers, and the STATUS / COMPLETIONS / DURATION columns.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, condition, humanDuration, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { containersProblems } from './pods.js';
import { ALL, builtinType, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames } from './workloads.js';
import { jobUpdateProblems } from './immutable.js';

export const jobs: KindStrategy<api.Job> = {
  type: builtinType('batch', 'v1', 'jobs', 'Job', { categories: ALL, status: true, fieldSelectors: ['status.successful'] }),
  fieldValues: { 'status.successful': (o) => String(o.status?.succeeded ?? 0) },
  defaults(object, previous) {
    // The template it may lack is refused by validation, which follows.
    const spec = (object.spec = { completions: 1, parallelism: 1, backoffLimit: 6, ...object.spec } as NonNullable<api.Job['spec']>);
    if (!previous && !spec.manualSelector && !spec.selector) {
      // Set by the server before defaults run.
      const uid = object.metadata.uid ?? '';
      const name = object.metadata.name;
      spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
      const template = (spec.template ??= {});
      template.metadata = { ...(template.metadata ?? {}) };
      template.metadata.labels = { ...(template.metadata.labels ?? {}), 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name, 'controller-uid': uid, 'job-name': name };
    }
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
