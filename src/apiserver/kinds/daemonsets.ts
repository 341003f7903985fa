// DaemonSets (apps/v1): kube's defaults (RollingUpdate, maxUnavailable 1, maxSurge 0, ten
// revisions — `kubectl rollout status daemonset` refuses a DaemonSet without a strategy type),
// workload validation and the DESIRED / CURRENT / READY / UP-TO-DATE / AVAILABLE / NODE SELECTOR
// columns.
import type * as api from '../../api/index.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, strategyProblems, workloadProblems } from './workloads.js';
import { selectorUnchanged } from './immutable.js';

export const daemonsets: KindStrategy<api.DaemonSet> = {
  type: builtinType('apps', 'v1', 'daemonsets', 'DaemonSet', { shortNames: ['ds'], categories: ALL, status: true }),
  defaults(object, previous) {
    // kube's SetDefaults_DaemonSet. The selector and template it may lack are refused by validation, which follows.
    const spec = objectField<NonNullable<api.DaemonSet['spec']>>(object, 'spec');
    if (!spec) return;
    fillUnset(spec, { revisionHistoryLimit: 10 });
    defaultPodTemplate(spec.template, previous?.spec?.template, previous !== undefined);
    const strategy = objectField<NonNullable<NonNullable<api.DaemonSet['spec']>['updateStrategy']>>(spec, 'updateStrategy');
    if (!strategy) return;
    fillUnset(strategy, { type: 'RollingUpdate' });
    if (strategy.type !== 'RollingUpdate') return;
    const rollingUpdate = objectField<object>(strategy, 'rollingUpdate');
    if (rollingUpdate) fillUnset(rollingUpdate as { maxSurge?: unknown; maxUnavailable?: unknown }, { maxUnavailable: 1, maxSurge: 0 });
  },
  generation: specChanged,
  validate: (o, previous) => [...workloadProblems(o), ...strategyProblems(o.spec, 'updateStrategy', ['OnDelete', 'RollingUpdate']), ...selectorUnchanged(o, previous)],
  printer: {
    columns: [NAME_COLUMN, column('Desired', 'integer'), column('Current', 'integer'), column('Ready', 'integer'), column('Up-to-date', 'integer'), column('Available', 'integer'), column('Node Selector'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.status?.desiredNumberScheduled ?? 0, o.status?.currentNumberScheduled ?? 0, o.status?.numberReady ?? 0, o.status?.updatedNumberScheduled ?? 0, o.status?.numberAvailable ?? 0, selectorString(o.spec?.template?.spec?.nodeSelector), ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
};
