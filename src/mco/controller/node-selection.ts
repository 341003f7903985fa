// The node controller's decisions as pure functions over plain objects: which pool a node belongs
// to, how many nodes a pool may have unavailable, which nodes move to the target config next, and
// the pool's status (counts and conditions).
//
// Membership: a pool's nodeSelector (absent or empty selects nothing). A node matched by `master`
// belongs to master; otherwise a node matched by one custom pool belongs to it even if `worker`
// matches too; matched by two or more custom pools it belongs to none and is reported. A node
// matched by master and a custom pool has no custom configuration (mcc_pool_alert says so).
//
// Availability: a node is unavailable when it is not Ready, cordoned, updating (desiredConfig ≠
// currentConfig, or state other than Done) or degraded (state Degraded or Unreconcilable).
// Capacity = maxUnavailable − unavailable. maxUnavailable is an integer or a percentage of the
// pool's nodes rounded down; absent means 1, and anything below 1 counts as 1.
//
// Candidates: nodes whose desiredConfig is not the target. Zone rule: picks are made one at a
// time, each from the zone (label topology.kubernetes.io/zone; nodes without it form the zone "")
// that has the fewest unavailable nodes counting the picks made so far, ties broken by zone name;
// within a zone the oldest node (creationTimestamp, then name) goes first. So a rollout spreads
// across zones and never takes a second node down in a zone while another zone has none down.
// Nodes already unavailable that do not target the config are always picked (first, oldest
// first): pointing them at it takes nothing further down. A paused pool picks nothing.
import { fromLabelSelectorObject, matchesLabels, SelectorError } from '../../common/label-selectors.js';
import { findCondition, setCondition, type Condition } from '../../kube/conditions.js';
import {
  CURRENT_CONFIG_ANNOTATION, DESIRED_CONFIG_ANNOTATION, REASON_ANNOTATION, STATE_ANNOTATION, ZONE_LABEL,
  conditionsOf, metaSelector, type MachineConfigPool, type MachineConfigPoolStatus, type NodeView,
} from './types.js';
import { isNodeReady as nodeIsReady } from '../../kube/readiness.js';

export type NodeState = 'Done' | 'Working' | 'Degraded' | 'Unreconcilable';
export const BUILT_IN_POOLS = ['master', 'worker'];

export interface PoolMembership {
  /** Pool name → its nodes, sorted by name. Every pool given appears, possibly empty. */
  members: Map<string, NodeView[]>;
  /** Nodes matched by more than one custom pool: name → the pools. */
  conflicts: Map<string, string[]>;
  /** Nodes matched by master and by a custom pool: in master, without the custom pool's configuration. */
  masterOverCustom: Set<string>;
}

function selectorOf(pool: MachineConfigPool) {
  const raw = pool.spec.nodeSelector;
  if (!raw || (Object.keys(raw.matchLabels ?? {}).length === 0 && (raw.matchExpressions ?? []).length === 0)) return undefined;
  try { return fromLabelSelectorObject(metaSelector(raw)); } catch (e) {
    if (e instanceof SelectorError) return undefined;
    throw e;
  }
}

export function poolMembership(pools: MachineConfigPool[], nodes: NodeView[]): PoolMembership {
  const members = new Map<string, NodeView[]>(pools.map((p) => [p.metadata.name ?? '', []]));
  const conflicts = new Map<string, string[]>();
  const masterOverCustom = new Set<string>();
  const selectors = pools.map((p) => ({ name: p.metadata.name ?? '', selector: selectorOf(p) }));
  for (const node of [...nodes].sort((a, b) => compare(a.metadata.name, b.metadata.name))) {
    const matched = selectors.filter((s) => s.selector && matchesLabels(s.selector, node.metadata.labels)).map((s) => s.name);
    let pool: string | undefined;
    if (matched.includes('master')) {
      pool = 'master';
      if (matched.some((n) => !BUILT_IN_POOLS.includes(n))) masterOverCustom.add(node.metadata.name ?? '');
    } else {
      const custom = matched.filter((n) => !BUILT_IN_POOLS.includes(n));
      if (custom.length > 1) { conflicts.set(node.metadata.name ?? '', custom.sort()); continue; }
      pool = custom[0] ?? (matched.includes('worker') ? 'worker' : undefined);
    }
    if (pool) members.get(pool)!.push(node);
  }
  return { members, conflicts, masterOverCustom };
}

