// One scheduling decision, pure: the pod, the nodes and the pods bound to them in; the chosen node
// or a FitError out. The steps are kube-scheduler's scheduling cycle: PreFilter (what the pod
// needs, counted once over the cluster; required node affinity on metadata.name narrows the nodes
// to look at), Filter (each node, first failing filter wins), Score, select.
//
// FitError's message is kube's FitError.Error() word for word: "0/N nodes are available: " then
// each distinct reason with the number of nodes that gave it, as "<count> <reason>", sorted as
// strings (so "2 Insufficient cpu" comes before "3 node(s) had untolerated taint ..."), joined by
// ", ", and a final ".". When preemption cannot help either, the scheduler appends its
// "preemption: ..." sentence (preemption.ts), as kube-scheduler's DefaultPreemption does.
import { BosunError } from '../../common/errors.js';
import type { MetaLabelSelector } from '../../common/label-selectors.js';
import { filterNode, preFilter } from './filters.js';
import { pinnedNodeNames } from './node-affinity.js';
import { type NodeInfo, nodeInfo } from './resources.js';
import { type NodeScore, scoreNodes, selectHost } from './scoring.js';
import type { ClusterSnapshot, Pod } from './types.js';
import { readWriteOncePodConflict } from './volume-restrictions.js';

export const ERR_NO_NODES_AVAILABLE = 'no nodes available to schedule pods';
export const ERR_AFFINITY_TERMS_CONFLICT = 'pod affinity terms conflict';

export class FitError extends BosunError {
  constructor(
    readonly numAllNodes: number,
    /** The reasons each rejected node gave. */
    readonly nodeReasons: ReadonlyMap<string, readonly string[]>,
    /** A PreFilter's verdict that rules out every node at once. */
    readonly preFilterMessage?: string,
  ) {
    super('Unschedulable', fitErrorMessage(numAllNodes, nodeReasons, preFilterMessage));
  }
}

export function fitErrorMessage(numAllNodes: number, nodeReasons: ReadonlyMap<string, readonly string[]>, preFilterMessage?: string): string {
  if (numAllNodes === 0) return ERR_NO_NODES_AVAILABLE;
  let message = `0/${numAllNodes} nodes are available:`;
  if (preFilterMessage) return `${message} ${preFilterMessage}.`;
  const histogram = new Map<string, number>();
  for (const reasons of nodeReasons.values()) for (const reason of reasons) histogram.set(reason, (histogram.get(reason) ?? 0) + 1);
  // Go's sort.Strings: byte order, which for these ASCII strings is plain code-unit order.
  const parts = [...histogram].map(([reason, count]) => `${count} ${reason}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (parts.length > 0) message += ` ${parts.join(', ')}.`;
  return message;
}

export interface ScheduleOptions {
  /** Merged selectors of the Services/ReplicaSets/StatefulSets selecting the pod (system default spreading). */
  defaultSpreadSelector?: MetaLabelSelector;
}

export type ScheduleResult = { node: string; feasible: number; scores: NodeScore[] } | { error: FitError };

export function buildNodeInfos(snapshot: ClusterSnapshot): NodeInfo[] {
  return snapshot.nodes.map((n) => nodeInfo(n, snapshot.podsByNode.get(n.metadata.name) ?? []));
}

export function schedulePod(pod: Pod, snapshot: ClusterSnapshot, options: ScheduleOptions = {}, infos = buildNodeInfos(snapshot)): ScheduleResult {
  const numAllNodes = infos.length;
  if (numAllNodes === 0) return { error: new FitError(0, new Map()) };
  const rejected = new Map<string, string[]>();
  let candidates = infos;
  const pinned = pinnedNodeNames(pod);
  if (pinned) {
    if (pinned.size === 0) return { error: new FitError(numAllNodes, new Map(), ERR_AFFINITY_TERMS_CONFLICT) };
    candidates = infos.filter((n) => pinned.has(n.name));
    for (const n of infos) if (!pinned.has(n.name)) rejected.set(n.name, ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]);
  }
  const state = preFilter(pod, infos, snapshot.namespaceLabels, snapshot.storage);
  // The PreFilters that rule out every node at once, in kube's order: VolumeRestrictions, VolumeBinding.
  const unresolvable = readWriteOncePodConflict(pod, snapshot) ?? state.volumes.unresolvable;
  if (unresolvable) return { error: new FitError(numAllNodes, new Map(), unresolvable) };
  const feasible: NodeInfo[] = [];
  for (const info of candidates) {
    const failure = filterNode(state, info);
    if (failure) rejected.set(info.name, failure.reasons);
    else feasible.push(info);
  }
  if (feasible.length === 0) return { error: new FitError(numAllNodes, rejected) };
  const scores = scoreNodes(state, feasible, infos, options.defaultSpreadSelector, snapshot.namespaceLabels);
  return { node: selectHost(scores)!, feasible: feasible.length, scores };
}
