// What the Cluster API controllers of one process share: the API client, the manager's shared
// informers, an event recorder per controller, the clock every timeout is measured on, and the
// resolution of Cluster API's contract references (an apiGroup and a kind, no version) to the
// resource the server serves — as Cluster API does, by the version its CRD names for the contract.
import type * as api from '../api/index.js';
import { EventRecorder, type Clock, type Informer, type KeyMapper, type InformerOptions, type KubeClient, type Manager, type ResourceRef, isNotFound, realClock, resources } from '../kube/index.js';
import { CLUSTERS, LOCAL_CLUSTERS, LOCAL_MACHINES, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_HEALTH_CHECKS, MACHINE_SETS } from './api.js';

/** A discovery document of one API group (metav1.APIGroup), as far as it is read here. */
interface APIGroup {
  versions?: { groupVersion: string; version: string }[];
  preferredVersion?: { groupVersion: string; version: string };
}

/** Cluster API's reference to a provider object: group and kind, the version found at run time. */
export interface ContractRef {
  apiGroup: string;
  kind: string;
  name: string;
}

export interface CapiContext {
  client: KubeClient;
  informer<T extends api.KubeObject>(resource: ResourceRef<T>, options?: InformerOptions): Informer<T>;
  events(component: string): EventRecorder;
  clock: Clock;
  /**
   * The resource serving a contract reference's kind (throws when no CRD serves it). `T` is the
   * contract the caller reads its objects by (api.ts: InfraCluster, InfraMachine, …): the kind is
   * known only at run time, so its objects are typed by what the contract promises.
   */
  resolve<T extends api.KubeObject = api.Unstructured>(ref: Pick<ContractRef, 'apiGroup' | 'kind'>): Promise<ResourceRef<T>>;
}

/** The contract label a provider's CRD carries: `cluster.x-k8s.io/v1beta2: <versions>`. */
const CONTRACT_LABEL = 'cluster.x-k8s.io/v1beta2';

export function capiContext(manager: Manager, clock: Clock = realClock): CapiContext {
  const client = manager.client;
  const resolved = new Map<string, ResourceRef<unknown>>();
  return {
    client,
    clock,
    informer: (resource, options) => manager.informers.forResource(resource, options),
    events: (component) => new EventRecorder(client, { component, clock }),
    async resolve<T extends api.KubeObject>(ref: Pick<ContractRef, 'apiGroup' | 'kind'>): Promise<ResourceRef<T>> {
      const key = `${ref.kind}.${ref.apiGroup}`;
      const known = resolved.get(key);
      if (known) return known as ResourceRef<T>;
      const groupInfo = await client.request<APIGroup>('GET', `/apis/${encodeURIComponent(ref.apiGroup)}`).catch((e) => {
        if (isNotFound(e)) throw new Error(`no API group ${ref.apiGroup} is served: is its provider installed?`);
        throw e;
      });
      const served: string[] = (groupInfo.versions ?? []).map((v) => v.version);
      // The CRD's contract label names the versions that speak this contract; the last one wins.
      const crds = await client.list(resources.customResourceDefinitions, undefined, {});
      const crd = (crds.items ?? []).find((c) => c.spec?.group === ref.apiGroup && c.spec?.names?.kind === ref.kind);
      const contract = String(crd?.metadata?.labels?.[CONTRACT_LABEL] ?? '').split('_').filter((v) => served.includes(v));
      const version = contract.at(-1) ?? groupInfo.preferredVersion?.version ?? served[0];
      const resource = await client.resourceFor(`${ref.apiGroup}/${version}`, ref.kind);
      resolved.set(key, resource);
      return resource as unknown as ResourceRef<T>;
    },
  };
}

/**
 * Whether Cluster API's controllers leave an object alone: it carries the annotation
 * cluster.x-k8s.io/paused, or its Cluster (spec.clusterName, else the cluster-name label) has
 * spec.paused — what `bosun cluster move` sets while it copies a cluster to another manager.
 */
/** The Cluster an object belongs to: its spec.clusterName, else its cluster-name label. */
function clusterNameOf(o: { metadata: { labels?: Record<string, string> }; spec?: object }): string | undefined {
  const spec = o.spec as { clusterName?: unknown } | undefined;
  return (typeof spec?.clusterName === 'string' ? spec.clusterName : undefined) ?? o.metadata.labels?.['cluster.x-k8s.io/cluster-name'];
}

export function pausedCheck(ctx: CapiContext): (o: { metadata: { namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: object }) => boolean {
  const clusters = ctx.informer(CLUSTERS);
  return (o) => {
    if (o.metadata.annotations?.['cluster.x-k8s.io/paused'] !== undefined) return true;
    const name = clusterNameOf(o);
    return Boolean(name && clusters.get(name, o.metadata.namespace)?.spec?.paused);
  };
}

/**
 * For a controller of `objects`: when a Cluster is unpaused, the keys of its objects, so that what
 * was skipped while it was paused is reconciled at once (watch the Clusters with it).
 */
export function onUnpause<T extends api.KubeObject>(objects: Informer<T>): KeyMapper<api.Cluster> {
  return (cluster, _type, old) => {
    if (!old?.spec?.paused || cluster.spec?.paused) return undefined;
    return objects.list()
      .filter((o) => o.metadata.namespace === cluster.metadata.namespace && clusterNameOf(o as { metadata: api.ObjectMeta; spec?: object }) === cluster.metadata.name)
      .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
  };
}

/** The informers the controllers use, by name. */
export const informers = (ctx: CapiContext) => ({
  clusters: () => ctx.informer(CLUSTERS),
  machines: () => ctx.informer(MACHINES),
  machineSets: () => ctx.informer(MACHINE_SETS),
  machineDeployments: () => ctx.informer(MACHINE_DEPLOYMENTS),
  machineHealthChecks: () => ctx.informer(MACHINE_HEALTH_CHECKS),
  localClusters: () => ctx.informer(LOCAL_CLUSTERS),
  localMachines: () => ctx.informer(LOCAL_MACHINES),
  nodes: () => ctx.informer(resources.nodes),
});
