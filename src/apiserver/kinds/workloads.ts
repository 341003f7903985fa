// What the workload kinds that embed a pod template share (Deployments, ReplicaSets,
// DaemonSets, StatefulSets): a selector that matches the template's labels, the template's
// containers, a non-negative replica count, an update strategy of a type the kind knows, the
// replicas scale subresource, and the CONTAINERS / IMAGES columns.
import { isPlainObject } from '../../common/json.js';
import { invalidValue, unsupported, type FieldProblem } from '../errors.js';
import { orNone } from '../printing/columns.js';
import type { ScaleSubresource } from '../registry/resource-type.js';
import { containersProblems } from './pods.js';
import type * as api from '../../api/index.js';

/** A count or a number of seconds that may be absent, else a whole number not below zero (kube's ValidateNonnegativeField). */
export function nonNegative(value: unknown, field: string): FieldProblem[] {
  if (value === undefined || value === null) return [];
  return Number.isInteger(value) && (value as number) >= 0 ? [] : [invalidValue(field, value, 'must be greater than or equal to 0')];
}

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
  problems.push(...nonNegative(replicas, 'spec.replicas'));
  return problems;
}

/**
 * A workload's update strategy (`spec.strategy` of a Deployment, `spec.updateStrategy` of a DaemonSet
 * or StatefulSet): an object, of a type the kind knows, with its rolling parameters an object too —
 * and none for a Deployment that recreates (kube's ValidateDeploymentStrategy).
 */
export function strategyProblems(spec: unknown, field: 'strategy' | 'updateStrategy', supported: readonly string[]): FieldProblem[] {
  const strategy = isPlainObject(spec) ? spec[field] : undefined;
  const path = `spec.${field}`;
  if (strategy === undefined || strategy === null) return [];
  if (!isPlainObject(strategy)) return [invalidValue(path, strategy, 'must be an object')];
  const problems: FieldProblem[] = [];
  if (!supported.includes(strategy.type as string)) {
    problems.push(unsupported(`${path}.type`, strategy.type, supported));
  }
  const rolling = strategy.rollingUpdate;
  if (rolling !== undefined && rolling !== null && !isPlainObject(rolling)) {
    problems.push(invalidValue(`${path}.rollingUpdate`, rolling, 'must be an object'));
  } else if (field === 'strategy' && strategy.type === 'Recreate' && isPlainObject(rolling)) {
    problems.push({ type: 'FieldValueForbidden', field: `${path}.rollingUpdate`, message: "Forbidden: may not be specified when strategy `type` is 'Recreate'" });
  }
  return problems;
}

export const containerNames = (o: Workload | api.Job): string => orNone((o.spec?.template?.spec?.containers ?? []).map((c) => c.name).join(','));
export const containerImages = (o: Workload | api.Job): string => orNone((o.spec?.template?.spec?.containers ?? []).map((c) => c.image).join(','));
