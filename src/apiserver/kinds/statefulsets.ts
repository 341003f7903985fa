// StatefulSets (apps/v1): kube's defaults (one replica, OrderedReady, a rolling update from partition
// 0, ten revisions kept, claims retained), workload validation, scale, and the READY column.
import type * as api from '../../api/index.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { isPlainObject } from '../../common/json.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, replicasScale, strategyProblems, workloadProblems } from './workloads.js';
import { statefulSetUpdateProblems } from './immutable.js';

export const statefulsets: KindStrategy<api.StatefulSet> = {
  type: builtinType('apps', 'v1', 'statefulsets', 'StatefulSet', { shortNames: ['sts'], categories: ALL, status: true, scale: replicasScale }),
  defaults(object, previous) {
    // kube's SetDefaults_StatefulSet; the selector and template it may lack are refused by validation, which follows.
    const spec = objectField<NonNullable<api.StatefulSet['spec']>>(object, 'spec');
    if (!spec) return;
    fillUnset(spec, { replicas: 1, podManagementPolicy: 'OrderedReady', revisionHistoryLimit: 10 });
    defaultPodTemplate(spec.template, previous?.spec?.template, previous !== undefined);
    // A strategy without a type (`updateStrategy: {}`) is a rolling update from partition 0; one that
    // names RollingUpdate without parameters is left without them, as kube leaves it.
    const strategy = objectField<NonNullable<NonNullable<api.StatefulSet['spec']>['updateStrategy']>>(spec, 'updateStrategy');
    if (strategy && !strategy.type) {
      strategy.type = 'RollingUpdate';
      strategy.rollingUpdate ??= {};
    }
    if (strategy?.type === 'RollingUpdate' && isPlainObject(strategy.rollingUpdate)) fillUnset(strategy.rollingUpdate, { partition: 0 });
    const retention = objectField<NonNullable<NonNullable<api.StatefulSet['spec']>['persistentVolumeClaimRetentionPolicy']>>(spec, 'persistentVolumeClaimRetentionPolicy');
    if (retention) fillUnset(retention, { whenDeleted: 'Retain', whenScaled: 'Retain' });
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
  validate: (o, previous) => [...workloadProblems(o), ...strategyProblems(o.spec, 'updateStrategy', ['OnDelete', 'RollingUpdate']), ...statefulSetUpdateProblems(o, previous)],
  printer: {
    columns: [NAME_COLUMN, column('Ready'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, ageCell(o, now), containerNames(o), containerImages(o)],
  },
};
