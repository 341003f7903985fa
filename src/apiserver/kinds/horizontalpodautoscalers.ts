// HorizontalPodAutoscalers, stored at autoscaling/v2 and served at v2 and v1 (kubectl autoscale
// before 1.33 writes v1; `kubectl get hpa` reads v2), as kube-apiserver serves them: v2's defaults
// (one replica at least; a CPU target of 80% when no metric is named; a behavior's missing rules
// filled with kube's scale-up and scale-down rules), kube's validation of the scale target, the
// replica bounds, the metrics and the behavior, and kubectl's columns (REFERENCE, TARGETS as
// `cpu: 45%/50%`, MINPODS, MAXPODS, REPLICAS). v1 holds one CPU utilization target; the conversion
// keeps what v1 cannot say in annotations, as kube's does: the other metrics and the current
// metrics in v1's own (v2beta1-like) shapes, the conditions, and the behavior
// (autoscaling.alpha.kubernetes.io/*).
import type * as api from '../../api/index.js';
import { DEFAULT_CPU_UTILIZATION, defaultScaleDown, defaultScaleUp } from '../../kube/autoscaling.js';
import { quantityMilli, QuantityError } from '../../kube/quantity.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { ALL, builtinType, specChanged, type KindStrategy } from './strategy.js';

export const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';

const cpuUtilization = (m: api.MetricSpec) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target?.type === 'Utilization';

type Spec = Partial<NonNullable<api.HorizontalPodAutoscaler['spec']>>;
type V1 = api.Unstructured & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

function withoutAnnotations(metadata: api.ObjectMeta, names: string[]): void {
  if (!metadata.annotations) return;
  for (const name of names) delete metadata.annotations[name];
  if (Object.keys(metadata.annotations).length === 0) delete metadata.annotations;
}

