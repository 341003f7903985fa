// ReplicaSets (apps/v1): one replica by default, workload validation, scale, and the
// DESIRED / CURRENT / READY columns.
import type * as api from '../../api/index.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, replicasScale, workloadProblems } from './workloads.js';
import { selectorUnchanged } from './immutable.js';

export const replicasets: KindStrategy<api.ReplicaSet> = {
  type: builtinType('apps', 'v1', 'replicasets', 'ReplicaSet', { shortNames: ['rs'], categories: ALL, status: true, scale: replicasScale, fieldSelectors: ['status.replicas'] }),
  fieldDefaults: { 'status.replicas': '0' },
  defaults(object, previous) {
    // The selector it may lack is refused by validation, which follows.
    const spec = objectField<NonNullable<api.ReplicaSet['spec']>>(object, 'spec');
    if (!spec) return;
    fillUnset(spec, { replicas: 1 });
    defaultPodTemplate(spec.template, previous?.spec?.template, previous !== undefined);
  },
  generation: specChanged,
  validate: (o, previous) => [...workloadProblems(o), ...selectorUnchanged(o, previous)],
  printer: {
    columns: [NAME_COLUMN, column('Desired', 'integer'), column('Current', 'integer'), column('Ready', 'integer'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.spec?.replicas ?? 1, o.status?.replicas ?? 0, o.status?.readyReplicas ?? 0, ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
};
