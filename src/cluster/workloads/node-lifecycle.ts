// The node lifecycle controller's decisions, as kube's: a node whose kubelet has neither renewed
// its Lease nor posted its status within the grace period gets its conditions set Unknown
// ("Kubelet stopped posting node status.", or "never posted" past the startup grace period); the
// taints follow the conditions — not-ready / unreachable as NoExecute (evicting) and NoSchedule,
// the pressure and network conditions and spec.unschedulable as NoSchedule — leaving taints of
// other owners alone; a pod on a NoExecute-tainted node goes at once unless it tolerates every such
// taint, else when its shortest tolerationSeconds runs out (kube's taint-eviction controller). Pure.
import type * as api from '../../api/index.js';
import { rfc3339 } from '../../kube/index.js';
import { toleratesTaint } from '../scheduler/taints.js';
import { nodeReadyStatus } from '../../kube/readiness.js';

/** kube-controller-manager's --node-monitor-grace-period (50 s since Kubernetes 1.32). */
export const NODE_MONITOR_GRACE_MS = 50_000;
/** --node-startup-grace-period. */
export const NODE_STARTUP_GRACE_MS = 60_000;

export const NOT_READY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** The taints this controller owns, by the condition that sets them (NoSchedule unless said). */
const CONDITION_TAINTS: Array<{ key: string; when: (node: api.Node) => boolean; effect: string }> = [
  { key: NOT_READY, effect: 'NoExecute', when: (n) => readyStatus(n) === 'False' },
  { key: UNREACHABLE, effect: 'NoExecute', when: (n) => readyStatus(n) === 'Unknown' },
  { key: NOT_READY, effect: 'NoSchedule', when: (n) => readyStatus(n) === 'False' },
  { key: UNREACHABLE, effect: 'NoSchedule', when: (n) => readyStatus(n) === 'Unknown' },
  { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule', when: (n) => conditionStatus(n, 'MemoryPressure') === 'True' },
  { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule', when: (n) => conditionStatus(n, 'DiskPressure') === 'True' },
  { key: 'node.kubernetes.io/pid-pressure', effect: 'NoSchedule', when: (n) => conditionStatus(n, 'PIDPressure') === 'True' },
  { key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule', when: (n) => conditionStatus(n, 'NetworkUnavailable') === 'True' },
  { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', when: (n) => Boolean(n.spec?.unschedulable) },
];
const OWNED = new Set(CONDITION_TAINTS.map((t) => `${t.key}:${t.effect}`));

function conditionStatus(node: api.Node, type: string): string | undefined {
  return (node.status?.conditions ?? []).find((c) => c.type === type)?.status;
}

/** No Ready condition yet (a node just registered) is no reason to taint: health sets one after the startup grace. */
function readyStatus(node: api.Node): string | undefined {
  return nodeReadyStatus(node);
}

/** When the kubelet last showed it is alive: its Lease's renewTime or its Ready heartbeat. */
export function lastProbe(node: api.Node, lease: api.Lease | undefined): number | undefined {
  const times = [lease?.spec?.renewTime, (node.status?.conditions ?? []).find((c) => c.type === 'Ready')?.lastHeartbeatTime]
    .map((t) => Date.parse(t ?? ''))
    .filter((t) => Number.isFinite(t));
  return times.length ? Math.max(...times) : undefined;
}

export interface Health {
  /** The conditions to write, when they must change. */
  conditions?: api.NodeCondition[];
  /** When to look again (ms from now), while the node is healthy. */
  recheckInMs?: number;
}

/** kube's tryUpdateNodeHealth: the node's conditions go Unknown once the kubelet is silent too long. */
export function nodeHealth(node: api.Node, lease: api.Lease | undefined, now: number, graceMs = NODE_MONITOR_GRACE_MS, startupGraceMs = NODE_STARTUP_GRACE_MS): Health {
  const conditions: api.NodeCondition[] = node.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  const time = rfc3339(new Date(now));
  if (!ready) {
    const created = Date.parse(node.metadata?.creationTimestamp ?? '');
    const due = (Number.isFinite(created) ? created : now) + startupGraceMs;
    if (due > now) return { recheckInMs: due - now };
    return { conditions: [...conditions, { type: 'Ready', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: time, lastTransitionTime: time }] };
  }
  const probe = lastProbe(node, lease) ?? now;
  const due = probe + graceMs;
  if (due > now) return { recheckInMs: due - now };
  if (ready.status === 'Unknown' && conditions.every((c) => c.type === 'Ready' || !['MemoryPressure', 'DiskPressure', 'PIDPressure'].includes(c.type) || c.status === 'Unknown')) return {};
  return {
    conditions: conditions.map((c) =>
      ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].includes(c.type) && c.status !== 'Unknown'
        ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: time }
        : c,
    ),
  };
}

/**
 * What may happen to the node's not-ready / unreachable NoExecute taints (the evicting ones), as
 * kube's zone eviction limiter decides: `add` them as the conditions say; `hold` — keep one the
 * node has (swapping not-ready for unreachable and back) but add none, while the zone's eviction
 * rate is spent or zero; `remove` them, in master disruption mode (every node of every zone not
 * Ready: the fault is more likely the control plane's than every node's).
 */
export type NoExecutePolicy = 'add' | 'hold' | 'remove';

/** The node's taints with this controller's set as its conditions say (others untouched, timeAdded kept). */
export function wantedTaints(node: api.Node, now: number, noExecute: NoExecutePolicy = 'add'): api.Taint[] {
  const current: api.Taint[] = node.spec?.taints ?? [];
  const foreign = current.filter((t) => !OWNED.has(`${t.key}:${t.effect}`));
  const evicting = current.find((c) => c.effect === 'NoExecute' && OWNED.has(`${c.key}:${c.effect}`));
  const owned = CONDITION_TAINTS.filter((t) => t.when(node)).flatMap((t) => {
    const existing = current.find((c) => c.key === t.key && c.effect === t.effect);
    if (t.effect !== 'NoExecute') return [existing ?? { key: t.key, effect: t.effect }];
    if (noExecute === 'remove') return [];
    if (existing) return [existing];
    // kube swaps not-ready for unreachable (and back) at once, keeping when eviction started.
    if (evicting) return [{ key: t.key, effect: t.effect, timeAdded: evicting.timeAdded ?? rfc3339(new Date(now)) }];
    return noExecute === 'add' ? [{ key: t.key, effect: t.effect, timeAdded: rfc3339(new Date(now)) }] : [];
  });
  return [...foreign, ...owned];
}

/** Whether the node would get an evicting taint it does not have yet (what the eviction rate limits). */
export function wantsNewEvictingTaint(node: api.Node): boolean {
  const current: api.Taint[] = node.spec?.taints ?? [];
  if (current.some((c) => c.effect === 'NoExecute' && OWNED.has(`${c.key}:${c.effect}`))) return false;
  return CONDITION_TAINTS.some((t) => t.effect === 'NoExecute' && t.when(node));
}

// Zones and their disruption, as kube-controller-manager's node lifecycle controller computes
// them: a zone with no Ready node is fully disrupted; one with more than 2 nodes not Ready and at
// least --unhealthy-zone-threshold (55%) of them is partially disrupted.

export type ZoneState = 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** --unhealthy-zone-threshold */
export const UNHEALTHY_ZONE_THRESHOLD = 0.55;
/** --large-cluster-size-threshold: a partially disrupted zone larger than this keeps evicting, slowly. */
export const LARGE_CLUSTER_THRESHOLD = 50;
/** --node-eviction-rate (nodes per second per zone) */
export const NODE_EVICTION_RATE = 0.1;
/** --secondary-node-eviction-rate */
export const SECONDARY_NODE_EVICTION_RATE = 0.01;

/** The node's zone, as kube keys it: region and zone from the topology labels ("" for neither). */
export function zoneOf(node: api.Node): string {
  const labels = node.metadata?.labels ?? {};
  const region = labels['topology.kubernetes.io/region'] ?? labels['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = labels['topology.kubernetes.io/zone'] ?? labels['failure-domain.beta.kubernetes.io/zone'] ?? '';
  return region || zone ? `${region}:${zone}` : '';
}

/** The zone's state from its nodes (kube's ComputeZoneState). */
export function zoneState(nodes: api.Node[], threshold = UNHEALTHY_ZONE_THRESHOLD): ZoneState {
  const ready = nodes.filter((n) => readyStatus(n) === 'True').length;
  const notReady = nodes.length - ready;
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / nodes.length >= threshold) return 'PartialDisruption';
  return 'Normal';
}

export interface Disruption {
  zones: Map<string, { state: ZoneState; size: number }>;
  /** Every node of every zone not Ready: master disruption mode, no evictions at all. */
  allFullyDisrupted: boolean;
}

export function disruption(nodes: api.Node[], threshold = UNHEALTHY_ZONE_THRESHOLD): Disruption {
  const byZone = new Map<string, api.Node[]>();
  for (const n of nodes) byZone.set(zoneOf(n), [...(byZone.get(zoneOf(n)) ?? []), n]);
  const zones = new Map([...byZone].map(([zone, members]) => [zone, { state: zoneState(members, threshold), size: members.length }]));
  return { zones, allFullyDisrupted: zones.size > 0 && [...zones.values()].every((z) => z.state === 'FullDisruption') };
}

/** Nodes per second that may get evicting taints in a zone (kube's setLimiterInZone). */
export function zoneEvictionRate(state: ZoneState, size: number, rates = { normal: NODE_EVICTION_RATE, secondary: SECONDARY_NODE_EVICTION_RATE, largeCluster: LARGE_CLUSTER_THRESHOLD }): number {
  if (state === 'PartialDisruption') return size > rates.largeCluster ? rates.secondary : 0;
  return rates.normal;
}

/** A token bucket of burst 1 (kube's eviction limiter): whether one more may go now, else when. */
export class EvictionLimiter {
  private tokens = 1;
  private last: number;
  constructor(private qps: number, now: number) {
    this.last = now;
  }

  setRate(qps: number, now: number): void {
    this.refill(now);
    this.qps = qps;
  }

  /** Takes a token: 0 when one was there, else the ms until one will be (Infinity at rate 0). */
  take(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return this.qps > 0 ? Math.ceil(((1 - this.tokens) / this.qps) * 1000) : Infinity;
  }

  private refill(now: number): void {
    this.tokens = Math.min(1, this.tokens + Math.max(0, now - this.last) / 1000 * this.qps);
    this.last = now;
  }
}

/**
 * When the pod must go from its node (ms from now; 0 = at once), or undefined when it may stay
 * (kube's taint-eviction controller): an untolerated NoExecute taint evicts at once; otherwise the
 * shortest tolerationSeconds among the tolerations in use runs out, counted from when the first
 * NoExecute taint was added; tolerations without seconds tolerate forever.
 */
export function evictionDelay(pod: api.Pod, taints: api.Taint[], now: number): number | undefined {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (!noExecute.length) return undefined;
  const tolerations: api.Toleration[] = pod.spec?.tolerations ?? [];
  const used = new Set<api.Toleration>();
  for (const taint of noExecute) {
    const matching = tolerations.filter((t) => toleratesTaint(t, taint));
    if (!matching.length) return 0;
    for (const t of matching) used.add(t);
  }
  const seconds = [...used].map((t) => t.tolerationSeconds).filter((s): s is number => typeof s === 'number');
  if (!seconds.length) return undefined;
  const since = Math.min(...noExecute.map((t) => Date.parse(t.timeAdded ?? '')).map((t) => (Number.isFinite(t) ? t : now)));
  return Math.max(0, since + Math.max(0, Math.min(...seconds)) * 1000 - now);
}
