// Creating and deleting a controller's pods as kube's controllers do: creations in slow-start
// batches (1, 2, 4, … so that a quota or admission failure costs one request, not hundreds),
// deletions in parallel with a uid precondition; each outcome recorded as an Event on the owner
// and reported to the expectations (a request that failed will never be observed, so it is
// counted as observed at once).
import type * as api from '../../api/index.js';
import { isNotFound } from '../../kube/index.js';
import type { WorkloadContext } from './context.js';
import type { Expectations } from './expectations.js';
import { keyFor } from './context.js';
import { PODS } from './resources.js';

/** At most this many pods per sync (kube's burstReplicas). */
export const BURST_REPLICAS = 500;

/**
 * Creates the pods `make` returns for 0…count-1 in slow-start batches; stops after a batch with a
 * failure. Returns the first error.
 */
export async function createPods(ctx: WorkloadContext, owner: api.KubeObject, count: number, make: (index: number) => api.Pod, expectations: Expectations): Promise<Error | undefined> {
  const key = keyFor(owner);
  let created = 0;
  let firstError: Error | undefined;
  for (let batch = 1; created < count && !firstError; batch *= 2) {
    const size = Math.min(batch, count - created);
    const indexes = Array.from({ length: size }, (_, i) => created + i);
    const results = await Promise.allSettled(indexes.map((i) => ctx.client.create(PODS, make(i))));
    for (const result of results) {
      if (result.status === 'fulfilled') {
        void ctx.events.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${result.value.metadata.name}`);
      } else {
        const error = result.reason as Error;
        firstError ??= error;
        expectations.creationObserved(key);
        void ctx.events.event(owner, 'Warning', 'FailedCreate', `Error creating: ${error.message}`);
      }
    }
    created += size;
  }
  // Pods never asked for will never be observed either.
  for (let i = created; i < count; i++) expectations.creationObserved(key);
  return firstError;
}

/** Deletes `pods` in parallel. Returns the first error (a pod already gone is no error). */
export async function deletePods(ctx: WorkloadContext, owner: api.KubeObject, pods: api.Pod[], expectations: Expectations): Promise<Error | undefined> {
  const key = keyFor(owner);
  let firstError: Error | undefined;
  await Promise.all(
    pods.map(async (pod) => {
      try {
        await ctx.client.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? '')}/pods/${encodeURIComponent(pod.metadata.name)}`, {
          body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: pod.metadata.uid } },
        });
        void ctx.events.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
      } catch (e) {
        expectations.deletionObserved(key, keyFor(pod));
        if (isNotFound(e)) return;
        firstError ??= e as Error;
        void ctx.events.event(owner, 'Warning', 'FailedDelete', `Error deleting: ${(e as Error).message}`);
      }
    }),
  );
  return firstError;
}

/**
 * Feeds the pod informer's events into a controller's expectations: a pod the owner controls
 * appearing is a creation observed; one disappearing or being marked for deletion is a deletion
 * observed.
 */
export function observePods(ctx: WorkloadContext, ownerKind: string, expectations: Expectations): void {
  const ownerKey = (pod: api.Pod) => {
    const ref = (pod.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
    return ref?.kind === ownerKind ? `${pod.metadata.namespace}/${ref.name}` : undefined;
  };
  ctx.informers.pods.on((type, pod, old) => {
    const owner = ownerKey(pod);
    if (!owner) return;
    if (type === 'add') {
      if (pod.metadata.deletionTimestamp) expectations.deletionObserved(owner, keyFor(pod));
      else expectations.creationObserved(owner);
    } else if (type === 'delete' || (pod.metadata.deletionTimestamp && !old?.metadata?.deletionTimestamp)) {
      expectations.deletionObserved(owner, keyFor(pod));
    }
  });
}
