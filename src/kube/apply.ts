// Apply helpers: make an object say what a manifest says, touching only the fields the manifest
// sets and writing only when they differ. A field someone else set (a defaulted field, another
// controller's annotation, status) is left alone and does not count as a difference, so two
// controllers sharing an object do not fight, and a steady state makes no writes at all.
import { isSubset } from '../common/subset.js';
import { type KubeClient, type Patch, type ResourceRef, isConflict, isNotFound } from './client.js';
import type * as api from '../api/index.js';

/** A null in a manifest here means the field is to be absent: the merge patch deletes it. */
const NULL_MEANS_ABSENT = { nullMeans: 'absent' } as const;

export type ApplyAction = 'created' | 'updated' | 'unchanged';

export interface ApplyResult<T extends api.KubeObject = api.Unstructured> {
  action: ApplyAction;
  object: T;
}

/** The parts of a manifest an apply writes: metadata labels, annotations and owners, and the body (not status). */
function appliedFields(desired: api.KubeObject): Patch & { metadata: Partial<api.ObjectMeta> } {
  const { status: _status, metadata, ...body } = desired as api.KubeObject & { status?: unknown };
  const meta: Partial<api.ObjectMeta> = {};
  for (const key of ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const) if (metadata?.[key] !== undefined) Object.assign(meta, { [key]: metadata[key] });
  return { ...body, metadata: meta };
}

/**
 * Creates the object if absent, else merge-patches the fields the manifest sets when any differs.
 * `resource` saves a discovery lookup. Conflicts on create (someone created it meanwhile) retry.
 */
export async function applyObject<T extends api.KubeObject = api.Unstructured>(client: KubeClient, desired: NoInfer<T>, resource?: ResourceRef<T>): Promise<ApplyResult<T>> {
  const ref = resource ?? ((await client.resourceFor(String(desired.apiVersion), String(desired.kind))) as unknown as ResourceRef<T>);
  const { name, namespace } = desired.metadata ?? {};
  if (!name) throw new Error(`${desired.kind} has no metadata.name`);
  for (let attempt = 0; ; attempt++) {
    const live = await client.read(ref, name, namespace);
    if (!live) {
      try {
        const { status: _status, ...body } = desired as T & { status?: unknown };
        return { action: 'created', object: await client.create(ref, body as T) };
      } catch (e) {
        if (isConflict(e) && attempt < 3) continue;
        throw e;
      }
    }
    const fields = appliedFields(desired);
    if (isSubset(fields, live, NULL_MEANS_ABSENT)) return { action: 'unchanged', object: live };
    const patch = { ...fields, metadata: { ...fields.metadata, resourceVersion: live.metadata?.resourceVersion } };
    try {
      return { action: 'updated', object: await client.mergePatch(ref, name, namespace, patch) };
    } catch (e) {
      if (isConflict(e) && attempt < 3) continue;
      throw e;
    }
  }
}

/** Writes `status` to the status subresource when it differs from the object's; returns whether it wrote. */
export async function applyStatus<T extends api.KubeObject & { status?: object }>(client: KubeClient, resource: ResourceRef<T>, live: T, status: NonNullable<T['status']>): Promise<boolean> {
  if (isSubset(status, live.status ?? {}, NULL_MEANS_ABSENT) && isSubset(live.status ?? {}, status, NULL_MEANS_ABSENT)) return false;
  try {
    await client.mergePatch(resource, live.metadata.name, live.metadata.namespace, { metadata: { resourceVersion: live.metadata.resourceVersion }, status: status as Patch }, 'status');
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
  return true;
}