function readAnnotation<T>(metadata: api.ObjectMeta, name: string): T | undefined {
  const text = metadata.annotations?.[name];
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

type Json = Record<string, unknown>;
const defined = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

/** Which half of a metric a v1 annotation holds: the spec's target, or the status's current value. */
type Side = 'target' | 'current';
type Value = { value?: string; averageValue?: string; averageUtilization?: number };

/**
 * A v2 target or current value as v1's annotations spell it (autoscaling/v2beta1's names):
 * <side>AverageUtilization, <side>AverageValue, <side>Value — an Object metric's average value is
 * plain `averageValue` on both sides.
 */
function valueToV1(side: Side, v: Value | undefined, object = false): Json {
  return { [`${side}AverageUtilization`]: v?.averageUtilization, [object ? 'averageValue' : `${side}AverageValue`]: v?.averageValue, [`${side}Value`]: v?.value };
}

function valueFromV1(side: Side, j: Json, object = false): Value {
  return defined({ averageUtilization: j[`${side}AverageUtilization`], averageValue: j[object ? 'averageValue' : `${side}AverageValue`], value: j[`${side}Value`] }) as Value;
}

/** A v2 metric (spec or status) in the shape autoscaling/v1's annotations hold it (kube's v1 alpha MetricSpec/MetricStatus). */
function metricToV1(m: api.MetricSpec | api.MetricStatus, side: Side): Json {
  const of = (source: object) => (source as Record<Side, Value | undefined>)[side];
  const r = m.resource ?? m.containerResource;
  if (r) {
    const value = valueToV1(side, of(r));
    // A current resource metric always says its raw value.
    if (side === 'current') value.currentAverageValue ??= '0';
    return { type: m.type, [m.type === 'Resource' ? 'resource' : 'containerResource']: defined({ name: r.name, ...value, container: m.containerResource?.container }) };
  }
  if (m.pods) return { type: m.type, pods: defined({ metricName: m.pods.metric.name, selector: m.pods.metric.selector, ...valueToV1(side, of(m.pods)) }) };
  if (m.object) return { type: m.type, object: defined({ target: m.object.describedObject, metricName: m.object.metric.name, selector: m.object.metric.selector, ...valueToV1(side, of(m.object), true) }) };
  if (m.external) return { type: m.type, external: defined({ metricName: m.external.metric.name, metricSelector: m.external.metric.selector, ...valueToV1(side, of(m.external)) }) };
  return { type: m.type };
}

/** A spec's target from its v1 value, typed as kube's Convert_v1_*MetricSource_To_autoscaling_* types it per source. */
function targetFromV1(source: 'resource' | 'pods' | 'object' | 'external', v: Value): Json {
  switch (source) {
    case 'resource':
      return v.averageUtilization === undefined ? { type: 'AverageValue', averageValue: v.averageValue } : { type: 'Utilization', averageUtilization: v.averageUtilization };
    case 'pods':
      return { type: 'AverageValue', averageValue: v.averageValue };
    case 'object':
      return defined({ type: v.averageValue === undefined ? 'Value' : 'AverageValue', value: v.value, averageValue: v.averageValue });
    case 'external':
      return defined({ type: v.value === undefined ? 'AverageValue' : 'Value', value: v.value, averageValue: v.averageValue });
  }
}

/** Back from a v1 annotation's shape: a spec metric (side 'target') or a status metric (side 'current'). */
function metricFromV1(m: Json, side: Side): Json {
  const type = m.type as string;
  const half = (source: 'resource' | 'pods' | 'object' | 'external', j: Json) => {
    const value = valueFromV1(side, j, source === 'object');
    return side === 'target' ? { target: targetFromV1(source, value) } : { current: value };
  };
  const resource = (m.resource ?? m.containerResource) as Json | undefined;
  if (resource) {
    return type === 'ContainerResource'
      ? { type, containerResource: { name: resource.name, container: resource.container, ...half('resource', resource) } }
      : { type, resource: { name: resource.name, ...half('resource', resource) } };
  }
  const pods = m.pods as Json | undefined;
  if (pods) return { type, pods: { metric: defined({ name: pods.metricName, selector: pods.selector }), ...half('pods', pods) } };
  const object = m.object as Json | undefined;
  if (object) return { type, object: { describedObject: object.target, metric: defined({ name: object.metricName, selector: object.selector }), ...half('object', object) } };
  const external = m.external as Json | undefined;
  if (external) return { type, external: { metric: defined({ name: external.metricName, selector: external.metricSelector }), ...half('external', external) } };
  return { type };
}

/**
 * v2 (stored) → v1, as kube's conversion: the CPU utilization target in its field; the other
 * metrics, every current metric (the CPU one too, for its raw value) and the conditions in
 * annotations, in v1's own shapes; the behavior as v2 JSON.
 */
export function toV1(o: api.HorizontalPodAutoscaler): api.Unstructured {
  const spec: Spec = o.spec ?? {};
  const status: Partial<NonNullable<api.HorizontalPodAutoscaler['status']>> = o.status ?? {};
  const metadata: api.ObjectMeta = { ...o.metadata, annotations: { ...(o.metadata.annotations ?? {}) } };
  const metrics = spec.metrics ?? [];
  const cpu = metrics.find(cpuUtilization);
  const others = metrics.filter((m) => m !== cpu);
  if (others.length) metadata.annotations![METRICS_ANNOTATION] = JSON.stringify(others.map((m) => metricToV1(m, 'target')));
  if (spec.behavior) metadata.annotations![BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior);
  const current = status.currentMetrics ?? [];
  const currentCpu = current.find((m) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.current?.averageUtilization !== undefined);
  if (current.length) metadata.annotations![CURRENT_METRICS_ANNOTATION] = JSON.stringify(current.map((m) => metricToV1(m, 'current')));
  if (status.conditions?.length) metadata.annotations![CONDITIONS_ANNOTATION] = JSON.stringify(status.conditions);
  if (Object.keys(metadata.annotations!).length === 0) delete metadata.annotations;
  const v1Spec: Record<string, unknown> = { scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas };
  if (cpu) v1Spec.targetCPUUtilizationPercentage = cpu.resource!.target.averageUtilization;
  const out: V1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata, spec: v1Spec };
  if (o.status) {
    out.status = {
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
      currentCPUUtilizationPercentage: currentCpu?.resource?.current.averageUtilization,
    };
    for (const [k, v] of Object.entries(out.status)) if (v === undefined) delete out.status[k];
  }
  return out;
}

/**
 * v1 → v2 (stored): the annotations' metrics first and the CPU target last (as kube orders them),
 * the current metrics from their annotation when there is one (it has more than
 * currentCPUUtilizationPercentage), the conditions and behavior back in place.
 */
