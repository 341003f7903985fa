// What kube's horizontal pod autoscaler decides, as pure functions (pkg/controller/podautoscaler):
// the replica count one resource metric asks for (replica_calculator.go: the pods' usage against
// their requests, a 10% tolerance, pods without a sample counted at 0% on the way up and 100% on
// the way down, CPU samples of pods not yet ready left out), and how that recommendation is
// tempered (horizontal.go): the stabilization windows (the highest recommendation of the last
// 300 s on the way down), the scaling policies over the scale events of their periods (up by the
// larger of 4 pods or 100% per 15 s; down by 100% per 15 s), minReplicas and maxReplicas, with the
// condition each limit sets.
import type * as api from '../../api/index.js';
import { BosunError } from '../../common/errors.js';
import { quantityMilli } from '../../kube/quantity.js';
import { defaultScaleDown, defaultScaleUp } from '../../kube/autoscaling.js';

/** The controller manager's --horizontal-pod-autoscaler-* settings (kube's defaults in DEFAULT_TUNING). */
export interface HpaTuning {
  /** --horizontal-pod-autoscaler-tolerance: a usage ratio this close to 1 changes nothing. */
  tolerance: number;
  /** --horizontal-pod-autoscaler-cpu-initialization-period: how long after its start a pod's CPU samples are doubted. */
  cpuInitializationMs: number;
  /** --horizontal-pod-autoscaler-initial-readiness-delay: readiness changes this soon after start are its first. */
  initialReadinessDelayMs: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization: the scale-down window of an autoscaler without spec.behavior.scaleDown. */
  downscaleStabilizationMs: number;
}

export const DEFAULT_TUNING: HpaTuning = { tolerance: 0.1, cpuInitializationMs: 5 * 60_000, initialReadinessDelayMs: 30_000, downscaleStabilizationMs: 5 * 60_000 };

/** One pod's sample from metrics.k8s.io: usage per container in milli-units (cpu in millicores, memory in milli-bytes), when and over what window. */
export interface PodSample {
  containers: Record<string, bigint>;
  timestampMs: number;
  windowMs: number;
}

/** What a resource metric came to: the replicas it asks for, and the current value to report. */
export interface MetricRecommendation {
  replicas: number;
  /** Average utilization of the requests, in percent (Utilization targets). */
  utilization?: number;
  /** Average usage per pod, in milli-units. */
  averageMilli: bigint;
}

/** Why a metric gave no replica count; `event` is the reason kube's Event and condition give it. */
export class MetricError extends BosunError {
  constructor(
    message: string,
    readonly event: 'FailedGetResourceMetric' | 'FailedGetPodsMetric' | 'FailedGetObjectMetric' | 'FailedGetExternalMetric' = 'FailedGetResourceMetric',
  ) {
    super('MetricUnavailable', message);
  }
}

