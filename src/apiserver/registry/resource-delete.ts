// Deletion, as kube-apiserver's generic store deletes: preconditions (uid, resourceVersion);
// propagation policies turned into the foregroundDeletion and orphan finalizers; an object held
// by finalizers, by its kind's own clean-up (a Namespace terminating) or by a grace period (a Pod,
// graceful-deletion.ts) is marked with deletionTimestamp and kept; otherwise it is removed and
// what it held from its kind's pools freed. Retried when another writer got there first.
import { rfc3339 } from '../../common/time.js';
import { ApiError } from '../errors.js';
import { gracefulStep } from './graceful-deletion.js';
import { strategyFor } from '../kinds/index.js';
import type { Allocations } from '../kinds/strategy.js';
import type { ResourceType } from './resource-type.js';
import { StorageError, type KubeObject, type Storage, type StoredItem } from '../storage/types.js';
import type { ResourceHooks, WriteContext } from './write-context.js';

export type DeleteOptions = { dryRun?: boolean; preconditions?: { uid?: string; resourceVersion?: string }; propagationPolicy?: string; gracePeriodSeconds?: number } & Pick<WriteContext, 'user' | 'viaApi'>;

/** What deletion needs of the object store. */
export interface DeletionTarget {
  readonly store: Storage;
  readonly hooks: readonly ResourceHooks[];
  getItem(type: ResourceType, namespace: string | undefined, name: string): StoredItem;
  present(type: ResourceType, object: KubeObject): KubeObject;
  allocationsOf(type: ResourceType): Allocations | undefined;
  mapStorageError(e: unknown, type: ResourceType, name: string): Error;
  /** The admission webhooks' say on the deletion (writes through the API); throws to refuse. */
  admitDeletion?(type: ResourceType, current: KubeObject, context: WriteContext): Promise<void>;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Deletes an object, or starts its deletion when finalizers hold it. Returns the object. */
export async function deleteObject(target: DeletionTarget, type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<KubeObject> {
  for (let attempt = 0; ; attempt++) {
    const current = target.getItem(type, namespace, name);
    const meta = current.object.metadata;
    for (const hook of target.hooks) hook.beforeDelete?.(type, current.object, { user: options.user });
    if (attempt === 0) await target.admitDeletion?.(type, current.object, { user: options.user, viaApi: options.viaApi, dryRun: options.dryRun });
    if (options.preconditions?.uid && options.preconditions.uid !== meta.uid) {
      throw new ApiError(409, 'Conflict', `Precondition failed: UID in precondition: ${options.preconditions.uid}, UID in object meta: ${meta.uid}`);
    }
    if (options.preconditions?.resourceVersion && options.preconditions.resourceVersion !== String(current.revision)) {
      throw new ApiError(409, 'Conflict', `Precondition failed: ResourceVersion in precondition: ${options.preconditions.resourceVersion}, ResourceVersion in object meta: ${current.revision}`);
    }
    const finalizers: string[] = [...(meta.finalizers ?? [])];
    if (options.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion') && !meta.deletionTimestamp) finalizers.push('foregroundDeletion');
    if (options.propagationPolicy === 'Orphan' && !finalizers.includes('orphan') && !meta.deletionTimestamp) finalizers.push('orphan');
    const strategy = strategyFor(type);
    const step = strategy?.gracePeriod ? gracefulStep(meta, options.gracePeriodSeconds, (asked) => strategy.gracePeriod!(current.object, asked), Date.now()) : undefined;
    const graceful = step?.kind === 'graceful' ? step : undefined;
    // Kept, marked, while a grace period runs or finalizers (or the kind's clean-up) hold it; a pending one stays as it is.
    const held = graceful ? graceful.deletionGracePeriodSeconds > 0 || finalizers.length > 0 : finalizers.length > 0 || strategy?.terminate !== undefined;
    if (options.dryRun || step?.kind === 'pending') return target.present(type, current.object);
    try {
      if (held) {
        if (!graceful && meta.deletionTimestamp && sameJson(finalizers, meta.finalizers ?? [])) return target.present(type, current.object);
        const next: KubeObject = structuredClone(current.object);
        // A first deletion request changes what its controllers should do: a generation goes up (kube's BeforeDelete).
        if (!next.metadata.deletionTimestamp && next.metadata.generation !== undefined && next.metadata.generation > 0) next.metadata.generation += 1;
        const marks = graceful ?? { deletionTimestamp: meta.deletionTimestamp ?? rfc3339(), deletionGracePeriodSeconds: meta.deletionGracePeriodSeconds ?? 0 };
        Object.assign(next.metadata, { deletionTimestamp: marks.deletionTimestamp, deletionGracePeriodSeconds: marks.deletionGracePeriodSeconds, finalizers });
        strategy?.terminate?.(next);
        delete next.metadata.resourceVersion;
        const stored = await target.store.update(current.key, next, { expectedRevision: current.revision });
        for (const hook of target.hooks) hook.afterWrite?.(type, stored.object, current.object, false);
        return target.present(type, stored.object);
      }
      const deleted = await target.store.delete(current.key, { expectedRevision: current.revision });
      target.allocationsOf(type)?.settle(undefined, current.object);
      for (const hook of target.hooks) hook.afterWrite?.(type, deleted.object, current.object, true);
      return target.present(type, deleted.object);
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Conflict' && attempt < 5) continue;
      throw target.mapStorageError(e, type, name);
    }
  }
}
