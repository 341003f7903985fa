// Server-side apply and managedFields, after structured-merge-diff as kube-apiserver runs it:
// field sets in the fieldsV1 format (`f:` fields, `k:` list items by their merge keys, `v:` set
// members, `.` for an item owned as a whole), an Apply that merges the applied fields into the live
// object, reports conflicts with other managers unless forced, and removes fields its manager
// applied before and no longer applies (when nobody else owns them), and the Update bookkeeping the
// server does on ordinary create/update/patch. Lists are keyed by the strategic merge keys for
// built-ins (containers by name, …); custom resources pass the list types from their schema
// (`x-kubernetes-list-type` / `x-kubernetes-list-map-keys`), other lists are atomic.

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };
/** A Kubernetes object as the server holds it (plain JSON data). */
export type ObjectData = Record<string, unknown>;

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

export type ListType = { type: 'map'; keys: string[] } | { type: 'set' } | { type: 'atomic' };

/** The type of the list at this field-name path (list items contribute no name), e.g. ['spec','template','spec','containers']. */
export type ListTypes = (fieldNames: string[]) => ListType;

const BUILTIN_MAP_KEYS: Record<string, string[]> = {
  containers: ['name'], initContainers: ['name'], ephemeralContainers: ['name'], env: ['name'],
  volumes: ['name'], imagePullSecrets: ['name'], volumeMounts: ['mountPath'], volumeDevices: ['devicePath'],
  conditions: ['type'], addresses: ['type'], ownerReferences: ['uid'], hostAliases: ['ip'],
  resourceClaims: ['name'], topologySpreadConstraints: ['topologyKey', 'whenUnsatisfiable'],
};

/** List types of the built-in kinds: the strategic merge keys; `finalizers` is a set; the rest atomic. */
export const builtinListTypes: ListTypes = (names) => {
  const field = names[names.length - 1];
  if (field === 'finalizers') return { type: 'set' };
  // Container ports are keyed by containerPort, service ports by port (both with protocol).
  if (field === 'ports') return { type: 'map', keys: names.includes('containers') || names.includes('initContainers') ? ['containerPort', 'protocol'] : ['port', 'protocol'] };
  const keys = BUILTIN_MAP_KEYS[field];
  return keys ? { type: 'map', keys } : { type: 'atomic' };
};

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}

/** List types of a custom resource from its CRD's openAPIV3Schema. */
export function crdListTypes(schema: SchemaNode | undefined): ListTypes {
  return (names) => {
    if (names[0] === 'metadata') return builtinListTypes(names);
    let node = schema;
    for (const n of names) {
      while (node?.type === 'array') node = node.items;
      node = node?.properties?.[n] ?? (typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined);
    }
    const listType = node?.['x-kubernetes-list-type'];
    const keys = node?.['x-kubernetes-list-map-keys'];
    if (listType === 'map' && keys?.length) return { type: 'map', keys };
    if (listType === 'set') return { type: 'set' };
    return { type: 'atomic' };
  };
}

