// The node lifecycle controller's decisions, as kube's: a node whose kubelet has neither renewed
// its Lease nor posted its status within the grace period gets its conditions set Unknown
// ("Kubelet stopped posting node status.", or "never posted" past the startup grace period); the
// taints follow the conditions — not-ready / unreachable as NoExecute (evicting) and NoSchedule,
// the pressure and network conditions and spec.unschedulable as NoSchedule — leaving taints of
// other owners alone; a pod on a NoExecute-tainted node goes at once unless it tolerates every such
// taint, else when its shortest tolerationSeconds runs out (kube's taint-eviction controller). Pure.
import type { Obj } from '../../kube/index.js';
import { rfc3339 } from '../../kube/index.js';
import { toleratesTaint } from '../scheduler/taints.js';
import type { Taint, Toleration } from '../scheduler/types.js';

/** kube-controller-manager's --node-monitor-grace-period (50 s since Kubernetes 1.32). */
export const NODE_MONITOR_GRACE_MS = 50_000;
/** --node-startup-grace-period. */
export const NODE_STARTUP_GRACE_MS = 60_000;

export const NOT_READY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** The taints this controller owns, by the condition that sets them (NoSchedule unless said). */
const CONDITION_TAINTS: Array<{ key: string; when: (node: Obj) => boolean; effect: string }> = [
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

function conditionStatus(node: Obj, type: string): string | undefined {
  return (node.status?.conditions ?? []).find((c: Obj) => c.type === type)?.status;
}

/** No Ready condition yet (a node just registered) is no reason to taint: health sets one after the startup grace. */
function readyStatus(node: Obj): string | undefined {
  return conditionStatus(node, 'Ready');
}

/** When the kubelet last showed it is alive: its Lease's renewTime or its Ready heartbeat. */
export function lastProbe(node: Obj, lease: Obj | undefined): number | undefined {
  const times = [lease?.spec?.renewTime, (node.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')?.lastHeartbeatTime]
    .map((t) => Date.parse(t ?? ''))
    .filter((t) => Number.isFinite(t));
  return times.length ? Math.max(...times) : undefined;
}

export interface Health {
  /** The conditions to write, when they must change. */
  conditions?: Obj[];
  /** When to look again (ms from now), while the node is healthy. */
  recheckInMs?: number;
}

/** kube's tryUpdateNodeHealth: the node's conditions go Unknown once the kubelet is silent too long. */
export function nodeHealth(node: Obj, lease: Obj | undefined, now: number, graceMs = NODE_MONITOR_GRACE_MS, startupGraceMs = NODE_STARTUP_GRACE_MS): Health {
  const conditions: Obj[] = node.status?.conditions ?? [];
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

/** The node's taints with this controller's set as its conditions say (others untouched, timeAdded kept). */
export function wantedTaints(node: Obj, now: number): Taint[] {
  const current: Array<Taint & { timeAdded?: string }> = node.spec?.taints ?? [];
  const foreign = current.filter((t) => !OWNED.has(`${t.key}:${t.effect}`));
  const owned = CONDITION_TAINTS.filter((t) => t.when(node)).map((t) => {
    const existing = current.find((c) => c.key === t.key && c.effect === t.effect);
    if (existing) return existing;
    return t.effect === 'NoExecute' ? { key: t.key, effect: t.effect, timeAdded: rfc3339(new Date(now)) } : { key: t.key, effect: t.effect };
  });
  return [...foreign, ...owned];
}

/**
 * When the pod must go from its node (ms from now; 0 = at once), or undefined when it may stay
 * (kube's taint-eviction controller): an untolerated NoExecute taint evicts at once; otherwise the
 * shortest tolerationSeconds among the tolerations in use runs out, counted from when the first
 * NoExecute taint was added; tolerations without seconds tolerate forever.
 */
export function evictionDelay(pod: Obj, taints: Array<Taint & { timeAdded?: string }>, now: number): number | undefined {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (!noExecute.length) return undefined;
  const tolerations: Toleration[] = pod.spec?.tolerations ?? [];
  const used = new Set<Toleration>();
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