export function fromV1(o: api.Unstructured): api.HorizontalPodAutoscaler {
  const v1 = o as V1;
  const spec = (v1.spec ?? {}) as { scaleTargetRef?: unknown; minReplicas?: number; maxReplicas?: number; targetCPUUtilizationPercentage?: number };
  const status = v1.status as { observedGeneration?: number; lastScaleTime?: string; currentReplicas?: number; desiredReplicas?: number; currentCPUUtilizationPercentage?: number } | undefined;
  // The annotations are copied: taking the conversion's own out must not change the object converted.
  const metadata: api.ObjectMeta = { ...o.metadata, ...(o.metadata.annotations ? { annotations: { ...o.metadata.annotations } } : {}) };
  const metrics: api.MetricSpec[] = (readAnnotation<Json[]>(metadata, METRICS_ANNOTATION) ?? []).map((m) => metricFromV1(m, 'target') as unknown as api.MetricSpec);
  if (spec.targetCPUUtilizationPercentage !== undefined && spec.targetCPUUtilizationPercentage !== null) {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  const behavior = readAnnotation<NonNullable<Spec['behavior']>>(metadata, BEHAVIOR_ANNOTATION);
  const conditions = readAnnotation<NonNullable<api.HorizontalPodAutoscaler['status']>['conditions']>(metadata, CONDITIONS_ANNOTATION);
  const annotatedCurrent = readAnnotation<Json[]>(metadata, CURRENT_METRICS_ANNOTATION)?.map((m) => metricFromV1(m, 'current') as unknown as api.MetricStatus);
  withoutAnnotations(metadata, [METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION, CURRENT_METRICS_ANNOTATION]);
  const v2Spec: Spec = { scaleTargetRef: spec.scaleTargetRef as Spec['scaleTargetRef'], minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas as number };
  if (metrics.length) v2Spec.metrics = metrics;
  if (behavior) v2Spec.behavior = behavior;
  if (v2Spec.minReplicas === undefined) delete v2Spec.minReplicas;
  const out: api.HorizontalPodAutoscaler = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata, spec: v2Spec as NonNullable<api.HorizontalPodAutoscaler['spec']> };
  if (status) {
    const current = annotatedCurrent
      ?? (status.currentCPUUtilizationPercentage === undefined ? [] : [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } } as api.MetricStatus]);
    out.status = { desiredReplicas: status.desiredReplicas ?? 0, currentReplicas: status.currentReplicas ?? 0 } as NonNullable<api.HorizontalPodAutoscaler['status']>;
    if (status.observedGeneration !== undefined) out.status.observedGeneration = status.observedGeneration;
    if (status.lastScaleTime !== undefined) out.status.lastScaleTime = status.lastScaleTime;
    if (current.length) out.status.currentMetrics = current;
    if (conditions?.length) out.status.conditions = conditions;
  }
  return out;
}

function rulesWithDefaults(rules: api.HPAScalingRules | undefined, defaults: api.HPAScalingRules): api.HPAScalingRules {
  if (!rules) return defaults;
  return {
    ...rules,
    stabilizationWindowSeconds: rules.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds,
    selectPolicy: rules.selectPolicy ?? 'Max',
    policies: rules.policies?.length ? rules.policies : defaults.policies,
  };
}

const positive = (value: unknown, field: string, what = 'must be greater than 0'): FieldProblem[] =>
  Number.isInteger(value) && (value as number) > 0 ? [] : [{ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value ?? null)}: ${what}` }];

function quantityProblems(value: unknown, field: string): FieldProblem[] {
  if (value === undefined) return [{ type: 'FieldValueRequired', field, message: 'Required value: must specify a positive target averageValue' }];
  try {
    if (quantityMilli(String(value)) <= 0n) return [{ type: 'FieldValueInvalid', field, message: `Invalid value: "${String(value)}": must be positive` }];
  } catch (e) {
    if (!(e instanceof QuantityError)) throw e;
    return [{ type: 'FieldValueInvalid', field, message: `Invalid value: "${String(value)}": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'` }];
  }
  return [];
}

const METRIC_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];

