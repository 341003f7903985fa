// ResourceQuota admission, as kube-apiserver's plugin: a write through the API in a namespace
// with quotas is charged to each quota it falls under (kube/quota.ts says what it uses and which
// quotas apply), after the other admission steps and before it is stored. It is refused, 403, when
// it would take a quota past its limit ("exceeded quota: compute, requested: pods=1, used:
// pods=2, limited: pods=2"), when a quota on CPU or memory finds a container that does not say the
// amount ("failed quota: …: must specify …"), or when a quota's usage has not been counted yet
// ("status unknown for quota"). What it admits is added to each quota's status.used at once, with
// the quota's resourceVersion as the precondition (two writes at once cannot both take the last
// unit; a conflict is tried again on the fresh quota); the quota controller recounts from the
// objects themselves, so what was charged for a write that then failed is given back by its next
// pass. An update is charged only what it adds. Without a quota in the namespace this is one
// cached list read.
import type * as api from '../../api/index.js';
import { concerns, podConstraintProblem, printAmounts, quotaApplies, readAmounts, usageOf, writeAmounts, type Usage } from '../../kube/quota.js';
import { errors } from '../errors.js';
import { resourcequotas } from '../kinds/resourcequotas.js';
import { storageKey, storagePrefix, type ResourceType } from '../registry/resource-type.js';
import { StorageError, type KubeObject, type Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

const QUOTAS = resourcequotas.type;
const ATTEMPTS = 5;

export class QuotaAdmission implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  /**
   * Charges `object` (replacing `previous`, on an update) to the quotas of its namespace, or
   * refuses it; `dryRun` checks without charging.
   */
  async charge(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, dryRun: boolean): Promise<void> {
    const namespace = object.metadata.namespace;
    if (!type.namespaced || !namespace) return;
    const forbidden = (reason: string) => errors.forbiddenObject(type.resource, type.group, object.metadata.name, reason);
    /** The quotas already charged, when a conflict on another sends the loop round again. */
    const charged = new Set<string>();
    for (let attempt = 1; ; attempt++) {
      const quotas = this.storage.list(`${storagePrefix(QUOTAS)}${namespace}/`).items.filter((i) => !charged.has(i.object.metadata.name));
      if (quotas.length === 0) return;
      const usage = usageOf(type.group, type.resource, object);
      const before = previous ? usageOf(type.group, type.resource, previous) : new Map<string, bigint>();
      const charges: { item: (typeof quotas)[number]; used: Usage }[] = [];
      for (const item of quotas) {
        const quota = item.object as api.ResourceQuota;
        const hard = readAmounts(quota.status?.hard);
        if (!quotaApplies(quota, hard.keys(), type.group, type.resource, object)) continue;
        const limited = [...hard.keys()].filter((name) => concerns(type.group, type.resource, name));
        if (type.group === '' && type.resource === 'pods') {
          const problem = podConstraintProblem(object as api.Pod, limited);
          if (problem) throw forbidden(`failed quota: ${quota.metadata.name}: ${problem}`);
        }
        const used = readAmounts(quota.status?.used);
        const unknown = limited.filter((name) => !used.has(name));
        if (unknown.length > 0) throw forbidden(`status unknown for quota: ${quota.metadata.name}, resources: ${unknown.sort().join(',')}`);
        // What this write adds of each limited resource (an update: beyond what it used before,
        // when the quota counted it before too).
        const countedBefore = previous !== undefined && quotaApplies(quota, hard.keys(), type.group, type.resource, previous);
        const requested: Usage = new Map();
        for (const name of limited) {
          const delta = (usage.get(name) ?? 0n) - (countedBefore ? before.get(name) ?? 0n : 0n);
          if (delta > 0n) requested.set(name, delta);
        }
        if (requested.size === 0) continue;
        const exceeded = [...requested.keys()].filter((name) => used.get(name)! + requested.get(name)! > hard.get(name)!);
        if (exceeded.length > 0) {
          const only = (amounts: Usage) => new Map(exceeded.map((name) => [name, amounts.get(name) ?? 0n]));
          throw forbidden(`exceeded quota: ${quota.metadata.name}, requested: ${printAmounts(only(requested))}, used: ${printAmounts(only(used))}, limited: ${printAmounts(only(hard))}`);
        }
        const next = new Map(used);
        for (const [name, delta] of requested) next.set(name, next.get(name)! + delta);
        charges.push({ item, used: next });
      }
      if (charges.length === 0 || dryRun) return;
      try {
        for (const { item, used } of charges) {
          const quota = structuredClone(item.object) as api.ResourceQuota;
          quota.status = { ...quota.status, used: { ...quota.status?.used, ...writeAmounts(used) } };
          delete quota.metadata.resourceVersion;
          await this.storage.update(storageKey(QUOTAS, namespace, quota.metadata.name), quota as KubeObject, { expectedRevision: item.revision });
          charged.add(quota.metadata.name);
        }
        return;
      } catch (e) {
        // Another write charged the quota first: count again against what it left.
        if (!(e instanceof StorageError && e.code === 'Conflict') || attempt >= ATTEMPTS) throw e;
      }
    }
  }
}
