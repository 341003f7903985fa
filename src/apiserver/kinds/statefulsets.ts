// StatefulSets (apps/v1): one replica by default, workload validation, scale, and the READY column.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { ALL, builtinType, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, replicasScale, workloadProblems } from './workloads.js';
import { statefulSetUpdateProblems } from './immutable.js';

export const statefulsets: KindStrategy<api.StatefulSet> = {
  type: builtinType('apps', 'v1', 'statefulsets', 'StatefulSet', { shortNames: ['sts'], categories: ALL, status: true, scale: replicasScale }),
  defaults(object) {
    // The selector and template it may lack are refused by validation, which follows.
    object.spec = { replicas: 1, ...object.spec } as NonNullable<api.StatefulSet['spec']>;
  },
  generation: specChanged,
  validate: (o, previous) => [...workloadProblems(o), ...statefulSetUpdateProblems(o, previous)],
  printer: {
    columns: [NAME_COLUMN, column('Ready'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, ageCell(o, now), containerNames(o), containerImages(o)],
  },
};