// Fields the server owns; never part of anyone's field set.
const IGNORED_TOP = new Set(['apiVersion', 'kind']);
const IGNORED_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generateName']);

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sortedJson(v: Json): string {
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

function itemKey(item: Json, keys: string[]): string {
  const o = isObject(item) ? item : {};
  const picked: JsonObject = {};
  for (const k of keys) if (o[k] !== undefined) picked[k] = o[k];
  return `k:${sortedJson(picked)}`;
}

/** A set of field paths; each path is a list of elements (`f:spec`, `k:{"name":"x"}`, `v:"a"`), stored JSON-encoded. */
export type FieldSet = Set<string>;

/**
 * Which part of an object a write manages: `main` is everything but `status` (the main endpoint),
 * `status` only `status` (the status subresource), as kube-apiserver resets the other part.
 */
export type FieldScope = 'main' | 'status';


/** The fields an object sets (the paths of its leaves and of keyed/set list items) within `scope`. */
export function fieldSetOf(object: ObjectData, listTypes: ListTypes = builtinListTypes, scope: FieldScope = 'main'): FieldSet {
  const out: FieldSet = new Set();
  const walk = (value: JsonObject, path: string[], names: string[]): void => {
    for (const [k, v] of Object.entries(value)) {
      if (names.length === 0 && (IGNORED_TOP.has(k) || (k === 'status') !== (scope === 'status'))) continue;
      if (names.length === 1 && names[0] === 'metadata' && IGNORED_METADATA.has(k)) continue;
      const p = [...path, `f:${k}`];
      const n = [...names, k];
      if (isObject(v) && Object.keys(v).length > 0) walk(v, p, n);
      else if (Array.isArray(v)) {
        const lt = listTypes(n);
        if (lt.type === 'atomic') out.add(JSON.stringify(p));
        for (const item of lt.type === 'atomic' ? [] : v) {
          const ip = [...p, lt.type === 'map' ? itemKey(item, lt.keys) : `v:${sortedJson(item)}`];
          out.add(JSON.stringify(ip));
          if (lt.type === 'map' && isObject(item)) walk(item, ip, n);
        }
      } else out.add(JSON.stringify(p));
    }
  };
  walk(object as JsonObject, [], []);
  return out;
}

interface Node { member: boolean; children: Map<string, Node> }

/** Encodes a field set as fieldsV1 (`{"f:spec":{"f:replicas":{}}}`). */
export function encodeFieldSet(set: FieldSet): JsonObject {
  const root: Node = { member: false, children: new Map() };
  for (const encoded of set) {
    let node = root;
    for (const el of JSON.parse(encoded) as string[]) {
      let next = node.children.get(el);
      if (!next) node.children.set(el, next = { member: false, children: new Map() });
      node = next;
    }
    node.member = true;
  }
  const toJson = (node: Node): JsonObject => {
    const out: JsonObject = {};
    if (node.member && node.children.size > 0) out['.'] = {};
    for (const el of [...node.children.keys()].sort()) out[el] = toJson(node.children.get(el)!);
    return out;
  };
  return toJson(root);
}

/** Decodes fieldsV1 into a field set. */
export function decodeFieldSet(fields: JsonObject | undefined): FieldSet {
  const out: FieldSet = new Set();
  const walk = (node: JsonObject, path: string[]): void => {
    for (const [el, child] of Object.entries(node)) {
      if (el === '.') { out.add(JSON.stringify(path)); continue; }
      const p = [...path, el];
      if (!isObject(child) || Object.keys(child).length === 0) out.add(JSON.stringify(p));
      else walk(child, p);
    }
  };
  walk(fields ?? {}, []);
  return out;
}

function findItem(list: Json[], el: string): number {
  if (el.startsWith('k:')) {
    const key = JSON.parse(el.slice(2)) as JsonObject;
    return list.findIndex((item) => isObject(item) && Object.entries(key).every(([k, v]) => sortedJson(item[k] ?? null) === sortedJson(v)));
  }
  if (el.startsWith('v:')) return list.findIndex((item) => sortedJson(item) === el.slice(2));
  return Number(el.slice(2));
}

function valueAt(object: Json | undefined, path: string[]): Json | undefined {
  let cur: Json | undefined = object;
  for (const el of path) {
    if (el.startsWith('f:')) cur = isObject(cur) ? cur[el.slice(2)] : undefined;
    else cur = Array.isArray(cur) ? cur[findItem(cur, el)] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function removeAt(object: JsonObject, path: string[]): void {
  const parent = valueAt(object, path.slice(0, -1));
  const el = path[path.length - 1];
  if (el.startsWith('f:') && isObject(parent)) delete parent[el.slice(2)];
  else if (Array.isArray(parent)) {
    const i = findItem(parent, el);
    if (i >= 0) parent.splice(i, 1);
  }
}

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

function sameEntry(a: ManagedFieldsEntry, b: Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): boolean {
  return a.manager === b.manager && a.operation === b.operation && (a.subresource ?? '') === (b.subresource ?? '')
    && (a.operation === 'Apply' || a.apiVersion === b.apiVersion);
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
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

function managedEntries(object: JsonObject | undefined): ManagedFieldsEntry[] {
  const meta = isObject(object?.metadata) ? object.metadata : {};
  return (Array.isArray(meta.managedFields) ? meta.managedFields : []) as unknown as ManagedFieldsEntry[];
}

/** The time of a rewritten entry: kept when its fields did not change (so that a no-op write stays one). */
function entryTime(previous: ManagedFieldsEntry | undefined, apiVersion: string, fields: JsonObject, now: Date): string {
  if (previous?.time && previous.apiVersion === apiVersion && sortedJson(previous.fieldsV1) === sortedJson(fields)) return previous.time;
  return timestamp(now);
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
// Update bookkeeping on every write: kept cheap with field sets as trees, walked once with the
// object (the flat path sets above serve apply, which is rarer).

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

function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => deepEqual(a[k], b[k]));
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
    return value.find((item) => isObject(item) && fields.every((f) => deepEqual(item[f], key[f])));
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
    for (const [k, v] of Object.entries(value)) {
      if (names.length === 0 && (IGNORED_TOP.has(k) || (k === 'status') !== (scope === 'status'))) continue;
      if (names.length === 1 && names[0] === 'metadata' && IGNORED_METADATA.has(k)) continue;
      const b = previous?.[k];
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
      } else if (b === undefined || !deepEqual(b, v)) node.children.set(el, emptyNode(true));
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
 * keep their order; one whose fields did not change is returned as it was.
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
  for (const e of managedEntries(old)) {
    const node = nodeFromFields(e.fieldsV1);
    let modified = keepExisting(node, updated);
    if (sameEntry(e, me)) {
      [mine, mineEntry, mineModified, mineIndex] = [node, e, modified, result.length];
      continue;
    }
    if (subtract(node, changed)) modified = true;
    if (!isEmptyNode(node)) result.push(modified ? { ...e, fieldsV1: fieldsFromNode(node) } : e);
  }
  if (union(mine, changed)) mineModified = true;
  if (!isEmptyNode(mine)) {
    let entry = mineEntry;
    if (!entry || mineModified) {
      entry = { manager: options.manager, operation: 'Update', apiVersion: options.apiVersion, time: timestamp(options.now ?? new Date()), fieldsType: 'FieldsV1', fieldsV1: fieldsFromNode(mine) };
      if (options.subresource) entry.subresource = options.subresource;
    }
    if (mineIndex >= 0) result.splice(mineIndex, 0, entry);
    else result.push(entry);
  }
  return result;
}

/** The field manager of a write without `fieldManager`: the user agent's program name, as kube derives it. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const name = (userAgent ?? '').split('/')[0].trim();
  return name.slice(0, 128) || 'unknown';
}