const condition = (pod: api.Pod) => (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');

/** The pods a sample counts for, as kube's groupPods sorts them. */
function groupPods(pods: api.Pod[], samples: Map<string, PodSample>, resource: string, now: number, tuning: HpaTuning) {
  const ready: string[] = [];
  const unready: string[] = [];
  const missing: string[] = [];
  for (const pod of pods) {
    const name = pod.metadata.name;
    if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed') continue;
    if (pod.status?.phase === 'Pending') {
      unready.push(name);
      continue;
    }
    const sample = samples.get(name);
    if (!sample) {
      missing.push(name);
      continue;
    }
    if (resource === 'cpu') {
      const c = condition(pod);
      const started = pod.status?.startTime ? Date.parse(pod.status.startTime) : undefined;
      let notReady: boolean;
      if (!c || started === undefined) notReady = true;
      else {
        const changed = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : started;
        notReady = started + tuning.cpuInitializationMs > now
          ? c.status === 'False' || sample.timestampMs < changed + sample.windowMs
          : c.status === 'False' && started + tuning.initialReadinessDelayMs > changed;
      }
      if (notReady) {
        unready.push(name);
        continue;
      }
    }
    ready.push(name);
  }
  return { ready, unready, missing };
}

/** Each pod's request for `resource` (of `container` alone when named); an error naming a container without one. */
function podRequests(pods: api.Pod[], resource: string, container?: string): Map<string, bigint> {
  const requests = new Map<string, bigint>();
  for (const pod of pods) {
    let sum = 0n;
    for (const c of pod.spec?.containers ?? []) {
      if (container && c.name !== container) continue;
      const request = c.resources?.requests?.[resource];
      if (request === undefined) throw new MetricError(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata.name}`);
      sum += quantityMilli(request);
    }
    requests.set(pod.metadata.name, sum);
  }
  return requests;
}


/**
 * The replicas a Resource or ContainerResource metric asks for (kube's GetResourceReplicas and
 * GetRawResourceReplicas): `target` is a utilization in percent or an average value in milli-units.
 */
export function resourceReplicas(
  current: number,
  target: { utilization: number } | { averageMilli: bigint },
  pods: api.Pod[],
  samples: Map<string, PodSample>,
  resource: string,
  now: number,
  container?: string,
  tuning: HpaTuning = DEFAULT_TUNING,
): MetricRecommendation {
  if (pods.length === 0) throw new MetricError('no pods returned by selector while calculating replica count');
  const withinTolerance = (ratio: number) => Math.abs(1 - ratio) <= tuning.tolerance;
  const { ready, unready, missing } = groupPods(pods, samples, resource, now, tuning);
  const usage = new Map<string, bigint>();
  for (const name of ready) {
    const sample = samples.get(name)!;
    let sum = 0n;
    for (const [c, milli] of Object.entries(sample.containers)) if (!container || c === container) sum += milli;
    usage.set(name, sum);
  }
  if (usage.size === 0) throw new MetricError('did not receive metrics for targeted pods (pods might be unready)');
  const requests = 'utilization' in target ? podRequests(pods, resource, container) : new Map<string, bigint>();
  const ratioOf = (values: Map<string, bigint>) => {
    let total = 0n;
    let requested = 0n;
    for (const [name, value] of values) {
      total += value;
      requested += requests.get(name) ?? 0n;
    }
    const average = total / BigInt(values.size);
    if ('utilization' in target) {
      if (requested === 0n) throw new MetricError(`missing request for ${resource}`);
      const utilization = Number((total * 100n) / requested);
      return { ratio: utilization / target.utilization, utilization, average };
    }
    return { ratio: Number(average) / Number(target.averageMilli), utilization: undefined, average };
  };
  const first = ratioOf(usage);
  const report = (replicas: number): MetricRecommendation => ({ replicas, utilization: first.utilization, averageMilli: first.average });
  const scaleUpWithUnready = unready.length > 0 && first.ratio > 1;
  if (!scaleUpWithUnready && missing.length === 0) {
    if (withinTolerance(first.ratio)) return report(current);
    return report(Math.ceil(first.ratio * ready.length));
  }
  // Pods without a sample: none of the target on the way up, all of it on the way down.
  const filled = new Map(usage);
  for (const name of missing) {
    if (first.ratio < 1) filled.set(name, 'utilization' in target ? requests.get(name) ?? 0n : target.averageMilli);
    else filled.set(name, 0n);
  }
  if (scaleUpWithUnready) for (const name of unready) filled.set(name, 0n);
  const second = ratioOf(filled);
  if (withinTolerance(second.ratio) || (first.ratio < 1 && second.ratio > 1) || (first.ratio > 1 && second.ratio < 1)) return report(current);
  const replicas = Math.ceil(second.ratio * filled.size);
  if ((second.ratio < 1 && replicas > current) || (second.ratio > 1 && replicas < current)) return report(current);
  return report(replicas);
}

/** A past recommendation, and a past change of the target's replicas. */
export interface Recommendation {
  atMs: number;
  replicas: number;
}
export interface ScaleEvent {
  atMs: number;
  change: number;
}

export interface Limited {
  replicas: number;
  /** The ScalingLimited condition: its status, reason and message. */
  limited: { status: 'True' | 'False'; reason: string; message: string };
}

function rules(hpa: api.HorizontalPodAutoscaler) {
  const behavior = hpa.spec?.behavior;
  return { up: behavior?.scaleUp ?? defaultScaleUp(), down: behavior?.scaleDown ?? defaultScaleDown() };
}

/** The stabilized recommendation (kube's stabilizeRecommendationWithBehaviors); `history` holds this autoscaler's recommendations, the new one added. */
export function stabilize(hpa: api.HorizontalPodAutoscaler, current: number, desired: number, history: Recommendation[], now: number, tuning: HpaTuning = DEFAULT_TUNING): number {
  const { up, down } = rules(hpa);
  const upCutoff = now - (up.stabilizationWindowSeconds ?? 0) * 1000;
  // Without a scaleDown rule of its own, the controller manager's window.
  const downCutoff = now - (hpa.spec?.behavior?.scaleDown ? (down.stabilizationWindowSeconds ?? 300) * 1000 : tuning.downscaleStabilizationMs);
  let upRecommendation = desired;
  let downRecommendation = desired;
  for (const r of history) {
    if (r.atMs > upCutoff) upRecommendation = Math.min(upRecommendation, r.replicas);
    if (r.atMs > downCutoff) downRecommendation = Math.max(downRecommendation, r.replicas);
  }
  let recommendation = current;
  if (recommendation < upRecommendation) recommendation = upRecommendation;
  if (recommendation > downRecommendation) recommendation = downRecommendation;
  // Keep what either window may still need, and the new one.
  const oldest = Math.min(upCutoff, downCutoff);
  const kept = history.filter((r) => r.atMs > oldest);
  history.length = 0;
  history.push(...kept, { atMs: now, replicas: desired });
  return recommendation;
}

/** The replicas the policies allow from `current` given the scale events of their periods (kube's calculateScale{Up,Down}LimitWithScalingRules). */
function rateLimit(current: number, events: ScaleEvent[], rulesOf: api.HPAScalingRules, up: boolean, now: number): number {
  if (rulesOf.selectPolicy === 'Disabled') return current;
  const pickMost = (rulesOf.selectPolicy ?? 'Max') === 'Max';
  let result: number | undefined;
  for (const policy of rulesOf.policies ?? []) {
    const since = now - policy.periodSeconds * 1000;
    const added = events.filter((e) => e.atMs > since && e.change > 0).reduce((sum, e) => sum + e.change, 0);
    const removed = events.filter((e) => e.atMs > since && e.change < 0).reduce((sum, e) => sum - e.change, 0);
    const start = current - added + removed;
    let limit: number;
    if (up) limit = policy.type === 'Pods' ? start + policy.value : Math.ceil(start * (1 + policy.value / 100));
    else limit = policy.type === 'Pods' ? start - policy.value : Math.floor(start * (1 - policy.value / 100));
    // Up: Max picks the highest limit. Down: Max picks the one allowing the biggest change, the lowest.
    if (result === undefined) result = limit;
    else if (up) result = pickMost ? Math.max(result, limit) : Math.min(result, limit);
    else result = pickMost ? Math.min(result, limit) : Math.max(result, limit);
  }
  return result ?? current;
}

/** The stabilized recommendation within the policies' rates and the bounds (kube's convertDesiredReplicasWithBehaviorRate). */
export function limitRate(hpa: api.HorizontalPodAutoscaler, current: number, desired: number, events: ScaleEvent[], now: number): Limited {
  const min = hpa.spec?.minReplicas ?? 1;
  const max = hpa.spec?.maxReplicas ?? 1;
  const { up, down } = rules(hpa);
  if (desired > current) {
    const rateLimited = rateLimit(current, events, up, true, now);
    const allowed = Math.min(rateLimited, max);
    if (desired > allowed) {
      return allowed === max && rateLimited >= max
        ? { replicas: max, limited: { status: 'True', reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' } }
        : { replicas: allowed, limited: { status: 'True', reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' } };
    }
  } else if (desired < current) {
    const rateLimited = rateLimit(current, events, down, false, now);
    const allowed = Math.max(rateLimited, min);
    if (desired < allowed) {
      return allowed === min && rateLimited <= min
        ? { replicas: min, limited: { status: 'True', reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' } }
        : { replicas: allowed, limited: { status: 'True', reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' } };
    }
  }
  if (desired > max) return { replicas: max, limited: { status: 'True', reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' } };
  if (desired < min) return { replicas: min, limited: { status: 'True', reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' } };
  return { replicas: desired, limited: { status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' } };
}
