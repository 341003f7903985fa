// managedFields as kube-apiserver keeps them: the entries (manager, operation, API version,
// subresource, fieldsV1), and the Update bookkeeping the server does on every ordinary create,
// update and patch: the fields a writer changed become its own and leave every other manager.
import type * as api from '../../api/index.js';
import { jsonEqual } from '../../common/json.js';
import { rfc3339 } from '../../common/time.js';
import {
  builtinListTypes, IGNORED_METADATA, IGNORED_TOP, isObject, itemKey, sortedJson,
  type FieldScope, type Json, type JsonObject, type ListTypes, type ObjectData,
} from './field-sets.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

export function sameEntry(a: ManagedFieldsEntry, b: Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): boolean {
  return a.manager === b.manager && a.operation === b.operation && (a.subresource ?? '') === (b.subresource ?? '')
    && (a.operation === 'Apply' || a.apiVersion === b.apiVersion);
}

/** The managedFields entries of an object (none when it has no metadata). */
export function managedEntries(object: JsonObject | undefined): ManagedFieldsEntry[] {
  const meta = isObject(object?.metadata) ? object.metadata : {};
  return (Array.isArray(meta.managedFields) ? meta.managedFields : []) as unknown as ManagedFieldsEntry[];
}


// object (the flat path sets of field-sets.ts serve apply, which is rarer).

/** A field set as a tree: children by path element; `member` when the path itself is in the set. */
interface FieldNode {
  member: boolean;
  children: Map<string, FieldNode>;
}

const emptyNode = (member = false): FieldNode => ({ member, children: new Map() });
const isEmptyNode = (node: FieldNode): boolean => !node.member && node.children.size === 0;

function nodeFromFields(fields: Json | undefined): FieldNode {
  const node = emptyNode();
  if (!isObject(fields)) return node;
  for (const [el, child] of Object.entries(fields)) {
    if (el === '.') node.member = true;
    else {
      const sub = nodeFromFields(child);
      if (!isObject(child) || Object.keys(child).length === 0) sub.member = true;
      node.children.set(el, sub);
    }
  }
  return node;
}

function fieldsFromNode(node: FieldNode): JsonObject {
  const out: JsonObject = {};
  if (node.member && node.children.size > 0) out['.'] = {};
  for (const el of [...node.children.keys()].sort()) out[el] = fieldsFromNode(node.children.get(el)!);
  return out;
}

/** The items of a list by their path element (`k:…` for the given keys, `v:…` for sets). */
function itemsByElement(list: Json[], keys: string[] | undefined): Map<string, Json> {
  return new Map(list.map((item) => [keys ? itemKey(item, keys) : `v:${sortedJson(item)}`, item]));
}

/** The value at one path element below `value`, or undefined. */
function childValue(value: Json | undefined, el: string): Json | undefined {
  if (el.startsWith('f:')) return isObject(value) ? value[el.slice(2)] : undefined;
  if (!Array.isArray(value)) return undefined;
  if (el.startsWith('k:')) {
    const key = JSON.parse(el.slice(2)) as JsonObject;
    const fields = Object.keys(key);
    return value.find((item) => isObject(item) && fields.every((f) => jsonEqual(item[f], key[f])));
  }
  if (el.startsWith('v:')) return value.find((item) => sortedJson(item) === el.slice(2));
  return value[Number(el.slice(2))];
}

/**
 * The fields of `updated` within `scope` that are new or differ from `old` (all of them when
 * `old` is undefined): leaves whose values changed, and list items that were added.
 */
function changedFields(old: JsonObject | undefined, updated: JsonObject, listTypes: ListTypes, scope: FieldScope): FieldNode {
  const names: string[] = [];
  const walk = (value: JsonObject, before: Json | undefined, node: FieldNode): void => {
    const previous = isObject(before) ? before : undefined;
    for (const k in value) {
      const v = value[k];
      if (names.length === 0 && (IGNORED_TOP.has(k) || (k === 'status') !== (scope === 'status'))) continue;
      if (names.length === 1 && names[0] === 'metadata' && IGNORED_METADATA.has(k)) continue;
      const b = previous?.[k];
      // A value equal to the one before changes nothing below it: no need to walk it (most of a
      // write is unchanged, and walking made a node per object).
      if (b !== undefined && (isObject(v) || Array.isArray(v)) && jsonEqual(b, v)) continue;
      const el = `f:${k}`;
      names.push(k);
      if (isObject(v) && Object.keys(v).length > 0) {
        const child = emptyNode();
        walk(v, b, child);
        if (!isEmptyNode(child)) node.children.set(el, child);
      } else if (Array.isArray(v) && listTypes(names).type !== 'atomic') {
        const lt = listTypes(names);
        const keys = lt.type === 'map' ? lt.keys : undefined;
        const beforeItems = Array.isArray(b) ? itemsByElement(b, keys) : new Map<string, Json>();
        const child = emptyNode();
        for (const item of v) {
          const itemEl = keys ? itemKey(item, keys) : `v:${sortedJson(item)}`;
          const beforeItem = beforeItems.get(itemEl);
          const itemNode = emptyNode(beforeItem === undefined);
          if (keys && isObject(item)) walk(item, beforeItem, itemNode);
          if (!isEmptyNode(itemNode)) child.children.set(itemEl, itemNode);
        }
        if (!isEmptyNode(child)) node.children.set(el, child);
      } else if (b === undefined || !jsonEqual(b, v)) node.children.set(el, emptyNode(true));
      names.pop();
    }
  };
  const root = emptyNode();
  walk(updated, old, root);
  return root;
}