/** maxUnavailable as a node count for a pool of `total` nodes (at least 1). Throws on nonsense. */
export function maxUnavailableCount(value: number | string | null | undefined, total: number): number {
  if (value === undefined || value === null) return 1;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) throw new Error(`spec.maxUnavailable must be a non-negative integer or a percentage, not ${value}`);
    return Math.max(1, value);
  }
  const m = /^(\d+)%$/.exec(value.trim());
  if (!m) {
    if (/^\d+$/.test(value.trim())) return Math.max(1, Number(value.trim()));
    throw new Error(`spec.maxUnavailable must be an integer or a percentage like "30%", not "${value}"`);
  }
  return Math.max(1, Math.floor((Number(m[1]) * total) / 100));
}

const ann = (n: NodeView, key: string) => n.metadata.annotations?.[key] ?? '';

export function nodeState(n: NodeView): string {
  return ann(n, STATE_ANNOTATION);
}

export function isNodeReady(n: NodeView): boolean {
  return nodeIsReady(n);
}

export function isNodeDegraded(n: NodeView): boolean {
  const s = nodeState(n);
  return s === 'Degraded' || s === 'Unreconcilable';
}

/** The daemon has finished: current == desired and state Done. */
export function isNodeDone(n: NodeView): boolean {
  const desired = ann(n, DESIRED_CONFIG_ANNOTATION);
  return desired !== '' && ann(n, CURRENT_CONFIG_ANNOTATION) === desired && nodeState(n) === 'Done';
}

export function isNodeUnavailable(n: NodeView): boolean {
  return !isNodeReady(n) || n.spec?.unschedulable === true || !isNodeDone(n) || isNodeDegraded(n);
}

/** Done at the target and Ready. */
function isUpdated(n: NodeView, target: string): boolean {
  return isNodeDone(n) && ann(n, CURRENT_CONFIG_ANNOTATION) === target;
}

export interface CandidateChoice {
  /** Nodes to point at the target now, in order. */
  nodes: NodeView[];
  capacity: number;
  /** Why none were chosen, when none were (paused, no capacity, all targeted). */
  reason?: string;
}

function zoneOf(n: NodeView): string {
  return n.metadata.labels?.[ZONE_LABEL] ?? '';
}

function olderFirst(a: NodeView, b: NodeView): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return compare(a.metadata.name, b.metadata.name);
}

/** The nodes of `pool` to set desiredConfig = target on now (see the header for the rules).
 *  Throws on a maxUnavailable it cannot read, whether or not anything is pending. */
