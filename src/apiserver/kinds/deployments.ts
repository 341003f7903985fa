// Deployments (apps/v1): kube's defaults (one replica, rolling update 25%/25%, ten revisions,
// 600 s progress deadline), workload validation, scale, a generation bumped by spec and annotation
// changes (not by annotations written with the status), and the READY / UP-TO-DATE / AVAILABLE
// columns.
import type * as api from '../../api/index.js';
import { defaultPodTemplate } from '../../kube/pod-defaults.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { jsonEqual } from '../../common/json.js';
import { ALL, builtinType, fillUnset, objectField, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, replicasScale, strategyProblems, workloadProblems } from './workloads.js';
import { selectorUnchanged } from './immutable.js';

export const deployments: KindStrategy<api.Deployment> = {
  type: builtinType('apps', 'v1', 'deployments', 'Deployment', { shortNames: ['deploy'], categories: ALL, status: true, scale: replicasScale }),
  defaults(object, previous) {
    // kube's SetDefaults_Deployment. The selector and template it may lack are refused by validation, which follows.
    const spec = objectField<NonNullable<api.Deployment['spec']>>(object, 'spec');
    if (!spec) return;
    fillUnset(spec, { replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 });
    defaultPodTemplate(spec.template, previous?.spec?.template, previous !== undefined);
    // `kubectl create deployment` sends `strategy: {}`: a strategy without a type is a rolling update too.
    const strategy = objectField<NonNullable<api.Deployment['spec']>['strategy'] & object>(spec, 'strategy');
    if (!strategy) return;
    fillUnset(strategy, { type: 'RollingUpdate' });
    if (strategy.type !== 'RollingUpdate') return;
    const rollingUpdate = objectField<object>(strategy, 'rollingUpdate');
    if (rollingUpdate) fillUnset(rollingUpdate as { maxSurge?: unknown; maxUnavailable?: unknown }, { maxUnavailable: '25%', maxSurge: '25%' });
  },
  validate: (o, previous) => [...workloadProblems(o), ...strategyProblems(o.spec, 'strategy', ['Recreate', 'RollingUpdate']), ...selectorUnchanged(o, previous)],
  // kube's deployment status strategy resets spec and labels only: the controller's revision annotation goes with the status.
  statusMetadata: ['annotations'],
  // Annotations count too: they are copied to the ReplicaSets (kube's deployment strategy).
  generation: (next, previous) => specChanged(next, previous) || !jsonEqual(next.metadata?.annotations, previous.metadata?.annotations),
  printer: {
    columns: [NAME_COLUMN, column('Ready'), column('Up-to-date', 'integer'), column('Available', 'integer'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, o.status?.updatedReplicas ?? 0, o.status?.availableReplicas ?? 0, ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
};
