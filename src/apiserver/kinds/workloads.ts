// What the workload kinds that embed a pod template share (Deployments, ReplicaSets,
// DaemonSets, StatefulSets): a selector that matches the template's labels, the template's
// containers, a non-negative replica count, the replicas scale subresource, and the
// CONTAINERS / IMAGES columns.
import type { FieldProblem } from '../errors.js';
import { orNone } from '../printing/columns.js';
import type { ScaleSubresource } from '../registry/resource-type.js';
import { containersProblems } from './pods.js';
import type * as api from '../../api/index.js';

/** What the workload kinds share: a selector and a pod template. */
type Workload = api.Deployment | api.ReplicaSet | api.DaemonSet | api.StatefulSet;

/** `/scale` over spec.replicas and status.replicas, with the selector from status. */
export const replicasScale: ScaleSubresource = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' };

export function workloadProblems(object: Workload): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const selector = object.spec?.selector;
  if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) {
    problems.push({ type: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' });
  } else {
    const labels = object.spec?.template?.metadata?.labels ?? {};
    const mismatch = Object.entries(selector.matchLabels ?? {}).some(([k, v]) => labels[k] !== v);
    if (mismatch) problems.push({ type: 'FieldValueInvalid', field: 'spec.template.metadata.labels', message: `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\`` });
  }
  problems.push(...containersProblems(object.spec?.template?.spec?.containers, 'spec.template.spec.containers'));
  // DaemonSets have no replicas, but one sent is checked all the same.
  const { replicas } = (object.spec ?? {}) as { replicas?: unknown };
  if (replicas !== undefined && (!Number.isInteger(replicas) || (replicas as number) < 0)) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` });
  }
  return problems;
}

export const containerNames = (o: Workload | api.Job): string => orNone((o.spec?.template?.spec?.containers ?? []).map((c) => c.name).join(','));
export const containerImages = (o: Workload | api.Job): string => orNone((o.spec?.template?.spec?.containers ?? []).map((c) => c.image).join(','));