/** Drops the fields that no longer exist in `value`; true when something was dropped. */
function keepExisting(node: FieldNode, value: Json | undefined): boolean {
  let dropped = false;
  for (const [el, child] of node.children) {
    const v = childValue(value, el);
    if (v === undefined) {
      node.children.delete(el);
      dropped = true;
      continue;
    }
    if (keepExisting(child, v)) dropped = true;
    if (isEmptyNode(child)) node.children.delete(el);
  }
  return dropped;
}

// The same questions asked of an entry's fieldsV1 as it is stored, without making it a tree: most
// writes (a Lease renewed, a status refreshed) change only fields their writer owns already, and
// leave every entry as it was. nodeFromFields's reading of fieldsV1: a path is in the set when
// its value is not an object, is an empty object, or holds the "." key.
const inSet = (fields: Json | undefined): boolean => !isObject(fields) || '.' in fields || Object.keys(fields).length === 0;

/** Whether every field of `fields` still exists in `value` (keepExisting would drop none). */
function allExist(fields: Json | undefined, value: Json | undefined): boolean {
  if (!isObject(fields)) return true;
  for (const el in fields) {
    if (el === '.') continue;
    const v = childValue(value, el);
    if (v === undefined || !allExist(fields[el], v)) return false;
  }
  return true;
}

/** Whether the path of `fields` is itself in an entry's set (`top`: the entry's root, in the set only with "."). */
const pathInSet = (fields: Json | undefined, top: boolean): boolean => (top ? isObject(fields) && '.' in fields : inSet(fields));

/** Whether `fields` (the set of an entry, `top`: its root) holds any field of `node` (subtract would remove something). */
function holdsAny(fields: Json | undefined, node: FieldNode, top = true): boolean {
  if (node.member && pathInSet(fields, top)) return true;
  if (!isObject(fields)) return false;
  for (const [el, child] of node.children) if (el in fields && holdsAny(fields[el], child, false)) return true;
  return false;
}

/** Whether `fields` (an entry's set, `top`: its root) holds every field of `node` (union would add nothing). */
function holdsAll(fields: Json | undefined, node: FieldNode, top = true): boolean {
  if (node.member && !pathInSet(fields, top)) return false;
  for (const [el, child] of node.children) {
    if (!isObject(fields) || !(el in fields) || !holdsAll(fields[el], child, false)) return false;
  }
  return true;
}

/** Removes `other`'s fields from `node`; true when something was removed. */
function subtract(node: FieldNode, other: FieldNode): boolean {
  let removed = false;
  if (node.member && other.member) {
    node.member = false;
    removed = true;
  }
  for (const [el, otherChild] of other.children) {
    const child = node.children.get(el);
    if (!child) continue;
    if (subtract(child, otherChild)) removed = true;
    if (isEmptyNode(child)) node.children.delete(el);
  }
  return removed;
}

/** Adds `other`'s fields to `node`; true when something was added. */
function union(node: FieldNode, other: FieldNode): boolean {
  let added = false;
  if (other.member && !node.member) {
    node.member = true;
    added = true;
  }
  for (const [el, otherChild] of other.children) {
    let child = node.children.get(el);
    if (!child) node.children.set(el, (child = emptyNode()));
    if (union(child, otherChild)) added = true;
  }
  return added;
}

/**
 * The managedFields after an ordinary write (create, update, patch) by `manager` (the
 * `fieldManager` parameter, else derived from the user agent): the fields it changed become its
 * own (Update operation, per API version) and leave every other manager; fields that no longer
 * exist leave everyone. `old` is undefined for a create (every field is the creator's). Entries
 * keep their order; one whose fields did not change is returned as it was, but for the writer's
 * own time, which moves whenever the write changed a value.
 */
