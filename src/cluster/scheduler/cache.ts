// The scheduler's view of where pods are, as kube-scheduler's cache keeps it: the pods the API
// server shows bound, plus the pods this scheduler has *assumed* onto a node but whose binding the
// informer has not shown yet. Scheduling the next pod against the assumed placements is what keeps
// two pods from taking the same last slot while a binding is in flight.
//
// An assumed pod leaves the cache when the informer shows it bound (confirmed), when it is deleted,
// or when its binding fails (forgotten) — then its node's room is free again.
import type { ClusterSnapshot, Node, Pod } from './types.js';

export const podKey = (pod: Pod) => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** Succeeded and Failed pods hold no resources, ports or spread slots. */
export const isTerminal = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export class SchedulerCache {
  private readonly assumed = new Map<string, Pod>();

  /** Places the pod on the node in the cache, before the binding is sent. */
  assume(pod: Pod, nodeName: string): void {
    this.assumed.set(podKey(pod), { ...pod, spec: { ...pod.spec, nodeName } });
  }

  /** Drops an assumption (its binding failed, or the pod went away). */
  forget(key: string): void {
    this.assumed.delete(key);
  }

  isAssumed(key: string): boolean {
    return this.assumed.has(key);
  }

  /** Called with every pod the informer reports: a pod seen bound confirms its assumption. */
  observe(pod: Pod): void {
    if (pod.spec.nodeName) this.assumed.delete(podKey(pod));
  }

  get assumedCount(): number {
    return this.assumed.size;
  }

  /** The snapshot to schedule against: bound non-terminal pods and the assumed ones, by node. */
  snapshot(nodes: Node[], pods: Iterable<Pod>, namespaceLabels?: ReadonlyMap<string, Record<string, string>>): ClusterSnapshot {
    const podsByNode = new Map<string, Pod[]>();
    const place = (pod: Pod) => {
      const list = podsByNode.get(pod.spec.nodeName!);
      if (list) list.push(pod);
      else podsByNode.set(pod.spec.nodeName!, [pod]);
    };
    for (const pod of pods) {
      if (pod.spec.nodeName && !isTerminal(pod) && !this.assumed.has(podKey(pod))) place(pod);
    }
    for (const pod of this.assumed.values()) place(pod);
    return { nodes, podsByNode, namespaceLabels };
  }
}
