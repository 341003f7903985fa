// Server-side apply, after structured-merge-diff as kube-apiserver runs it: an Apply merges the
// applied fields into the live object, reports conflicts with other managers unless forced, and
// removes fields its manager applied before and no longer applies (when nobody else owns them).
// Field sets and list types are in field-sets.ts, managedFields and the Update bookkeeping of
// ordinary writes in managed-fields.ts.
//
// apply/ holds how objects change by patch: JSON, merge and strategic merge patches (patch.ts),
// server-side apply (this file), managedFields (managed-fields.ts) and field sets (field-sets.ts).
import { rfc3339 } from '../../common/time.js';
import {
  builtinListTypes, decodeFieldSet, encodeFieldSet, fieldSetOf, findItem, isObject, itemKey, removeAt, sortedJson, valueAt,
  type FieldScope, type Json, type JsonObject, type ListTypes, type ObjectData,
} from './field-sets.js';
import { managedEntries, recordUpdate, sameEntry, type ManagedFieldsEntry } from './managed-fields.js';

// The names this module has always exported, for the modules and tests that import them from here.
export { builtinListTypes, crdListTypes, decodeFieldSet, encodeFieldSet, fieldSetOf } from './field-sets.js';
export type { FieldScope, FieldSet, ListType, ListTypes, ObjectData } from './field-sets.js';
export { managerFromUserAgent, recordUpdate } from './managed-fields.js';
export type { ManagedFieldsEntry } from './managed-fields.js';

/** Merges applied into live: maps field by field, keyed and set lists item by item, everything else replaced. */
function merge(live: Json | undefined, applied: Json, names: string[], listTypes: ListTypes): Json {
  if (isObject(applied) && isObject(live)) {
    const out: JsonObject = { ...live };
    for (const [k, v] of Object.entries(applied)) out[k] = merge(live[k], v, [...names, k], listTypes);
    return out;
  }
  if (Array.isArray(applied) && Array.isArray(live) && names.length > 0) {
    const lt = listTypes(names);
    if (lt.type === 'atomic') return structuredClone(applied);
    const out = [...live];
    for (const item of applied) {
      const el = lt.type === 'map' ? itemKey(item, lt.keys) : `v:${sortedJson(item)}`;
      const i = findItem(out, el);
      if (i < 0) out.push(structuredClone(item));
      else out[i] = merge(out[i], item, names, listTypes);
    }
    return out;
  }
  return structuredClone(applied);
}

export interface ApplyConflict {
  /** The other manager, printed as kube does: `"name"`, or `"name" using apps/v1` for an Update. */
  manager: string;
  /** The field, e.g. `.spec.replicas`, `.spec.template.spec.containers[name="web"].image`. */
  field: string;
}

/** A fieldsV1 path printed as kube prints it in conflicts. */
export function pathString(path: string[]): string {
  return path.map((el) => {
    if (el.startsWith('f:')) return `.${el.slice(2)}`;
    if (el.startsWith('k:')) {
      const key = JSON.parse(el.slice(2)) as JsonObject;
      return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
    }
    if (el.startsWith('v:')) return `[=${el.slice(2)}]`;
    return `[${el.slice(2)}]`;
  }).join('');
}

// kube-apiserver prints the manager's identifier, which leaves the time out.
function printManager(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion}`;
  return s;
}

/** The 409 message kube-apiserver sends for apply conflicts. */
export function conflictMessage(conflicts: ApplyConflict[]): string {
  if (conflicts.length === 1) return `Apply failed with 1 conflict: conflict with ${conflicts[0].manager}: ${conflicts[0].field}`;
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
  const lines: string[] = [];
  for (const m of [...byManager.keys()].sort()) lines.push(`conflicts with ${m}:`, ...byManager.get(m)!.map((f) => `- ${f}`));
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** The 409 `Status` for apply conflicts, with one FieldManagerConflict cause per field. */
export function conflictStatus(conflicts: ApplyConflict[]): JsonObject {
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: conflictMessage(conflicts), reason: 'Conflict',
    details: { causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.manager}`, field: c.field })) },
    code: 409,
  };
}

export interface ApplyOptions {
  manager: string;
  force?: boolean;
  listTypes?: ListTypes;
  now?: Date;
  subresource?: string;
}

export type ApplyResult =
  | { ok: true; object: ObjectData; managedFields: ManagedFieldsEntry[] }
  | { ok: false; conflicts: ApplyConflict[]; status: JsonObject };

