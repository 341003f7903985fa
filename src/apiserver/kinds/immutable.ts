// What an update may not change, kind by kind, as kube-apiserver's ValidateXUpdate functions
// refuse it: a workload's selector, a Job's pod template, a StatefulSet's spec beyond the fields
// it lets change, a Pod's spec beyond images, deadlines and added tolerations, a Secret's type,
// and the data of a ConfigMap or Secret marked `immutable`. Each answers the field problems of a
// 422 Invalid; none when there is no previous object (a create).
import type * as api from '../../api/index.js';
import { jsonEqual } from '../../common/json.js';
import type { FieldProblem } from '../errors.js';

/** A value as a problem message shows it: JSON, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** kube's "field is immutable" when `field` changed from `previous` to `next`. */
export function unchanged(field: string, next: unknown, previous: unknown): FieldProblem[] {
  return jsonEqual(next, previous) ? [] : [{ type: 'FieldValueInvalid', field, message: `Invalid value: ${shown(next)}: field is immutable` }];
}

/** A workload's selector (Deployments, ReplicaSets, DaemonSets, StatefulSets and Jobs in their current versions). */
export function selectorUnchanged(object: { spec?: { selector?: unknown } }, previous: { spec?: { selector?: unknown } } | undefined): FieldProblem[] {
  return previous ? unchanged('spec.selector', object.spec?.selector, previous.spec?.selector) : [];
}

/** The spec fields of a StatefulSet an update may change (kube's ValidateStatefulSetUpdate). */
const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

export function statefulSetUpdateProblems(object: api.StatefulSet, previous: api.StatefulSet | undefined): FieldProblem[] {
  if (!previous) return [];
  const fixed = (spec: object | undefined) => Object.fromEntries(Object.entries(spec ?? {}).filter(([k]) => !STATEFULSET_MUTABLE.includes(k)));
  if (jsonEqual(fixed(object.spec), fixed(previous.spec))) return [];
  const names = STATEFULSET_MUTABLE.map((f) => `'${f}'`);
  return [{ type: 'FieldValueForbidden', field: 'spec', message: `Forbidden: updates to statefulset spec for fields other than ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are forbidden` }];
}

/** A Job's selector, pod template and completion mode. */
export function jobUpdateProblems(object: api.Job, previous: api.Job | undefined): FieldProblem[] {
  if (!previous) return [];
  return [
    ...selectorUnchanged(object, previous),
    ...unchanged('spec.template', object.spec?.template, previous.spec?.template),
    ...unchanged('spec.completionMode', object.spec?.completionMode ?? 'NonIndexed', previous.spec?.completionMode ?? 'NonIndexed'),
  ];
}

const POD_UPDATE_FORBIDDEN =
  'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** The first top-level spec field that differs, for the message. */
function firstDifference(a: Record<string, unknown>, b: Record<string, unknown>): string | undefined {
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) if (!jsonEqual(a[key], b[key])) return key;
  return undefined;
}

/**
 * A Pod's spec after an update: kube lets only container images change, activeDeadlineSeconds be
 * set or lowered, tolerations be added, terminationGracePeriodSeconds go from negative to 1 and
 * scheduling gates be removed; the node is set through the binding subresource.
 */
export function podUpdateProblems(object: api.Pod, previous: api.Pod | undefined): FieldProblem[] {
  if (!previous) return [];
  const before = (previous.spec ?? {}) as api.PodSpec & Record<string, unknown>;
  const after = { ...(object.spec ?? {}) } as api.PodSpec & Record<string, unknown>;
  const problems: FieldProblem[] = [];
  for (const field of ['containers', 'initContainers'] as const) {
    const old = before[field];
    const next = after[field];
    if (Array.isArray(old) && Array.isArray(next) && old.length === next.length) {
      after[field] = next.map((c, i) => ({ ...c, image: old[i]?.image })) as never;
    }
  }
  const deadline = after.activeDeadlineSeconds;
  const oldDeadline = before.activeDeadlineSeconds;
  if (deadline !== oldDeadline) {
    if (deadline === undefined || (oldDeadline !== undefined && deadline > oldDeadline)) {
      problems.push({ type: 'FieldValueInvalid', field: 'spec.activeDeadlineSeconds', message: `Invalid value: ${shown(deadline ?? null)}: must be less than or equal to previous value` });
    }
    after.activeDeadlineSeconds = oldDeadline;
  }
  const oldTolerations = before.tolerations ?? [];
  const tolerations = after.tolerations ?? [];
  if (oldTolerations.every((t) => tolerations.some((n) => jsonEqual(n, t)))) after.tolerations = before.tolerations;
  const grace = after.terminationGracePeriodSeconds;
  if (grace === 1 && (before.terminationGracePeriodSeconds ?? 0) < 0) after.terminationGracePeriodSeconds = before.terminationGracePeriodSeconds;
  const gates = (after.schedulingGates ?? []) as unknown[];
  const oldGates = (before.schedulingGates ?? []) as unknown[];
  if (gates.every((g) => oldGates.some((o) => jsonEqual(o, g)))) after.schedulingGates = before.schedulingGates;
  const changed = firstDifference(after, before);
  if (changed !== undefined) problems.push({ type: 'FieldValueForbidden', field: 'spec', message: `${POD_UPDATE_FORBIDDEN} (spec.${changed} changed)` });
  return problems;
}

/** A ConfigMap or Secret marked immutable keeps its data and the mark. */
export function immutableDataProblems(object: { immutable?: boolean; data?: unknown; binaryData?: unknown }, previous: { immutable?: boolean; data?: unknown; binaryData?: unknown } | undefined): FieldProblem[] {
  if (previous?.immutable !== true) return [];
  const forbidden = (field: string): FieldProblem => ({ type: 'FieldValueForbidden', field, message: 'Forbidden: field is immutable when `immutable` is set' });
  const problems: FieldProblem[] = [];
  if (object.immutable !== true) problems.push(forbidden('immutable'));
  if (!jsonEqual(object.data ?? {}, previous.data ?? {})) problems.push(forbidden('data'));
  if (!jsonEqual(object.binaryData ?? {}, previous.binaryData ?? {})) problems.push(forbidden('binaryData'));
  return problems;
}
