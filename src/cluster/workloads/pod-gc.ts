// The pod garbage collector's decisions, as kube's podgc: finished pods beyond the threshold go
// oldest first; pods bound to a node that no longer exists go once the node has been missing for
// the quarantine time (kube checks again against the API server first, as the controller does);
// pods being deleted that were never scheduled go at once (no kubelet will ever finish them), and so
// do pods being deleted on a node that is not Ready and tainted out-of-service (kube's
// gcTerminating: an administrator has said the node is down for good). Pure.
import type * as api from '../../api/index.js';
import { isTerminal } from './pods.js';
import { isNodeReady } from '../../kube/readiness.js';

/** kube-controller-manager's --terminated-pod-gc-threshold default. */
export const TERMINATED_POD_THRESHOLD = 12_500;
/** How long a pod's node must be missing before the pod is collected (kube: 40 s). */
export const ORPHAN_QUARANTINE_MS = 40_000;

/** Finished pods beyond `threshold`, oldest first (kube's gcTerminated). */
export function excessTerminated(pods: api.Pod[], threshold: number): api.Pod[] {
  const finished = pods.filter((p) => isTerminal(p) && !p.metadata.deletionTimestamp);
  if (threshold <= 0 || finished.length <= threshold) return [];
  return finished
    .sort((a, b) => {
      const ta = a.metadata.creationTimestamp ?? '';
      const tb = b.metadata.creationTimestamp ?? '';
      return ta < tb ? -1 : ta > tb ? 1 : 0;
    })
    .slice(0, finished.length - threshold);
}

/** Pods bound to a node not in `nodes` (kube's gcOrphaned candidates). */
export function orphaned(pods: api.Pod[], nodes: Set<string>): api.Pod[] {
  return pods.filter((p) => p.spec?.nodeName && !nodes.has(p.spec.nodeName));
}

/** The taint an administrator puts on a node that is shut down for good (NodeOutOfServiceVolumeDetach). */
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

/** Pods being deleted on a node that is not Ready and out of service: no kubelet will finish them (kube's gcTerminating). */
export function terminatingOutOfService(pods: api.Pod[], nodes: Map<string, api.Node>): api.Pod[] {
  return pods.filter((p) => {
    const node = p.metadata.deletionTimestamp && p.spec?.nodeName ? nodes.get(p.spec.nodeName) : undefined;
    if (!node) return false;
    const ready = isNodeReady(node);
    return !ready && (node.spec?.taints ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT);
  });
}

/** Pods being deleted that no node ever got (kube's gcUnscheduledTerminating). */
export function unscheduledTerminating(pods: api.Pod[]): api.Pod[] {
  return pods.filter((p) => p.metadata.deletionTimestamp && !p.spec?.nodeName);
}
