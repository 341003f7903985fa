// The drain controller's decisions, pure: what a node's drain request asks (desiredDrain
// `drain-<config>` / `uncordon-<config>` against lastAppliedDrain), which of the node's pods a
// drain evicts (not DaemonSet pods, not mirror pods, not pods already finished — as `oc adm drain
// --ignore-daemonsets` and OpenShift's drain controller), and when a failing drain is tried again:
// after `retryMs` (about a minute), every `slowRetryMs` (5 minutes) once it has failed for
// `thresholdMs` (10 minutes), when it is also reported as DrainThresholdExceeded; past `timeoutMs`
// (an hour, OpenShift's drain timeout) it still retries, and mcc_drain_err says so.
import type { Pod } from '../../api/index.js';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export type DrainRequest = { action: 'none' } | { action: 'drain' | 'uncordon'; value: string };

export function drainRequest(annotations: Record<string, string> | undefined, desiredKey: string, lastKey: string): DrainRequest {
  const desired = annotations?.[desiredKey] ?? '';
  if (!desired || desired === annotations?.[lastKey]) return { action: 'none' };
  if (desired.startsWith('uncordon-')) return { action: 'uncordon', value: desired };
  return { action: 'drain', value: desired };
}

export interface PodSelection {
  evict: Pod[];
  /** Evicted already and still terminating. */
  terminating: Pod[];
}

export function podsToEvict(pods: readonly Pod[]): PodSelection {
  const evict: Pod[] = [];
  const terminating: Pod[] = [];
  for (const pod of pods) {
    if ((pod.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet' && o.controller)) continue;
    if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) continue;
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    (pod.metadata?.deletionTimestamp ? terminating : evict).push(pod);
  }
  return { evict, terminating };
}

export interface DrainTiming {
  retryMs: number;
  slowRetryMs: number;
  thresholdMs: number;
  timeoutMs: number;
}

export const DEFAULT_DRAIN_TIMING: DrainTiming = { retryMs: 60_000, slowRetryMs: 5 * 60_000, thresholdMs: 10 * 60_000, timeoutMs: 60 * 60_000 };

/** When to try a drain that has been failing since `sinceMs` again, and whether it is past the threshold and the timeout. */
export function drainRetry(sinceMs: number, nowMs: number, t: DrainTiming): { afterMs: number; thresholdExceeded: boolean; timedOut: boolean } {
  const exceeded = nowMs - sinceMs >= t.thresholdMs;
  return { afterMs: exceeded ? t.slowRetryMs : t.retryMs, thresholdExceeded: exceeded, timedOut: nowMs - sinceMs >= t.timeoutMs };
}
