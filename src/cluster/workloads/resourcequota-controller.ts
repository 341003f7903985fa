// The resource quota controller, as kube-controller-manager's: it keeps each ResourceQuota's
// status — `hard` as its spec says, `used` counted from the namespace's objects (kube/quota.ts:
// pods not yet finished and what they request and limit, in the quota's scopes; Services and
// their load balancers and node ports; claims and their storage requests, in all and per class;
// object counts) — recounted when the quota changes, when an
// object it counts is created, deleted or changes what it uses (a pod finishing gives its CPU
// back), and every resync period (5 minutes, kube's --resource-quota-sync-period) in case a write
// the API server charged never happened. The informers say when to count; the objects counted are
// listed from the API server (a cache a moment behind would undo what admission just charged).
import type * as api from '../../api/index.js';
import { Controller, isNotFound, type EventType, type ResourceRef } from '../../kube/index.js';
import { sameJson } from '../../kube/canonical.js';
import { podIsLive, quotaApplies, readAmounts, usageOf, usedBy, writeAmounts, type Usage } from '../../kube/quota.js';
import { keyFor, type WorkloadContext } from './context.js';
import { RESOURCE_QUOTAS } from './resources.js';

export interface ResourceQuotaControllerOptions {
  /** Every quota recounted this often (default 5 minutes). */
  resyncPeriodMs?: number;
}

export function resourceQuotaController(ctx: WorkloadContext, options: ResourceQuotaControllerOptions = {}): Controller {
  const { resourceQuotas, pods, services, configMaps, secrets, persistentVolumeClaims } = ctx.informers;
  const controller = new Controller({ name: 'resourcequota-controller', clock: ctx.clock, sync: (key) => sync(key), resyncPeriodMs: options.resyncPeriodMs ?? 5 * 60_000 });
  controller.watch(resourceQuotas);
  const quotasOf = (object: api.KubeObject) => resourceQuotas.list().filter((q) => q.metadata.namespace === object.metadata.namespace).map(keyFor);
  // What changes usage: an object added or deleted; a pod finishing; a Service changing type or ports.
  controller.watch(pods, (pod, type, old) => (type !== 'update' || podIsLive(pod) !== podIsLive(old!) ? quotasOf(pod) : []));
  controller.watch(services, (service, type, old) => (type !== 'update' || !sameJson([service.spec?.type, service.spec?.ports?.length], [old?.spec?.type, old?.spec?.ports?.length]) ? quotasOf(service) : []));
  const onAddOrDelete = (object: api.KubeObject, type: EventType) => (type === 'update' ? [] : quotasOf(object));
  controller.watch(configMaps, onAddOrDelete);
  controller.watch(secrets, onAddOrDelete);
  // A claim's storage request may grow once it is bound.
  controller.watch(persistentVolumeClaims, (claim, type, old) => (type !== 'update' || !sameJson(claim.spec?.resources?.requests, old?.spec?.resources?.requests) ? quotasOf(claim) : []));

  /** The version of a group the API server serves first (core: v1); undefined when it serves none. */
  const versions = new Map<string, string | undefined>();
  async function preferredVersion(group: string): Promise<string | undefined> {
    if (group === '') return 'v1';
    if (!versions.has(group)) {
      try {
        const answer = await ctx.client.request<{ preferredVersion?: { version?: string } }>('GET', `/apis/${group}`);
        versions.set(group, answer.preferredVersion?.version);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        return undefined;
      }
    }
    return versions.get(group);
  }

  /**
   * The objects of a kind in a namespace, listed from the API server rather than read from the
   * informers: a count from a cache a moment behind would undo what admission just charged.
   */
  async function objectsOf(group: string, resource: string, namespace: string): Promise<api.KubeObject[]> {
    const version = await preferredVersion(group);
    if (!version) return [];
    try {
      const ref: ResourceRef = { group, version, resource, namespaced: true };
      return (await ctx.client.list(ref, namespace)).items as api.KubeObject[];
    } catch (e) {
      if (isNotFound(e)) return [];
      throw e;
    }
  }

  async function sync(key: string): Promise<void> {
    const quota = resourceQuotas.getByKey(key);
    if (!quota || quota.metadata.deletionTimestamp) return;
    const namespace = quota.metadata.namespace ?? '';
    const hard = readAmounts(quota.spec?.hard);
    const used: Usage = new Map([...hard.keys()].map((name) => [name, 0n]));
    // The kinds whose objects the limited resources count: pods and Services for theirs, each
    // `count/…` or plain object count for its own kind.
    const kinds = new Map<string, { group: string; resource: string }>();
    for (const name of hard.keys()) {
      const kind = usedBy(name);
      kinds.set(`${kind.group}/${kind.resource}`, kind);
    }
    for (const { group, resource } of kinds.values()) {
      for (const object of await objectsOf(group, resource, namespace)) {
        if (!quotaApplies(quota, hard.keys(), group, resource, object)) continue;
        for (const [name, amount] of usageOf(group, resource, object)) {
          if (used.has(name)) used.set(name, used.get(name)! + amount);
        }
      }
    }
    const status = { hard: { ...(quota.spec?.hard ?? {}) }, used: writeAmounts(used) };
    if (sameJson(status, quota.status ?? {})) return;
    await ctx.client.update(RESOURCE_QUOTAS, { ...quota, status }, 'status');
  }

  return controller;
}
