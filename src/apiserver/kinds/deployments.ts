// Deployments (apps/v1): kube's defaults (one replica, rolling update 25%/25%, ten revisions,
// 600 s progress deadline), workload validation, scale, a generation bumped by spec and annotation
// changes (not by annotations written with the status), and the READY / UP-TO-DATE / AVAILABLE
// columns.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, selectorString } from '../printing/columns.js';
import { jsonEqual } from '../../common/json.js';
import { ALL, builtinType, specChanged, type KindStrategy } from './strategy.js';
import { containerImages, containerNames, replicasScale, workloadProblems } from './workloads.js';
import { selectorUnchanged } from './immutable.js';

export const deployments: KindStrategy<api.Deployment> = {
  type: builtinType('apps', 'v1', 'deployments', 'Deployment', { shortNames: ['deploy'], categories: ALL, status: true, scale: replicasScale }),
  defaults(object) {
    // The selector and template it may lack are refused by validation, which follows.
    object.spec = { replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, ...object.spec } as NonNullable<api.Deployment['spec']>;
  },
  validate: (o, previous) => [...workloadProblems(o), ...selectorUnchanged(o, previous)],
  // kube's deployment status strategy resets spec and labels only: the controller's revision annotation goes with the status.
  statusMetadata: ['annotations'],
  // Annotations count too: they are copied to the ReplicaSets (kube's deployment strategy).
  generation: (next, previous) => specChanged(next, previous) || !jsonEqual(next.metadata?.annotations, previous.metadata?.annotations),
  printer: {
    columns: [NAME_COLUMN, column('Ready'), column('Up-to-date', 'integer'), column('Available', 'integer'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, o.status?.updatedReplicas ?? 0, o.status?.availableReplicas ?? 0, ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
};
