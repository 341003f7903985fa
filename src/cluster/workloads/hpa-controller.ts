// The horizontal pod autoscaler, as kube-controller-manager's (pkg/controller/podautoscaler): every
// sync period (15 s, kube's --horizontal-pod-autoscaler-sync-period) each HorizontalPodAutoscaler
// reads its target's scale subresource, the pods its selector names and their usage from
// metrics.k8s.io (the metrics server, through the API server's aggregator), computes the replicas
// each Resource or ContainerResource metric asks for (hpa.ts), keeps the largest, stabilizes it and
// holds it within the policies' rates and the bounds, writes the new count to the scale subresource
// and the status kubectl shows (current metrics, replicas, the AbleToScale, ScalingActive and
// ScalingLimited conditions), with kube's Events. Pods, Object and External metrics need a custom
// or external metrics API, which bosun does not serve: they are reported as not found.
import type * as api from '../../api/index.js';
import { Controller, KubeApiError, type Condition, type ResourceRef, resourcePath, setCondition, type SyncResult } from '../../kube/index.js';
import { matchesLabels, parseLabelSelector } from '../../common/label-selectors.js';
import { sameJson } from '../../kube/canonical.js';
import { formatMilli, quantityMilli } from '../../kube/quantity.js';
import { rfc3339 } from '../../common/time.js';
import type { WorkloadContext } from './context.js';
import { DEFAULT_TUNING, type HpaTuning, limitRate, MetricError, resourceReplicas, stabilize, type PodSample, type Recommendation, type ScaleEvent } from './hpa.js';
import { HORIZONTAL_POD_AUTOSCALERS } from './resources.js';

export interface HpaControllerOptions extends Partial<HpaTuning> {
  /** How often each autoscaler is looked at (--horizontal-pod-autoscaler-sync-period; kube: 15 s). */
  syncPeriodMs?: number;
}

interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata: api.ObjectMeta;
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

interface PodMetrics {
  metadata: { name: string };
  timestamp: string;
  window: string;
  containers: Array<{ name: string; usage: Record<string, string> }>;
}

/** What a metric is called in reasons and messages, as kube words it. */
function metricName(metric: api.MetricSpec): string {
  if (metric.type === 'Resource') return `${metric.resource!.name} resource${metric.resource!.target.type === 'Utilization' ? ' utilization (percentage of request)' : ''}`;
  if (metric.type === 'ContainerResource') return `${metric.containerResource!.name} container resource${metric.containerResource!.target.type === 'Utilization' ? ' utilization (percentage of request)' : ''}`;
  if (metric.type === 'Pods') return `pods metric ${metric.pods?.metric.name}`;
  if (metric.type === 'Object') return `${metric.object?.describedObject.kind} metric ${metric.object?.metric.name}`;
  return `external metric ${metric.external?.metric.name}`;
}

const seconds = (text: string) => {
  const m = /^([0-9.]+)(ms|s|m)?$/.exec(text ?? '');
  if (!m) return 0;
  return Number(m[1]) * (m[2] === 'ms' ? 0.001 : m[2] === 'm' ? 60 : 1);
};