function metricProblems(metric: api.MetricSpec, at: string): FieldProblem[] {
  if (!METRIC_TYPES.includes(metric?.type)) {
    return [{ type: 'FieldValueNotSupported', field: `${at}.type`, message: `Unsupported value: ${JSON.stringify(metric?.type ?? '')}: supported values: "${METRIC_TYPES.join('", "')}"` }];
  }
  if (metric.type !== 'Resource' && metric.type !== 'ContainerResource') return [];
  const field = metric.type === 'Resource' ? 'resource' : 'containerResource';
  const source = metric.type === 'Resource' ? metric.resource : metric.containerResource;
  if (!source) return [{ type: 'FieldValueRequired', field: `${at}.${field}`, message: `Required value: must populate information for the given metric source` }];
  const problems: FieldProblem[] = [];
  if (!source.name) problems.push({ type: 'FieldValueRequired', field: `${at}.${field}.name`, message: 'Required value: must specify a resource name' });
  if (metric.type === 'ContainerResource' && !metric.containerResource?.container) problems.push({ type: 'FieldValueRequired', field: `${at}.${field}.container`, message: 'Required value: must specify a container' });
  const target = source.target;
  if (target?.type === 'Utilization') problems.push(...positive(target.averageUtilization, `${at}.${field}.target.averageUtilization`));
  else if (target?.type === 'AverageValue') problems.push(...quantityProblems(target.averageValue, `${at}.${field}.target.averageValue`));
  else problems.push({ type: 'FieldValueNotSupported', field: `${at}.${field}.target.type`, message: `Unsupported value: ${JSON.stringify(target?.type ?? '')}: supported values: "AverageValue", "Utilization"` });
  return problems;
}

function rulesProblems(rules: api.HPAScalingRules | undefined, at: string): FieldProblem[] {
  if (!rules) return [];
  const problems: FieldProblem[] = [];
  const window = rules.stabilizationWindowSeconds;
  if (window !== undefined && (!Number.isInteger(window) || window < 0 || window > 3600)) {
    problems.push({ type: 'FieldValueInvalid', field: `${at}.stabilizationWindowSeconds`, message: `Invalid value: ${window}: must be less than or equal to 3600 and greater than or equal to 0` });
  }
  if (rules.selectPolicy !== undefined && !['Max', 'Min', 'Disabled'].includes(rules.selectPolicy)) {
    problems.push({ type: 'FieldValueNotSupported', field: `${at}.selectPolicy`, message: `Unsupported value: ${JSON.stringify(rules.selectPolicy)}: supported values: "Disabled", "Max", "Min"` });
  }
  (rules.policies ?? []).forEach((p, i) => {
    if (!['Pods', 'Percent'].includes(p.type)) problems.push({ type: 'FieldValueNotSupported', field: `${at}.policies[${i}].type`, message: `Unsupported value: ${JSON.stringify(p.type)}: supported values: "Percent", "Pods"` });
    problems.push(...positive(p.value, `${at}.policies[${i}].value`));
    if (!Number.isInteger(p.periodSeconds) || p.periodSeconds <= 0 || p.periodSeconds > 1800) {
      problems.push({ type: 'FieldValueInvalid', field: `${at}.policies[${i}].periodSeconds`, message: `Invalid value: ${p.periodSeconds}: must be greater than zero and less than or equal to 1800` });
    }
  });
  return problems;
}

/** One TARGETS entry, as kubectl 1.30+ prints it: `cpu: 45%/50%`, `<unknown>` for a current value not measured yet. */
function targetCell(metric: api.MetricSpec, current: api.MetricStatus | undefined): string {
  const source = metric.type === 'Resource' ? metric.resource : metric.type === 'ContainerResource' ? metric.containerResource : undefined;
  if (source) {
    const now = (metric.type === 'Resource' ? current?.resource : current?.containerResource)?.current;
    const name = metric.type === 'ContainerResource' ? `${source.name} of container ${metric.containerResource!.container}` : source.name;
    if (source.target.type === 'Utilization') return `${name}: ${now?.averageUtilization === undefined ? '<unknown>' : `${now.averageUtilization}%`}/${source.target.averageUtilization}%`;
    return `${name}: ${now?.averageValue ?? '<unknown>'}/${source.target.averageValue}`;
  }
  const value = (t?: { averageValue?: string; value?: string }) => t?.averageValue ?? t?.value;
  if (metric.type === 'Pods') return `${metric.pods?.metric.name}: ${value(current?.pods?.current) ?? '<unknown>'}/${value(metric.pods?.target) ?? ''}`;
  if (metric.type === 'Object') return `${metric.object?.metric.name}: ${value(current?.object?.current) ?? '<unknown>'}/${value(metric.object?.target) ?? ''}`;
  return `${metric.external?.metric.name}: ${value(current?.external?.current) ?? '<unknown>'}/${value(metric.external?.target) ?? ''}`;
}

