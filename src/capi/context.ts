// What the Cluster API controllers of one process share: the API client, the manager's shared
// informers, an event recorder per controller, the clock every timeout is measured on, and the
// resolution of Cluster API's contract references (an apiGroup and a kind, no version) to the
// resource the server serves — as Cluster API does, by the version its CRD names for the contract.
import { EventRecorder, type Clock, type Informer, type InformerOptions, type KubeClient, type Manager, type Obj, type ResourceRef, isNotFound, realClock, resources } from '../kube/index.js';
import { CLUSTERS, LOCAL_CLUSTERS, LOCAL_MACHINES, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_HEALTH_CHECKS, MACHINE_SETS } from './api.js';

/** Cluster API's reference to a provider object: group and kind, the version found at run time. */
export interface ContractRef {
  apiGroup: string;
  kind: string;
  name: string;
}

export interface CapiContext {
  client: KubeClient;
  informer(resource: ResourceRef, options?: InformerOptions): Informer;
  events(component: string): EventRecorder;
  clock: Clock;
  /** The resource serving a contract reference's kind (throws when no CRD serves it). */
  resolve(ref: Pick<ContractRef, 'apiGroup' | 'kind'>): Promise<ResourceRef>;
}

/** The contract label a provider's CRD carries: `cluster.x-k8s.io/v1beta2: <versions>`. */
const CONTRACT_LABEL = 'cluster.x-k8s.io/v1beta2';

export function capiContext(manager: Manager, clock: Clock = realClock): CapiContext {
  const client = manager.client;
  const resolved = new Map<string, ResourceRef>();
  return {
    client,
    clock,
    informer: (resource, options) => manager.informers.forResource(resource, options),
    events: (component) => new EventRecorder(client, { component, clock }),
    async resolve(ref) {
      const key = `${ref.kind}.${ref.apiGroup}`;
      const known = resolved.get(key);
      if (known) return known;
      const groupInfo = await client.request<Obj>('GET', `/apis/${encodeURIComponent(ref.apiGroup)}`).catch((e) => {
        if (isNotFound(e)) throw new Error(`no API group ${ref.apiGroup} is served: is its provider installed?`);
        throw e;
      });
      const served: string[] = (groupInfo.versions ?? []).map((v: Obj) => v.version);
      // The CRD's contract label names the versions that speak this contract; the last one wins.
      const crds = await client.list(resources.customResourceDefinitions, undefined, {});
      const crd = (crds.items ?? []).find((c: Obj) => c.spec?.group === ref.apiGroup && c.spec?.names?.kind === ref.kind);
      const contract = String(crd?.metadata?.labels?.[CONTRACT_LABEL] ?? '').split('_').filter((v) => served.includes(v));
      const version = contract.at(-1) ?? groupInfo.preferredVersion?.version ?? served[0];
      const resource = await client.resourceFor(`${ref.apiGroup}/${version}`, ref.kind);
      resolved.set(key, resource);
      return resource;
    },
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
