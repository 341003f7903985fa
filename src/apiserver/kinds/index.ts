// The registry of built-in kinds: every kind's strategy, in the order discovery lists them, found
// by group and resource. registry/registry.ts serves their types; registry/resources.ts and printing/tables.ts apply their
// defaults, validation, generation rules and printers.
import type { Printer } from '../printing/columns.js';
import type { ResourceType } from '../registry/resource-type.js';
import { apiservices } from './apiservices.js';
import { certificatesigningrequests } from './certificatesigningrequests.js';
import { configmaps } from './configmaps.js';
import { controllerrevisions } from './controllerrevisions.js';
import { cronjobs } from './cronjobs.js';
import { customresourcedefinitions } from './customresourcedefinitions.js';
import { daemonsets } from './daemonsets.js';
import { deployments } from './deployments.js';
import { endpoints } from './endpoints.js';
import { endpointslices } from './endpointslices.js';
import { coreEvents, events } from './events.js';
import { horizontalpodautoscalers } from './horizontalpodautoscalers.js';
import { jobs } from './jobs.js';
import { leases } from './leases.js';
import { limitranges } from './limitranges.js';
import { namespaces } from './namespaces.js';
import { nodes } from './nodes.js';
import { poddisruptionbudgets } from './poddisruptionbudgets.js';
import { priorityclasses } from './priorityclasses.js';
import { pods } from './pods.js';
import { persistentvolumeclaims } from './persistentvolumeclaims.js';
import { persistentvolumes } from './persistentvolumes.js';
import { clusterrolebindings, clusterroles, rolebindings, roles } from './rbac.js';
import { replicasets } from './replicasets.js';
import { resourcequotas } from './resourcequotas.js';
import { secrets } from './secrets.js';
import { serviceaccounts } from './serviceaccounts.js';
import { services } from './services.js';
import { statefulsets } from './statefulsets.js';
import { storageclasses } from './storageclasses.js';
import { mutatingwebhookconfigurations, validatingwebhookconfigurations } from './webhookconfigurations.js';
import type { Storage } from '../storage/types.js';
import { errors } from '../errors.js';
import { customResourceStrategy } from '../crds/custom-resources.js';
import type { Allocations, AllocationSettings, KindStrategy } from './strategy.js';
import type * as api from '../../api/index.js';

/**
 * A kind's strategy as the registry holds it, over objects of any kind: the registry calls it only
 * with objects of its own kind (found by group and resource), so its parameters hold; what its
 * subresource updates return is stored as every object is.
 */
const registered = (strategy: Pick<KindStrategy, 'type'>): KindStrategy => strategy as KindStrategy;

export const STRATEGIES: KindStrategy[] = [
  namespaces, nodes, pods, services, endpoints, configmaps, secrets, serviceaccounts, resourcequotas, limitranges, persistentvolumes, persistentvolumeclaims, coreEvents, events, leases,
  deployments, replicasets, daemonsets, statefulsets, controllerrevisions, jobs, cronjobs, horizontalpodautoscalers, poddisruptionbudgets, priorityclasses, storageclasses, customresourcedefinitions,
  roles, rolebindings, clusterroles, clusterrolebindings, endpointslices, certificatesigningrequests, apiservices,
  mutatingwebhookconfigurations, validatingwebhookconfigurations,
].map(registered);

const byGroupResource = new Map(STRATEGIES.map((s) => [`${s.type.group}/${s.type.resource}`, s]));

/** The strategies of the custom resource types served now, made as they are first needed. */
const customStrategies = new WeakMap<ResourceType, KindStrategy>();

/** The strategy of a type: a built-in's by group and resource, a custom resource's from its CRD's facts. */
export function strategyFor(type: Pick<ResourceType, 'group' | 'resource' | 'builtin'> | ResourceType): KindStrategy | undefined {
  if (type.builtin) return byGroupResource.get(`${type.group}/${type.resource}`);
  if (!('custom' in type) || !type.custom) return undefined;
  let strategy = customStrategies.get(type);
  if (!strategy) customStrategies.set(type, (strategy = customResourceStrategy(type)));
  return strategy;
}

/** The pools of every kind that allocates (Services), over one storage, looked up by type. */
export function kindAllocations(storage: Storage, settings: AllocationSettings): (type: ResourceType) => Allocations | undefined {
  const pools = new Map(STRATEGIES.flatMap((s) => (s.allocations ? [[s, s.allocations(storage, settings)] as const] : [])));
  return (type) => {
    const strategy = strategyFor(type);
    return strategy && pools.get(strategy);
  };
}

/** Refuses, with kube's 403, the deletion of an object its kind keeps (an immortal namespace, a system PriorityClass). */
export function admitDelete(type: ResourceType, name: string): void {
  const reason = strategyFor(type)?.undeletable?.(name);
  if (reason) throw errors.forbiddenObject(type.resource, type.group, name, reason);
}

/** Whether objects of a type carry metadata.generation: those whose strategy has a generation rule (every custom resource's has). */
export function tracksGeneration(type: ResourceType): boolean {
  return strategyFor(type)?.generation !== undefined;
}

/** Whether an update bumps the generation, by the kind's rule. */
export function generationChanged(type: ResourceType, next: api.Unstructured, previous: api.Unstructured): boolean {
  return strategyFor(type)?.generation?.(next, previous) ?? false;
}

/** The strategy of a built-in object, by its apiVersion's group and its kind. */
export function strategyOf(object: { apiVersion?: unknown; kind?: unknown }): KindStrategy | undefined {
  const apiVersion = String(object.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return STRATEGIES.find((s) => s.type.group === group && s.type.kind === object.kind);
}

/** The printer of a built-in resource by its plural (core's first where two groups share one, as Events do). */
export function printerFor(resource: string): Printer | undefined {
  return STRATEGIES.find((s) => s.type.resource === resource && s.printer)?.printer;
}