export function targetsCell(o: api.HorizontalPodAutoscaler): string {
  const metrics = o.spec?.metrics ?? [];
  if (metrics.length === 0) return '<none>';
  const current = o.status?.currentMetrics ?? [];
  const cells = metrics.map((m, i) => targetCell(m, current[i]?.type === m.type ? current[i] : undefined));
  return cells.length > 3 ? `${cells.slice(0, 3).join(', ')} + ${cells.length - 3} more...` : cells.join(', ');
}

export const horizontalpodautoscalers: KindStrategy<api.HorizontalPodAutoscaler> = {
  type: builtinType('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', { shortNames: ['hpa'], categories: ALL, status: true }),
  storageVersion: 'v2',
  conversions: { v1: { fromStored: toV1, toStored: fromV1 } },
  defaults(object) {
    const spec = (object.spec = { minReplicas: 1, ...object.spec } as NonNullable<api.HorizontalPodAutoscaler['spec']>);
    if (!spec.metrics?.length) spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
    if (spec.behavior) spec.behavior = { scaleUp: rulesWithDefaults(spec.behavior.scaleUp, defaultScaleUp()), scaleDown: rulesWithDefaults(spec.behavior.scaleDown, defaultScaleDown()) };
  },
  generation: specChanged,
  // kube's PrepareForCreate: a new autoscaler has not measured or scaled anything.
  prepareForCreate(object) {
    object.status = { desiredReplicas: 0 } as api.HorizontalPodAutoscaler['status'];
  },
  validate(o) {
    const spec: Spec = o.spec ?? {};
    const problems: FieldProblem[] = [];
    const ref = spec.scaleTargetRef;
    if (!ref?.kind) problems.push({ type: 'FieldValueRequired', field: 'spec.scaleTargetRef.kind', message: 'Required value' });
    if (!ref?.name) problems.push({ type: 'FieldValueRequired', field: 'spec.scaleTargetRef.name', message: 'Required value' });
    if (spec.minReplicas !== undefined) problems.push(...positive(spec.minReplicas, 'spec.minReplicas', 'must be greater than or equal to 1'));
    problems.push(...positive(spec.maxReplicas, 'spec.maxReplicas'));
    if (Number.isInteger(spec.maxReplicas) && Number.isInteger(spec.minReplicas) && spec.maxReplicas! < spec.minReplicas!) {
      problems.push({ type: 'FieldValueInvalid', field: 'spec.maxReplicas', message: `Invalid value: ${spec.maxReplicas}: must be greater than or equal to \`minReplicas\`` });
    }
    (spec.metrics ?? []).forEach((m, i) => problems.push(...metricProblems(m, `spec.metrics[${i}]`)));
    problems.push(...rulesProblems(spec.behavior?.scaleUp, 'spec.behavior.scaleUp'), ...rulesProblems(spec.behavior?.scaleDown, 'spec.behavior.scaleDown'));
    return problems;
  },
  printer: {
    columns: [NAME_COLUMN, column('Reference'), column('Targets'), column('MinPods', 'string'), column('MaxPods', 'integer'), column('Replicas', 'integer'), AGE_COLUMN],
    cells: (stored, now) => {
      // A Table asked for at v1 gets v1 objects; the columns read the stored form.
      const o = stored.apiVersion === 'autoscaling/v1' ? fromV1(stored as api.Unstructured) : stored;
      const ref = o.spec?.scaleTargetRef;
      return [o.metadata.name, `${ref?.kind ?? ''}/${ref?.name ?? ''}`, targetsCell(o), o.spec?.minReplicas === undefined ? '<unset>' : String(o.spec.minReplicas), o.spec?.maxReplicas ?? 0, o.status?.currentReplicas ?? 0, ageCell(o, now)];
    },
  },
};