export function hpaController(ctx: WorkloadContext, options: HpaControllerOptions = {}): Controller {
  const { horizontalPodAutoscalers: hpas, pods } = ctx.informers;
  const { syncPeriodMs = 15_000, ...settings } = options;
  const tuning: HpaTuning = { ...DEFAULT_TUNING, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) };
  const recommendations = new Map<string, Recommendation[]>();
  const scaleEvents = new Map<string, ScaleEvent[]>();

  const controller = new Controller({ name: 'horizontal-pod-autoscaler', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(hpas);

  async function sync(key: string): Promise<SyncResult | void> {
    const hpa = hpas.getByKey(key);
    if (!hpa) {
      recommendations.delete(key);
      scaleEvents.delete(key);
      return;
    }
    const now = ctx.clock.now();
    const namespace = hpa.metadata.namespace!;
    const spec = hpa.spec!;
    let conditions = (hpa.status?.conditions ?? []) as Condition[];
    const set = (type: string, status: 'True' | 'False', reason: string, message: string) => {
      conditions = setCondition(conditions, { type, status, reason, message } as Condition, new Date(now));
    };
    const writeStatus = async (status: Partial<NonNullable<api.HorizontalPodAutoscaler['status']>>) => {
      const next = { ...hpa.status, ...status, conditions, observedGeneration: hpa.metadata.generation } as NonNullable<api.HorizontalPodAutoscaler['status']>;
      for (const [k, v] of Object.entries(next)) if (v === undefined) delete (next as Record<string, unknown>)[k];
      if (!sameJson(next, hpa.status ?? {})) await ctx.client.update(HORIZONTAL_POD_AUTOSCALERS, { ...hpa, status: next }, 'status');
    };
    const again = { requeueAfterMs: syncPeriodMs };

    // The target's scale.
    const ref = spec.scaleTargetRef;
    let resource: ResourceRef;
    let scale: Scale;
    try {
      resource = await ctx.client.resourceFor(ref.apiVersion ?? '', ref.kind);
      scale = await ctx.client.request<Scale>('GET', resourcePath(resource, namespace, ref.name, 'scale'));
    } catch (e) {
      const message = `the HPA controller was unable to get the target's current scale: ${(e as Error).message}`;
      void ctx.events.event(hpa, 'Warning', 'FailedGetScale', (e as Error).message);
      set('AbleToScale', 'False', 'FailedGetScale', message);
      await writeStatus({ currentReplicas: hpa.status?.currentReplicas ?? 0, desiredReplicas: hpa.status?.desiredReplicas ?? 0 });
      return again;
    }
    const current = scale.spec?.replicas ?? 0;
    // A new autoscaler (or a restarted controller) starts its scale-down window from the replicas
    // there are now, as kube's maybeInitScaleDownStabilizationWindow does: no scale-down before it passes.
    if (!recommendations.has(key)) recommendations.set(key, [{ atMs: now, replicas: current }]);
    const min = spec.minReplicas ?? 1;
    const max = spec.maxReplicas;
    let desired = current;
    let reason = '';
    let currentMetrics: api.MetricStatus[] | undefined = hpa.status?.currentMetrics;

    if (current === 0 && min !== 0) {
      set('ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (current > max) {
      [desired, reason] = [max, 'Current number of replicas above Spec.MaxReplicas'];
      set('ScalingLimited', 'True', 'TooManyReplicas', 'the desired replica count is more than the maximum replica count');
    } else if (current < min) {
      [desired, reason] = [min, 'Current number of replicas below Spec.MinReplicas'];
      set('ScalingLimited', 'True', 'TooFewReplicas', 'the desired replica count is less than the minimum replica count');
    } else {
      const computed = await replicasForMetrics(hpa, scale, current, now);
      currentMetrics = computed.statuses;
      if (computed.error) {
        void ctx.events.event(hpa, 'Warning', computed.error.reason, computed.error.eventMessage);
        set('ScalingActive', 'False', computed.error.reason, `the HPA was unable to compute the replica count: ${computed.error.message}`);
      }
      if (computed.replicas === undefined) {
        // No metric gave a count: nothing is scaled.
        await writeStatus({ currentReplicas: current, desiredReplicas: hpa.status?.desiredReplicas ?? 0, currentMetrics });
        return again;
      }
      if (!computed.error) set('ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${computed.metric}`);
      const history = recommendations.get(key) ?? [];
      recommendations.set(key, history);
      const stabilized = stabilize(hpa, current, computed.replicas, history, now, tuning);
      const events = (scaleEvents.get(key) ?? []).filter((e) => e.atMs > now - 30 * 60_000);
      scaleEvents.set(key, events);
      const limited = limitRate(hpa, current, stabilized, events, now);
      set('ScalingLimited', limited.limited.status, limited.limited.reason, limited.limited.message);
      desired = limited.replicas;
      reason = desired > current ? `${computed.metric} above target` : 'All metrics below target';
    }

    let lastScaleTime = hpa.status?.lastScaleTime;
    if (desired !== current) {
      try {
        await ctx.client.request('PUT', resourcePath(resource, namespace, ref.name, 'scale'), { body: { ...scale, spec: { ...scale.spec, replicas: desired } } });
      } catch (e) {
        void ctx.events.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${(e as Error).message}`);
        set('AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${(e as Error).message}`);
        await writeStatus({ currentReplicas: current, desiredReplicas: desired, currentMetrics });
        return again;
      }
      void ctx.events.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      scaleEvents.get(key)?.push({ atMs: now, change: desired - current });
      set('AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`);
      lastScaleTime = rfc3339(new Date(now));
    } else {
      set('AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size');
    }
    await writeStatus({ currentReplicas: current, desiredReplicas: desired, currentMetrics, lastScaleTime });
    return again;
  }

  /** The largest count the metrics ask for, each metric's current value, and the first failure. */
  async function replicasForMetrics(hpa: api.HorizontalPodAutoscaler, scale: Scale, current: number, now: number) {
    const namespace = hpa.metadata.namespace!;
    const statuses: api.MetricStatus[] = [];
    let replicas: number | undefined;
    let metric = '';
    let error: { reason: string; message: string; eventMessage: string } | undefined;
    let invalid = 0;
    const metrics = hpa.spec?.metrics ?? [];
    let selected: api.Pod[] | undefined;
    let samples: Map<string, PodSample> | undefined;
    for (const m of metrics) {
      const source = m.type === 'Resource' ? m.resource : m.type === 'ContainerResource' ? m.containerResource : undefined;
      try {
        if (!source) throw new MetricError(`unable to get ${metricName(m)}: the server could not find the metric (bosun serves no custom or external metrics API)`, m.type === 'Pods' ? 'FailedGetPodsMetric' : m.type === 'Object' ? 'FailedGetObjectMetric' : 'FailedGetExternalMetric');
        if (!scale.status?.selector) throw new MetricError('selector is required');
        const selector = parseLabelSelector(scale.status.selector);
        selected ??= pods.list().filter((p) => p.metadata.namespace === namespace && matchesLabels(selector, p.metadata.labels));
        samples ??= await podSamples(namespace, scale.status.selector, source.name);
        const container = m.type === 'ContainerResource' ? m.containerResource!.container : undefined;
        const target = source.target.type === 'Utilization' ? { utilization: source.target.averageUtilization! } : { averageMilli: quantityMilli(source.target.averageValue!) };
        const r = resourceReplicas(current, target, selected, samples, source.name, now, container, tuning);
        const value = { averageValue: formatMilli(r.averageMilli, source.name === 'memory'), ...(r.utilization !== undefined ? { averageUtilization: r.utilization } : {}) };
        statuses.push(m.type === 'Resource' ? { type: 'Resource', resource: { name: source.name, current: value } } : { type: 'ContainerResource', containerResource: { name: source.name, container: container!, current: value } });
        if (replicas === undefined || r.replicas > replicas) {
          replicas = r.replicas;
          metric = metricName(m);
        }
      } catch (e) {
        if (!(e instanceof MetricError) && !(e instanceof KubeApiError)) throw e;
        invalid++;
        statuses.push({ type: m.type } as api.MetricStatus);
        const what = source ? `failed to get ${source.name} utilization: ${e instanceof KubeApiError ? `unable to get metrics for resource ${source.name}: unable to fetch metrics from resource metrics API: ${e.message}` : e.message}` : e.message;
        error ??= { reason: e instanceof MetricError ? e.event : 'FailedGetResourceMetric', message: what, eventMessage: what };
      }
    }
    if (error && invalid < metrics.length) error.eventMessage = `invalid metrics (${invalid} invalid out of ${metrics.length}), first error is: ${error.message}`;
    // With a metric missing, never scale down on the others alone.
    if (invalid > 0 && replicas !== undefined && replicas < current) replicas = undefined;
    return { replicas, metric, statuses, error };
  }

  /** The pods' samples of `resource` from metrics.k8s.io, by pod name. */
  async function podSamples(namespace: string, selector: string, resource: string): Promise<Map<string, PodSample>> {
    const list = await ctx.client.request<{ items?: PodMetrics[] }>('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/pods`, { query: { labelSelector: selector } });
    const samples = new Map<string, PodSample>();
    for (const item of list.items ?? []) {
      const containers: Record<string, bigint> = {};
      for (const c of item.containers ?? []) if (c.usage?.[resource] !== undefined) containers[c.name] = quantityMilli(c.usage[resource]);
      if (Object.keys(containers).length === 0) continue;
      samples.set(item.metadata.name, { containers, timestampMs: Date.parse(item.timestamp), windowMs: seconds(item.window) * 1000 });
    }
    return samples;
  }

  return controller;
}


