// The filters, in kube-scheduler's default order, each answering for one node: pass, or the
// reasons it fails (the strings kube's plugins return, which the FailedScheduling message counts).
// A node is judged by the first filter it fails, as kube's framework stops at the first.
// Everything a filter needs about the pod and the whole cluster is computed once per pod first
// (`preFilter`), so each node is a cheap check.
import { matchesRequiredNodeAffinity } from './node-affinity.js';
import { type PodAffinityState, podAffinityReason, podAffinityState } from './pod-affinity.js';
import { type HostPort, type NodeInfo, podHostPorts, podRequests, portsConflict, type Resources } from './resources.js';
import { firstUntoleratedTaint, toleratesTaintWith } from './taints.js';
import { spreadFilterReason, spreadFilterState, type SpreadFilterState } from './topology-spread.js';
import type { Pod, StorageSnapshot } from './types.js';
import { volumeBindingPreFilter, volumeBindingReason, type VolumeBindingState } from './volume-binding.js';

export const ERR_UNSCHEDULABLE = 'node(s) were unschedulable';
export const ERR_NODE_NAME = "node(s) didn't match the requested node name";
export const ERR_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const ERR_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";
export const ERR_TOO_MANY_PODS = 'Too many pods';
export const untoleratedTaintReason = (key: string, value = '') => `node(s) had untolerated taint {${key}: ${value}}`;
export const insufficientReason = (resource: string) => `Insufficient ${resource}`;

export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** What the filters know about the pod being scheduled (kube's CycleState after PreFilter). */
export interface CycleState {
  pod: Pod;
  requests: Resources;
  hostPorts: HostPort[];
  podAffinity: PodAffinityState;
  spread: SpreadFilterState;
  volumes: VolumeBindingState;
  storage?: StorageSnapshot;
}

export function preFilter(pod: Pod, nodes: readonly NodeInfo[], namespaceLabels?: ReadonlyMap<string, Record<string, string>>, storage?: StorageSnapshot): CycleState {
  return {
    pod,
    requests: podRequests(pod),
    hostPorts: podHostPorts(pod),
    podAffinity: podAffinityState(pod, nodes, namespaceLabels),
    spread: spreadFilterState(pod, nodes),
    volumes: volumeBindingPreFilter(pod, storage),
    storage,
  };
}

type Filter = (state: CycleState, node: NodeInfo) => string[];
const reasons = (reason: string | undefined) => (reason === undefined ? [] : [reason]);

function nodeUnschedulable({ pod }: CycleState, info: NodeInfo): string[] {
  // Cordoned nodes take only pods that tolerate the unschedulable taint (DaemonSets' do).
  const tolerated = toleratesTaintWith(pod.spec.tolerations, { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  return reasons(info.node.spec?.unschedulable && !tolerated ? ERR_UNSCHEDULABLE : undefined);
}

function nodeName({ pod }: CycleState, info: NodeInfo): string[] {
  return reasons(pod.spec.nodeName && pod.spec.nodeName !== info.name ? ERR_NODE_NAME : undefined);
}

function taintToleration({ pod }: CycleState, info: NodeInfo): string[] {
  const taint = firstUntoleratedTaint(info.node.spec?.taints, pod.spec.tolerations);
  return reasons(taint ? untoleratedTaintReason(taint.key, taint.value) : undefined);
}

function nodeAffinity({ pod }: CycleState, info: NodeInfo): string[] {
  return reasons(matchesRequiredNodeAffinity(pod, info.node) ? undefined : ERR_NODE_AFFINITY);
}

function nodePorts({ hostPorts }: CycleState, info: NodeInfo): string[] {
  const conflict = hostPorts.some((wanted) => info.usedPorts.some((used) => portsConflict(wanted, used)));
  return reasons(conflict ? ERR_NODE_PORTS : undefined);
}

/** Every resource the node lacks, all reported (as kube keeps all of NodeResourcesFit's reasons). */
function nodeResourcesFit({ requests }: CycleState, info: NodeInfo): string[] {
  const out: string[] = [];
  if (info.pods.length + 1 > info.allowedPods) out.push(ERR_TOO_MANY_PODS);
  const { allocatable: free, requested: used } = info;
  if (requests.milliCPU > 0 && requests.milliCPU > free.milliCPU - used.milliCPU) out.push(insufficientReason('cpu'));
  if (requests.memory > 0 && requests.memory > free.memory - used.memory) out.push(insufficientReason('memory'));
  if (requests.ephemeralStorage > 0 && requests.ephemeralStorage > free.ephemeralStorage - used.ephemeralStorage) out.push(insufficientReason('ephemeral-storage'));
  for (const [name, wanted] of Object.entries(requests.scalar)) {
    if (wanted > 0 && wanted > (free.scalar[name] ?? 0) - (used.scalar[name] ?? 0)) out.push(insufficientReason(name));
  }
  return out;
}

function volumeBinding(state: CycleState, info: NodeInfo): string[] {
  return reasons(volumeBindingReason(state.volumes, info.node, state.storage));
}

function podTopologySpread(state: CycleState, info: NodeInfo): string[] {
  return reasons(spreadFilterReason(state.spread, state.pod, info));
}

function interPodAffinity(state: CycleState, info: NodeInfo): string[] {
  return reasons(podAffinityReason(state.podAffinity, info));
}

/** The filters by plugin name, in the order of kube-scheduler's default profile. */
export const FILTERS: ReadonlyArray<readonly [string, Filter]> = [
  ['NodeUnschedulable', nodeUnschedulable],
  ['NodeName', nodeName],
  ['TaintToleration', taintToleration],
  ['NodeAffinity', nodeAffinity],
  ['NodePorts', nodePorts],
  ['NodeResourcesFit', nodeResourcesFit],
  ['VolumeBinding', volumeBinding],
  ['PodTopologySpread', podTopologySpread],
  ['InterPodAffinity', interPodAffinity],
];

/** The first failing filter's plugin and reasons, or undefined when the node fits. */
export function filterNode(state: CycleState, info: NodeInfo): { plugin: string; reasons: string[] } | undefined {
  for (const [plugin, filter] of FILTERS) {
    const failed = filter(state, info);
    if (failed.length > 0) return { plugin, reasons: failed };
  }
  return undefined;
}