export function chooseCandidates(pool: MachineConfigPool, nodes: NodeView[], target: string): CandidateChoice {
  const max = maxUnavailableCount(pool.spec.maxUnavailable, nodes.length);
  const pending = nodes.filter((n) => ann(n, DESIRED_CONFIG_ANNOTATION) !== target);
  if (pending.length === 0) return { nodes: [], capacity: 0, reason: 'every node already targets the config' };
  if (pool.spec.paused) return { nodes: [], capacity: 0, reason: `Pool is paused; will not update to ${target}` };
  const unavailable = nodes.filter(isNodeUnavailable);
  const capacity = Math.max(0, max - unavailable.length);
  // Nodes that are down already lose nothing by being retargeted (and a node no daemon has
  // configured yet would otherwise wait forever).
  const alreadyDown = pending.filter(isNodeUnavailable).sort(olderFirst);
  const up = pending.filter((n) => !isNodeUnavailable(n));

  const downPerZone = new Map<string, number>();
  for (const n of nodes) downPerZone.set(zoneOf(n), (downPerZone.get(zoneOf(n)) ?? 0) + (isNodeUnavailable(n) ? 1 : 0));
  const queues = new Map<string, NodeView[]>();
  for (const n of [...up].sort(olderFirst)) queues.set(zoneOf(n), [...(queues.get(zoneOf(n)) ?? []), n]);

  const chosen: NodeView[] = [];
  while (chosen.length < capacity) {
    const zones = [...queues.keys()].filter((z) => queues.get(z)!.length > 0);
    if (zones.length === 0) break;
    zones.sort((a, b) => (downPerZone.get(a)! - downPerZone.get(b)!) || compare(a, b));
    chosen.push(queues.get(zones[0])!.shift()!);
    downPerZone.set(zones[0], downPerZone.get(zones[0])! + 1);
  }
  const all = [...alreadyDown, ...chosen];
  if (all.length === 0) return { nodes: [], capacity, reason: `${unavailable.length} of at most ${max} nodes unavailable (${names(unavailable)})` };
  return { nodes: all, capacity };
}

/** OpenShift's taint on nodes a rollout has still to reach, so new pods prefer other nodes. */
export const UPDATE_IN_PROGRESS_TAINT = { key: 'UpdateInProgress', effect: 'PreferNoSchedule' } as const;

export function hasUpdateInProgressTaint(n: NodeView): boolean {
  return (n.spec?.taints ?? []).some((t) => t.key === UPDATE_IN_PROGRESS_TAINT.key && t.effect === UPDATE_IN_PROGRESS_TAINT.effect);
}

/** Nodes to taint (desiredConfig not yet the target) and to untaint (targeted), by name. A
 *  paused pool or one without a target changes no taints. */
export function updateInProgressTaintChanges(pool: MachineConfigPool, nodes: NodeView[], target: string): { add: string[]; remove: string[] } {
  if (!target || pool.spec.paused) return { add: [], remove: [] };
  const add: string[] = [];
  const remove: string[] = [];
  for (const n of nodes) {
    const targeted = ann(n, DESIRED_CONFIG_ANNOTATION) === target;
    if (!targeted && !hasUpdateInProgressTaint(n)) add.push(n.metadata.name ?? '');
    if (targeted && hasUpdateInProgressTaint(n)) remove.push(n.metadata.name ?? '');
  }
  return { add, remove };
}

/** Why the pool's spec cannot be acted on (an unreadable maxUnavailable), once it has a target. */
export function poolSpecError(pool: MachineConfigPool): string | undefined {
  if (!pool.spec.configuration?.name) return undefined;
  try {
    maxUnavailableCount(pool.spec.maxUnavailable, 0);
    return undefined;
  } catch (e) {
    return `pool ${pool.metadata.name}: ${(e as Error).message}`;
  }
}

/** Degraded as the pool sums it: nodes first, then the render, then an invalid spec. */
function degradedFrom(nodeDegraded: Condition | undefined, renderDegraded: Condition | undefined, specError: string | undefined): Condition {
  const nodes = nodeDegraded?.status === 'True';
  const render = renderDegraded?.status === 'True';
  const message = [nodes ? nodeDegraded.message : '', render ? renderDegraded.message : '', specError ?? ''].filter(Boolean).join('; ');
  const reason = nodes ? 'NodeDegraded' : render ? 'RenderDegraded' : specError ? 'InvalidSpec' : '';
  return { type: 'Degraded', status: reason ? 'True' : 'False', reason, message };
}

/** The pool's conditions with Degraded recomputed from them, for a writer of one of its inputs
 *  (the render controller setting RenderDegraded), so the pool never says one without the other. */