/** The time of a rewritten entry: kept when its fields did not change (so that a no-op write stays one). */
function entryTime(previous: ManagedFieldsEntry | undefined, apiVersion: string, fields: JsonObject, now: Date): string {
  if (previous?.time && previous.apiVersion === apiVersion && sortedJson(previous.fieldsV1) === sortedJson(fields)) return previous.time;
  return rfc3339(now);
}

/** The manager kube-apiserver gives the fields of an object that has no managedFields yet, on its first apply. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';

/**
 * Applies `applied` (the parsed apply-patch body) over `live` (undefined when the object does
 * not exist yet) as field manager `options.manager`. The result carries metadata.managedFields;
 * entries keep their order, and an entry whose fields did not change keeps its time.
 */
export function serverSideApply(liveData: ObjectData | undefined, appliedData: ObjectData, options: ApplyOptions): ApplyResult {
  const live = liveData as JsonObject | undefined;
  const applied = appliedData as JsonObject;
  const scope: FieldScope = options.subresource === 'status' ? 'status' : 'main';
  const listTypes = options.listTypes ?? builtinListTypes;
  const now = options.now ?? new Date();
  const apiVersion = typeof applied.apiVersion === 'string' ? applied.apiVersion : '';
  let entries = managedEntries(live);
  if (live && entries.length === 0) {
    entries = recordUpdate(undefined, live, { manager: BEFORE_FIRST_APPLY, apiVersion, listTypes, now, subresource: options.subresource });
  }
  const me = { manager: options.manager, operation: 'Apply' as const, apiVersion, subresource: options.subresource };
  const appliedSet = fieldSetOf(applied, listTypes, scope);
  const previousEntry = entries.find((e) => sameEntry(e, me));
  const others = entries.filter((e) => e !== previousEntry).map((e) => ({ entry: e, set: decodeFieldSet(e.fieldsV1), changed: false }));
  const previous = decodeFieldSet(previousEntry?.fieldsV1);

  const conflicts: ApplyConflict[] = [];
  const taken: { other: (typeof others)[number]; path: string }[] = [];
  for (const p of appliedSet) {
    const path = JSON.parse(p) as string[];
    const last = path[path.length - 1];
    if (last.startsWith('k:') || last.startsWith('v:')) continue; // the item itself: only its fields can differ
    if (sortedJson(valueAt(live, path) ?? null) === sortedJson(valueAt(applied, path) ?? null)) continue;
    for (const o of others) {
      if (!o.set.has(p)) continue;
      conflicts.push({ manager: printManager(o.entry), field: pathString(path) });
      taken.push({ other: o, path: p });
    }
  }
  if (conflicts.length > 0 && !options.force) return { ok: false, conflicts, status: conflictStatus(conflicts) };
  for (const t of taken) {
    t.other.set.delete(t.path);
    t.other.changed = true;
  }

  const object = merge(live ?? {}, scope === 'status' ? { status: applied.status ?? {} } : applied, [], listTypes) as JsonObject;
  const ownedByOthers = (p: string): boolean => {
    const prefix = p.slice(0, -1);
    return others.some((o) => [...o.set].some((q) => q === p || q.startsWith(`${prefix},`)));
  };
  const dropped = [...previous].filter((p) => !appliedSet.has(p) && !ownedByOthers(p));
  // Remove only the outermost dropped paths: a list item goes whole, and its fields with it
  // (removing a key field first would make the item unfindable).
  const outermost = dropped.filter((p) => !dropped.some((q) => q !== p && p.startsWith(`${q.slice(0, -1)},`)));
  for (const p of outermost) removeAt(object, JSON.parse(p) as string[]);

  const fields = encodeFieldSet(appliedSet);
  const mine: ManagedFieldsEntry = { manager: options.manager, operation: 'Apply', apiVersion, time: entryTime(previousEntry, apiVersion, fields, now), fieldsType: 'FieldsV1', fieldsV1: fields };
  if (options.subresource) mine.subresource = options.subresource;
  const managedFields: ManagedFieldsEntry[] = [];
  for (const e of entries) {
    if (e === previousEntry) {
      managedFields.push(mine);
      continue;
    }
    const o = others.find((x) => x.entry === e)!;
    if (o.set.size > 0) managedFields.push(o.changed ? { ...e, fieldsV1: encodeFieldSet(o.set) } : e);
  }
  if (!previousEntry) managedFields.push(mine);
  object.metadata = { ...(isObject(object.metadata) ? object.metadata : {}), managedFields: managedFields as unknown as Json };
  return { ok: true, object, managedFields };
}

// ---------------------------------------------------------------------------------------------
