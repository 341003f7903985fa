// Is it ready? One answer per kind, from the condition its controller or agent writes (kube's
// podutil.IsPodReady, nodeutil's Ready check, the CRD Established check): every component asks
// these instead of scanning status.conditions itself.

/** Anything with status conditions (an informer's item, a typed object). */
export interface WithConditions {
  status?: { conditions?: ReadonlyArray<{ type: string; status?: string }> };
}

/** The status of a condition type ('True', 'False', 'Unknown'), or undefined when absent. */
export function conditionStatus(object: WithConditions | undefined, type: string): string | undefined {
  return object?.status?.conditions?.find((c) => c.type === type)?.status;
}

/** A Node whose kubelet says Ready=True. */
export function isNodeReady(node: WithConditions | undefined): boolean {
  return conditionStatus(node, 'Ready') === 'True';
}

/** A Node's Ready status: 'Unknown' once its kubelet stopped posting (unreachable). */
export function nodeReadyStatus(node: WithConditions | undefined): string | undefined {
  return conditionStatus(node, 'Ready');
}

/** A Pod whose containers are all ready (Ready=True). */
export function isPodReady(pod: WithConditions | undefined): boolean {
  return conditionStatus(pod, 'Ready') === 'True';
}

/** A CustomResourceDefinition the API server serves (Established=True). */
export function isCrdEstablished(crd: WithConditions | undefined): boolean {
  return conditionStatus(crd, 'Established') === 'True';
}

/** A ClusterOperator that says Available=True. */
export function isClusterOperatorAvailable(co: WithConditions | undefined): boolean {
  return conditionStatus(co, 'Available') === 'True';
}

/** A Cluster API Machine whose Ready condition is True (its infrastructure, bootstrap and node are). */
export function isMachineReady(machine: WithConditions | undefined): boolean {
  return conditionStatus(machine, 'Ready') === 'True';
}