export function recordUpdate(oldData: ObjectData | undefined, updatedData: ObjectData,
  options: { manager: string; apiVersion: string; listTypes?: ListTypes; now?: Date; subresource?: string }): ManagedFieldsEntry[] {
  const listTypes = options.listTypes ?? builtinListTypes;
  const scope: FieldScope = options.subresource === 'status' ? 'status' : 'main';
  const old = oldData as JsonObject | undefined;
  const updated = updatedData as JsonObject;
  const changed = changedFields(old, updated, listTypes, scope);
  const me = { manager: options.manager, operation: 'Update' as const, apiVersion: options.apiVersion, subresource: options.subresource };
  const result: ManagedFieldsEntry[] = [];
  let mine = emptyNode();
  let mineEntry: ManagedFieldsEntry | undefined;
  let mineModified = false;
  let mineIndex = -1;
  let mineKept = false;
  for (const e of managedEntries(old)) {
    const unchanged = isObject(e.fieldsV1) && Object.keys(e.fieldsV1).length > 0 && allExist(e.fieldsV1, updated);
    if (sameEntry(e, me)) {
      if (unchanged && holdsAll(e.fieldsV1, changed)) {
        // Nothing to add to the writer's own entry, nothing gone from it: kept as it is.
        [mineEntry, mineIndex, mineKept] = [e, result.length, true];
        continue;
      }
    } else if (unchanged && !holdsAny(e.fieldsV1, changed)) {
      result.push(e);
      continue;
    }
    const node = nodeFromFields(e.fieldsV1);
    let modified = keepExisting(node, updated);
    if (sameEntry(e, me)) {
      [mine, mineEntry, mineModified, mineIndex] = [node, e, modified, result.length];
      continue;
    }
    if (subtract(node, changed)) modified = true;
    if (!isEmptyNode(node)) result.push(modified ? { ...e, fieldsV1: fieldsFromNode(node) } : e);
  }
  // A write that changed any value stamps the writer's entry with its time, as kube's
  // managedFieldsUpdater does (a Lease's holder shows when it last renewed); one that changed
  // nothing leaves the entry's time as it was.
  const time = rfc3339(options.now);
  const stamped = (e: ManagedFieldsEntry): ManagedFieldsEntry => (!isEmptyNode(changed) && e.time !== time ? { ...e, time } : e);
  if (mineKept) result.splice(mineIndex, 0, stamped(mineEntry!));
  else if (union(mine, changed)) mineModified = true;
  if (!mineKept && !isEmptyNode(mine)) {
    let entry = mineEntry;
    if (!entry || mineModified) {
      entry = { manager: options.manager, operation: 'Update', apiVersion: options.apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: fieldsFromNode(mine) };
      if (options.subresource) entry.subresource = options.subresource;
    } else entry = stamped(entry);
    if (mineIndex >= 0) result.splice(mineIndex, 0, entry);
    else result.push(entry);
  }
  return result;
}

/** What kube-apiserver does with managedFields sent in a request: `[{}]` resets them, none or `[]` keeps the stored ones. */
function requestManagedFields(sent: unknown, stored: unknown): unknown {
  if (Array.isArray(sent) && sent.length === 1 && typeof sent[0] === 'object' && sent[0] !== null && Object.keys(sent[0]).length === 0) return [];
  return Array.isArray(sent) && sent.length > 0 ? sent : stored;
}

/**
 * Sets metadata.managedFields of `object` after an ordinary write by `manager` over `previous`
 * (undefined for a create), starting from the managedFields the request sent, or the stored ones
 * for a write through the status subresource (`viaStatus`), which ignores what was sent.
 */
export function recordWrite(object: api.Unstructured, previous: api.Unstructured | undefined,
  options: { manager: string; apiVersion: string; listTypes: ListTypes; subresource?: string; viaStatus: boolean }): void {
  const base = options.viaStatus ? previous?.metadata.managedFields : requestManagedFields(object.metadata.managedFields, previous?.metadata.managedFields);
  const old = previous ? { ...previous, metadata: { ...previous.metadata, managedFields: base } } : Array.isArray(base) && base.length > 0 ? { metadata: { managedFields: base } } : undefined;
  const managedFields = recordUpdate(old, object, { manager: options.manager, apiVersion: options.apiVersion, listTypes: options.listTypes, subresource: options.subresource });
  if (managedFields.length > 0) object.metadata.managedFields = managedFields;
  else delete object.metadata.managedFields;
}

/** The field manager of a write without `fieldManager`: the user agent's program name, as kube derives it. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const name = (userAgent ?? '').split('/')[0].trim();
  return name.slice(0, 128) || 'unknown';
}
