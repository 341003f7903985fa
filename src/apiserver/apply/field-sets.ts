// Field sets as structured-merge-diff keeps them for server-side apply and managedFields: the
// fieldsV1 format (`f:` fields, `k:` list items by their merge keys, `v:` set members, `.` for an
// item owned as a whole), the list types that decide how lists are keyed (strategic merge keys
// for built-ins, `x-kubernetes-list-type` / `x-kubernetes-list-map-keys` for custom resources,
// atomic otherwise), and finding and removing values by a field path.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };
/** A Kubernetes object as the server holds it (plain JSON data). */
export type ObjectData = Record<string, unknown>;

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
export const IGNORED_TOP = new Set(['apiVersion', 'kind']);
export const IGNORED_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generateName']);

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function sortedJson(v: Json): string {
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

export function itemKey(item: Json, keys: string[]): string {
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

export function findItem(list: Json[], el: string): number {
  if (el.startsWith('k:')) {
    const key = JSON.parse(el.slice(2)) as JsonObject;
    return list.findIndex((item) => isObject(item) && Object.entries(key).every(([k, v]) => sortedJson(item[k] ?? null) === sortedJson(v)));
  }
  if (el.startsWith('v:')) return list.findIndex((item) => sortedJson(item) === el.slice(2));
  return Number(el.slice(2));
}

/** The value at a field path, or undefined. */
export function valueAt(object: Json | undefined, path: string[]): Json | undefined {
  let cur: Json | undefined = object;
  for (const el of path) {
    if (el.startsWith('f:')) cur = isObject(cur) ? cur[el.slice(2)] : undefined;
    else cur = Array.isArray(cur) ? cur[findItem(cur, el)] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** Removes the value at a field path (a field, or a list item). */
export function removeAt(object: JsonObject, path: string[]): void {
  const parent = valueAt(object, path.slice(0, -1));
  const el = path[path.length - 1];
  if (el.startsWith('f:') && isObject(parent)) delete parent[el.slice(2)];
  else if (Array.isArray(parent)) {
    const i = findItem(parent, el);
    if (i >= 0) parent.splice(i, 1);
  }
}
