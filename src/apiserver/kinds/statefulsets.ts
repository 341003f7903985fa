// StatefulSets (apps/v1): kube's defaults (one replica, OrderedReady, a rolling update from partition
// 0, ten revisions kept, claims retained), workload validation, scale, and the READY column.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { ALL, builtinType, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, replicasScale, workloadProblems } from './workloads.js';
import { statefulSetUpdateProblems } from './immutable.js';

export const statefulsets: KindStrategy<api.StatefulSet> = {
  type: builtinType('apps', 'v1', 'statefulsets', 'StatefulSet', { shortNames: ['sts'], categories: ALL, status: true, scale: replicasScale }),
  defaults(object) {
    // kube's SetDefaults_StatefulSet; the selector and template it may lack are refused by validation, which follows.
    const spec = (object.spec = { replicas: 1, podManagementPolicy: 'OrderedReady', revisionHistoryLimit: 10, ...object.spec } as NonNullable<api.StatefulSet['spec']>);
    spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: {} };
    if (spec.updateStrategy.type === 'RollingUpdate' && spec.updateStrategy.rollingUpdate) spec.updateStrategy.rollingUpdate.partition ??= 0;
    spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Retain', whenScaled: 'Retain', ...spec.persistentVolumeClaimRetentionPolicy };
    // Each claim template is a PersistentVolumeClaim, defaulted as one.
    spec.volumeClaimTemplates = spec.volumeClaimTemplates?.map((claim) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      ...claim,
      spec: { volumeMode: 'Filesystem', ...claim.spec },
      status: { phase: 'Pending', ...claim.status },
    }));
    if (!spec.volumeClaimTemplates) delete spec.volumeClaimTemplates;
  },
  generation: specChanged,
  validate: (o, previous) => [...workloadProblems(o), ...statefulSetUpdateProblems(o, previous)],
  printer: {
    columns: [NAME_COLUMN, column('Ready'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, ageCell(o, now), containerNames(o), containerImages(o)],
  },
};
