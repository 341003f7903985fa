// What the workload controllers share in one process: the client, one informer per kind, the
// event recorder and the clock; and resolving an object's controller reference against a cache
// (kube's resolveControllerRef: the name must exist with the same uid).
import type { Clock, EventRecorder, Informer, KubeClient, Obj } from '../../kube/index.js';
import { controllerOf } from '../../kube/index.js';

export interface WorkloadContext {
  client: KubeClient;
  /** One informer per kind; run.ts makes each on first use, so a process watches only what its controllers need. */
  informers: Record<'pods' | 'nodes' | 'replicaSets' | 'deployments' | 'daemonSets' | 'controllerRevisions' | 'jobs' | 'services' | 'endpoints' | 'endpointSlices' | 'namespaces' | 'rootCaConfigMaps' | 'nodeLeases', Informer>;
  events: EventRecorder;
  clock: Clock;
}

/** The object of `kind` in `owners` that controls `object`, if it still exists with that uid. */
export function controllingOwner(object: Obj | undefined, kind: string, owners: Informer): Obj | undefined {
  const ref = object && controllerOf(object);
  if (!ref || ref.kind !== kind) return undefined;
  const owner = owners.get(ref.name, object.metadata.namespace);
  return owner?.metadata?.uid === ref.uid ? owner : undefined;
}

/** namespace/name */
export function keyFor(object: Obj): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}
