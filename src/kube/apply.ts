// Apply helpers: make an object say what a manifest says, touching only the fields the manifest
// sets and writing only when they differ. A field someone else set (a defaulted field, another
// controller's annotation, status) is left alone and does not count as a difference, so two
// controllers sharing an object do not fight, and a steady state makes no writes at all.
import { type KubeClient, type Obj, type ResourceRef, isConflict, isNotFound } from './client.js';

export type ApplyAction = 'created' | 'updated' | 'unchanged';

export interface ApplyResult {
  action: ApplyAction;
  object: Obj;
}

/**
 * True when everything `desired` sets is so in `live`: objects key by key (a null in desired
 * means "absent"), lists item by item with the same length, scalars equal.
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (desired === null) return live === null || live === undefined;
  if (Array.isArray(desired)) {
    return Array.isArray(live) && live.length === desired.length && desired.every((d, i) => isSubset(d, live[i]));
  }
  if (typeof desired === 'object') {
    if (live === null || typeof live !== 'object' || Array.isArray(live)) return false;
    return Object.entries(desired as Obj).every(([k, v]) => isSubset(v, (live as Obj)[k]));
  }
  return desired === live;
}

/** The parts of a manifest an apply writes: metadata labels, annotations and owners, and the body (not status). */
function appliedFields(desired: Obj): Obj {
  const { status: _status, metadata = {}, ...body } = desired;
  const meta: Obj = {};
  for (const key of ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const) if (metadata[key] !== undefined) meta[key] = metadata[key];
  return { ...body, metadata: meta };
}

/**
 * Creates the object if absent, else merge-patches the fields the manifest sets when any differs.
 * `resource` saves a discovery lookup. Conflicts on create (someone created it meanwhile) retry.
 */
export async function applyObject(client: KubeClient, desired: Obj, resource?: ResourceRef): Promise<ApplyResult> {
  const ref = resource ?? (await client.resourceFor(desired.apiVersion, desired.kind));
  const { name, namespace } = desired.metadata ?? {};
  if (!name) throw new Error(`${desired.kind} has no metadata.name`);
  for (let attempt = 0; ; attempt++) {
    const live = await client.read(ref, name, namespace);
    if (!live) {
      try {
        const { status: _status, ...body } = desired;
        return { action: 'created', object: await client.create(ref, body) };
      } catch (e) {
        if (isConflict(e) && attempt < 3) continue;
        throw e;
      }
    }
    const fields = appliedFields(desired);
    if (isSubset(fields, live)) return { action: 'unchanged', object: live };
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
export async function applyStatus(client: KubeClient, resource: ResourceRef, live: Obj, status: Obj): Promise<boolean> {
  if (isSubset(status, live.status ?? {}) && isSubset(live.status ?? {}, status)) return false;
  try {
    await client.mergePatch(resource, live.metadata.name, live.metadata.namespace, { metadata: { resourceVersion: live.metadata.resourceVersion }, status }, 'status');
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
  return true;
}
