// Draining a Machine's Node before the Machine goes, as Cluster API's drain does it (kubectl
// drain's rules): cordon the Node, then evict every pod on it through the eviction API, so that
// PodDisruptionBudgets are honoured — an eviction the budget refuses (429) is tried again on the
// next pass. DaemonSet pods and mirror (static) pods stay; finished pods are deleted. A Node that
// is unreachable (Ready Unknown) cannot run its pods' shutdown, so pods already being deleted
// there count as gone. One pass per call: the caller repeats until `done` (or its timeout).
import type * as api from '../api/index.js';
import { type KubeClient, KubeApiError, isNotFound, resourcePath, resources } from '../kube/index.js';
import { nodeReadyStatus } from '../kube/readiness.js';

export interface DrainPass {
  /** No pod that must go is left on the Node. */
  done: boolean;
  /** Pods whose eviction a disruption budget refused this pass, with the API server's words. */
  blocked: string[];
  /** Pods evicted or deleted this pass. */
  evicted: string[];
  /** Pods still on the Node that must go (being deleted, or refused). */
  remaining: number;
}

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** Pods kubectl drain leaves alone: DaemonSet pods (their controller would put them back) and mirror pods. */
export function staysOnDrain(pod: api.Pod): boolean {
  if (pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined) return true;
  return (pod.metadata?.ownerReferences ?? []).some((r) => r.controller && r.kind === 'DaemonSet');
}

const isFinished = (pod: api.Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export async function drainPass(client: KubeClient, node: api.Node): Promise<DrainPass> {
  const nodeName = node.metadata.name;
  if (!node.spec?.unschedulable) await client.mergePatch(resources.nodes, nodeName, undefined, { spec: { unschedulable: true } });
  const unreachable = nodeReadyStatus(node) === 'Unknown';
  const pods = ((await client.list(resources.pods, undefined, { fieldSelector: `spec.nodeName=${nodeName}` })).items ?? []);
  const mustGo = pods.filter((p) => !staysOnDrain(p));
  const result: DrainPass = { done: false, blocked: [], evicted: [], remaining: 0 };
  for (const pod of mustGo) {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (pod.metadata.deletionTimestamp) {
      if (!unreachable) result.remaining++;
      continue;
    }
    try {
      if (isFinished(pod)) await client.delete(resources.pods, pod.metadata.name, pod.metadata.namespace);
      else {
        await client.request('POST', resourcePath(resources.pods, pod.metadata.namespace, pod.metadata.name, 'eviction'), {
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace } },
        });
      }
      result.evicted.push(key);
      result.remaining++;
    } catch (e) {
      if (isNotFound(e)) continue;
      if (e instanceof KubeApiError && e.code === 429) {
        const cause = (e.status?.details?.causes ?? []).map((c: { message?: string }) => c.message).join('; ');
        result.blocked.push(`${key}: ${cause || e.message}`);
        result.remaining++;
        continue;
      }
      throw e;
    }
  }
  result.done = result.remaining === 0;
  return result;
}