export function withDegraded(pool: MachineConfigPool, conditions: Condition[], now: Date = new Date()): Condition[] {
  return setCondition(conditions, degradedFrom(findCondition(conditions, 'NodeDegraded'), findCondition(conditions, 'RenderDegraded'), poolSpecError(pool)), now);
}

export interface PoolStatusInputs {
  pool: MachineConfigPool;
  nodes: NodeView[];
  /** The pool's target rendered config (spec.configuration.name). */
  target: string;
  /** A pool spec the controller cannot act on (e.g. a bad maxUnavailable): Degraded, no rollout. */
  specError?: string;
  /** Nodes of this pool's selector that also match another custom pool. */
  conflicts?: string[];
  now: Date;
}

/** The status the pool should have. Conditions keep their lastTransitionTime unless status changes. */
export function computePoolStatus(inp: PoolStatusInputs): MachineConfigPoolStatus {
  const { pool, nodes, target } = inp;
  const updated = nodes.filter((n) => isUpdated(n, target));
  const ready = updated.filter((n) => isNodeReady(n) && n.spec?.unschedulable !== true);
  const unavailable = nodes.filter(isNodeUnavailable);
  const degraded = nodes.filter(isNodeDegraded);
  const allUpdated = target !== '' && updated.length === nodes.length && ready.length === nodes.length && unavailable.length === 0;

  const conds: Condition[] = [];
  const set = (type: string, status: boolean, reason: string, message: string) => conds.push({ type, status: status ? 'True' : 'False', reason, message });

  if (allUpdated) {
    set('Updated', true, '', `All nodes are updated with MachineConfig ${target}`);
    set('Updating', false, '', '');
  } else if (pool.spec.paused) {
    set('Updated', false, '', '');
    set('Updating', false, '', target ? `Pool is paused; will not update to ${target}` : 'Pool is paused');
  } else {
    const behind = nodes.filter((n) => !updated.includes(n));
    set('Updated', false, '', '');
    set('Updating', target !== '', '', target ? `${updated.length} of ${nodes.length} nodes updated to MachineConfig ${target}; waiting for ${names(behind)}` : 'the pool has no rendered config yet');
  }

  const nodeProblems = degraded.map((n) => `Node ${n.metadata.name} is reporting: "${ann(n, REASON_ANNOTATION) || nodeState(n)}"`);
  for (const c of inp.conflicts ?? []) nodeProblems.push(`Node ${c} belongs to more than one custom pool; it is in none`);
  const nodeDegraded = nodeProblems.length > 0;
  set('NodeDegraded', nodeDegraded, nodeDegraded ? `${nodeProblems.length} nodes are reporting degraded status on sync` : '', nodeProblems.join(', '));
  // RenderDegraded is the render controller's: carried over as it is, counted into Degraded.
  const render = findCondition(conditionsOf(pool), 'RenderDegraded');
  if (render) conds.push(render);
  conds.push(degradedFrom(conds.find((c) => c.type === 'NodeDegraded'), render, inp.specError));

  // Existing conditions keep their lastTransitionTime while their status holds.
  const previous = conditionsOf(pool) ?? [];
  const conditions = conds.map((c) => setCondition(previous, c, inp.now).find((x) => x.type === c.type)!);

  return {
    observedGeneration: pool.metadata.generation,
    configuration: allUpdated ? pool.spec.configuration : pool.status?.configuration,
    machineCount: nodes.length,
    updatedMachineCount: updated.length,
    readyMachineCount: ready.length,
    unavailableMachineCount: unavailable.length,
    degradedMachineCount: degraded.length,
    conditions,
  };
}

function names(nodes: NodeView[]): string {
  const list = nodes.map((n) => n.metadata.name ?? '');
  return list.length <= 10 ? list.join(', ') : `${list.slice(0, 10).join(', ')} and ${list.length - 10} more`;
}

function compare(a: string | undefined, b: string | undefined): number {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}
