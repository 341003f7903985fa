// Merging metadata, the same for every kind (CVO resourcemerge EnsureObjectMeta): name and
// namespace set; labels and annotations merged with the manifest's keys winning; owner
// references added or updated by uid (or kind and name), never removed. Everything else in
// metadata (resourceVersion, uid, finalizers, managedFields, …) belongs to the server or others.
import { isSubset } from '../../common/subset.js';
import { isPlainObject, clone, mergeStringMap, NULL_MEANS_UNSET, type Json, type JsonObject, type MergeResult } from './ensure.js';

function sameOwner(a: JsonObject, b: JsonObject): boolean {
  if (a.uid && b.uid) return a.uid === b.uid;
  return a.kind === b.kind && a.name === b.name && String(a.apiVersion ?? '').split('/')[0] === String(b.apiVersion ?? '').split('/')[0];
}

function mergeOwnerReferences(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  const out = Array.isArray(existing) ? [...existing] : [];
  let modified = false;
  for (const ref of Array.isArray(required) ? required : []) {
    if (!isPlainObject(ref)) continue;
    const i = out.findIndex((o) => isPlainObject(o) && sameOwner(o, ref));
    if (i < 0) {
      out.push(clone(ref));
      modified = true;
    } else if (!isSubset(ref, out[i], NULL_MEANS_UNSET)) {
      out[i] = clone(ref);
      modified = true;
    }
  }
  return { value: out, modified };
}

export function ensureObjectMeta(existing: JsonObject | undefined, required: JsonObject): MergeResult {
  const object: JsonObject = { ...(existing ?? {}) };
  let modified = false;
  for (const key of ['name', 'namespace'] as const) {
    if (typeof required[key] === 'string' && required[key] !== '' && object[key] !== required[key]) {
      object[key] = required[key];
      modified = true;
    }
  }
  for (const key of ['labels', 'annotations'] as const) {
    if (!isPlainObject(required[key])) continue;
    const r = mergeStringMap(object[key], required[key]);
    if (r.modified) {
      object[key] = r.value;
      modified = true;
    }
  }
  if (Array.isArray(required.ownerReferences)) {
    const r = mergeOwnerReferences(object.ownerReferences, required.ownerReferences);
    if (r.modified) {
      object.ownerReferences = r.value;
      modified = true;
    }
  }
  return { modified, object };
}
