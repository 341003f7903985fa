// What the workload controllers share in one process: the client, one informer per kind, the
// event recorder and the clock; and resolving an object's controller reference against a cache
// (kube's resolveControllerRef: the name must exist with the same uid).
import type * as api from '../../api/index.js';
import type { Clock, EventRecorder, Informer, KubeClient } from '../../kube/index.js';
import { controllerOf } from '../../kube/index.js';

/** The shared informers of the workload controllers, one per kind. */
export interface WorkloadInformers {
  pods: Informer<api.Pod>;
  nodes: Informer<api.Node>;
  replicaSets: Informer<api.ReplicaSet>;
  deployments: Informer<api.Deployment>;
  daemonSets: Informer<api.DaemonSet>;
  statefulSets: Informer<api.StatefulSet>;
  controllerRevisions: Informer<api.ControllerRevision>;
  jobs: Informer<api.Job>;
  cronJobs: Informer<api.CronJob>;
  horizontalPodAutoscalers: Informer<api.HorizontalPodAutoscaler>;
  resourceQuotas: Informer<api.ResourceQuota>;
  services: Informer<api.Service>;
  endpoints: Informer<api.Endpoints>;
  endpointSlices: Informer<api.EndpointSlice>;
  namespaces: Informer<api.Namespace>;
  /** The kube-root-ca.crt ConfigMaps only. */
  rootCaConfigMaps: Informer<api.ConfigMap>;
  /** The Leases in kube-node-lease. */
  nodeLeases: Informer<api.Lease>;
  /** Every Secret and every ConfigMap (the service CA's). */
  secrets: Informer<api.Secret>;
  configMaps: Informer<api.ConfigMap>;
  /** Storage: claims, volumes and classes (the PV controller, the quota controller). */
  persistentVolumeClaims: Informer<api.PersistentVolumeClaim>;
  persistentVolumes: Informer<api.PersistentVolume>;
  storageClasses: Informer<api.StorageClass>;
  /** The admission webhook configurations (the service CA injects their caBundle). */
  mutatingWebhookConfigurations: Informer<api.MutatingWebhookConfiguration>;
  validatingWebhookConfigurations: Informer<api.ValidatingWebhookConfiguration>;
}

export interface WorkloadContext {
  client: KubeClient;
  /** One informer per kind; run.ts makes each on first use, so a process watches only what its controllers need. */
  informers: WorkloadInformers;
  events: EventRecorder;
  clock: Clock;
}

/** The object of `kind` in `owners` that controls `object`, if it still exists with that uid. */
export function controllingOwner<T extends api.KubeObject>(object: api.KubeObject | undefined, kind: string, owners: Informer<T>): T | undefined {
  const ref = object && controllerOf(object);
  if (!ref || ref.kind !== kind) return undefined;
  const owner = owners.get(ref.name, object.metadata.namespace);
  return owner?.metadata?.uid === ref.uid ? owner : undefined;
}

/** namespace/name */
export function keyFor(object: api.KubeObject): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}
