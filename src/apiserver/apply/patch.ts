// The patch formats kube-apiserver accepts: RFC 6902 JSON patch, RFC 7386 JSON merge patch, and
// Kubernetes' strategic merge patch for built-in kinds (lists merged by key, directives such as
// `$patch`, `$setElementOrder/…`, `$retainKeys`, `$deleteFromPrimitiveList/…`). All functions are
// pure: they return a new document and never modify their inputs. A JSON patch may not produce
// an object nested deeper than the decoding limit (http/nesting.ts).

import { BosunError } from '../../common/errors.js';
import { jsonEqual } from '../../common/json.js';
import { MAX_PATCHED_DEPTH, valueNestingDepth } from '../http/nesting.js';

export class PatchError extends BosunError {
  constructor(message: string) {
    super('PatchInvalid', message);
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const clone = <T>(value: T): T => (value === undefined ? value : (structuredClone(value) as T));
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// RFC 6902 JSON patch

export interface JsonPatchOperation {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

function parsePointer(pointer: string, op: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`${op} operation: path "${pointer}" must start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, allowEnd: boolean, op: string, path: string): number {
  if (token === '-' && allowEnd) return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`${op} operation: "${token}" in path "${path}" is not a valid array index`);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) throw new PatchError(`${op} operation: index ${index} in path "${path}" is out of bounds`);
  return index;
}

/** Walks to the parent of the pointer's last token, returning [parent, lastToken]. */
function parentOf(doc: Json, tokens: string[], op: string, path: string): [Json, string] {
  let node: Json = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length, false, op, path)];
    else if (isObject(node) && Object.prototype.hasOwnProperty.call(node, token)) node = node[token];
    else throw new PatchError(`${op} operation: path "${path}" does not exist (no "${token}")`);
  }
  return [node, tokens[tokens.length - 1]];
}

function getAt(doc: Json, path: string, op: string): Json {
  const tokens = parsePointer(path, op);
  if (tokens.length === 0) return doc;
  const [parent, last] = parentOf(doc, tokens, op, path);
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false, op, path)];
  if (isObject(parent) && Object.prototype.hasOwnProperty.call(parent, last)) return parent[last];
  throw new PatchError(`${op} operation: path "${path}" does not exist`);
}

function removeAt(doc: Json, path: string, op: string): Json {
  const tokens = parsePointer(path, op);
  if (tokens.length === 0) throw new PatchError(`${op} operation: cannot remove the whole document`);
  const [parent, last] = parentOf(doc, tokens, op, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false, op, path), 1)[0];
  if (isObject(parent) && Object.prototype.hasOwnProperty.call(parent, last)) {
    const value = parent[last];
    delete parent[last];
    return value;
  }
  throw new PatchError(`${op} operation: path "${path}" does not exist`);
}

function addAt(doc: Json, path: string, value: Json, op: string): Json {
  const tokens = parsePointer(path, op);
  if (tokens.length === 0) return value;
  const [parent, last] = parentOf(doc, tokens, op, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true, op, path), 0, value);
  else if (isObject(parent)) parent[last] = value;
  else throw new PatchError(`${op} operation: the parent of "${path}" is not an object or array`);
  return doc;
}

/** Applies an RFC 6902 JSON patch; any failing operation fails the whole patch. */
export function applyJsonPatch<T>(document: T, operations: unknown): T {
  if (!Array.isArray(operations)) throw new PatchError('a JSON patch must be an array of operations');
  let doc = clone(document) as Json;
  operations.forEach((raw, i) => {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new PatchError(`operation ${i}: each operation needs string "op" and "path"`);
    }
    const { op, path } = raw;
    const needValue = () => {
      if (!('value' in raw)) throw new PatchError(`${op} operation at "${path}": missing "value"`);
      return clone(raw.value as Json);
    };
    switch (op) {
      case 'add':
        doc = addAt(doc, path, needValue(), op);
        break;
      case 'remove':
        removeAt(doc, path, op);
        break;
      case 'replace': {
        const value = needValue();
        if (parsePointer(path, op).length === 0) doc = value;
        else {
          removeAt(doc, path, op);
          doc = addAt(doc, path, value, op);
        }
        break;
      }
      case 'move':
      case 'copy': {
        if (typeof raw.from !== 'string') throw new PatchError(`${op} operation at "${path}": missing "from"`);
        if (op === 'move' && (path + '/').startsWith(raw.from + '/') && path !== raw.from) {
          throw new PatchError(`move operation: cannot move "${raw.from}" into its own child "${path}"`);
        }
        const value = op === 'move' ? removeAt(doc, raw.from, op) : clone(getAt(doc, raw.from, op));
        doc = addAt(doc, path, value, op);
        break;
      }
      case 'test':
        if (!jsonEqual(getAt(doc, path, op), raw.value)) throw new PatchError(`test operation at "${path}" failed: the value differs`);
        break;
      default:
        throw new PatchError(`operation ${i}: unknown op "${op}"`);
    }
  });
  // Adds at deep paths are the one way a patch nests deeper than its own body; repeated, they
  // would grow a stored object without bound.
  if (valueNestingDepth(doc, MAX_PATCHED_DEPTH) > MAX_PATCHED_DEPTH) throw new PatchError(`the patched object would be nested deeper than ${MAX_PATCHED_DEPTH} levels`);
  return doc as T;
}

// ---------------------------------------------------------------------------------------------
// RFC 7386 merge patch

/** Applies an RFC 7386 JSON merge patch: objects merge recursively, null deletes, the rest replaces. */
export function applyMergePatch<T>(document: T, patch: unknown): T {
  return mergeValue(clone(document) as Json, patch as Json) as T;
}

function mergeValue(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergeValue(out[key], value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch

/**
 * Lists merged by a key instead of replaced, as the Kubernetes API types declare with
 * `patchMergeKey`. A field name maps to its key; names that mean different things in different
 * places are qualified by their parent field (`parent.field`), which is checked first.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  hostAliases: 'ip',
  'containers.ports': 'containerPort',
  'initContainers.ports': 'containerPort',
  'spec.ports': 'port',
  conditions: 'type',
  addresses: 'type',
  ownerReferences: 'uid',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  schedulingGates: 'name',
};

/** Primitive lists merged as sets rather than replaced. */
const SET_LISTS = new Set(['finalizers']);

/** The merge key of the list at `field` under `parent`, if it is merged by key. */
export function strategicMergeKey(parent: string, field: string): string | undefined {
  const qualified = MERGE_KEYS[`${parent}.${field}`];
  if (qualified) return qualified;
  if (field === 'ports') return undefined;
  return MERGE_KEYS[field];
}

const DIRECTIVE = '$patch';
const SET_ORDER = '$setElementOrder/';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

/**
 * Applies a strategic merge patch to a built-in object. Maps merge recursively; lists with a
 * merge key merge element by element (`$patch: delete` removes one, `$patch: replace` on the
 * list replaces it); other lists are replaced; `null` deletes a field.
 */
export function applyStrategicMergePatch<T>(document: T, patch: unknown): T {
  if (!isObject(patch)) throw new PatchError('a strategic merge patch must be a JSON object');
  return mergeMap(clone(document) as Json, patch, '') as T;
}

function mergeMap(target: Json | undefined, patch: JsonObject, parentField: string): Json {
  const directive = patch[DIRECTIVE];
  if (directive === 'replace') {
    const { [DIRECTIVE]: _, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (directive === 'delete') return null;
  if (directive !== undefined && directive !== 'merge') throw new PatchError(`unknown patch directive "$patch: ${String(directive)}"`);
  let out: JsonObject = isObject(target) ? target : {};

  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new PatchError('$retainKeys must be a list of field names');
    const keep = new Set(retain.map(String));
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }

  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(SET_ORDER)) continue;
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length);
      if (!Array.isArray(value)) throw new PatchError(`${key} must be a list`);
      const current = out[field];
      if (Array.isArray(current)) out[field] = current.filter((x) => !value.some((v) => jsonEqual(v, x)));
      continue;
    }
    if (value === null) {
      delete out[key];
      continue;
    }
    const current = out[key];
    if (Array.isArray(value)) {
      const merged = mergeList(current, value, parentField, key);
      const order = patch[`${SET_ORDER}${key}`];
      out[key] = Array.isArray(order) ? normalizeOrder(merged, order, Array.isArray(current) ? current : [], listKey(parentField, key)) : merged;
    } else if (isObject(value)) {
      const merged = mergeMap(current, value, key);
      if (merged === null) delete out[key];
      else out[key] = merged;
    } else {
      out[key] = value;
    }
  }

  // A list named only in $setElementOrder (no changes to its elements) is still reordered.
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const field = key.slice(SET_ORDER.length);
    if (field in patch || !Array.isArray(out[field]) || !Array.isArray(order)) continue;
    out[field] = normalizeOrder(out[field] as Json[], order, out[field] as Json[], listKey(parentField, field));
  }
  return out;
}

function stripDirectives(value: Json): Json {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(SET_ORDER) || k.startsWith(DELETE_PRIMITIVE)) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

/** The key that identifies elements of a merged list: its merge key, or the value itself for sets. */
function listKey(parentField: string, field: string): string | undefined {
  return SET_LISTS.has(field) ? undefined : strategicMergeKey(parentField, field);
}

function mergeList(current: Json | undefined, patch: Json[], parentField: string, field: string): Json[] {
  const existing = Array.isArray(current) ? current : [];
  const replace = patch.find((x) => isObject(x) && x[DIRECTIVE] === 'replace' && Object.keys(x).length === 1);
  if (replace) return patch.filter((x) => x !== replace).map(stripDirectives);

  if (SET_LISTS.has(field)) {
    const out = [...existing];
    for (const v of patch) if (!out.some((x) => jsonEqual(x, v))) out.push(v);
    return normalizeOrder(out, patch, existing, undefined);
  }
  const key = strategicMergeKey(parentField, field);
  if (!key || !patch.every((x) => isObject(x))) return patch.map(stripDirectives);

  const out = existing.map((x) => clone(x));
  for (const item of patch as JsonObject[]) {
    const id = item[key];
    if (id === undefined) throw new PatchError(`the list "${field}" is merged by "${key}", but an element of the patch has no "${key}"`);
    const index = out.findIndex((x) => isObject(x) && jsonEqual(x[key], id));
    if (item[DIRECTIVE] === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    if (index >= 0) out[index] = mergeMap(out[index], item, field);
    else out.push(mergeMap({}, item, field));
  }
  const remaining = existing.filter((x) => out.some((y) => isObject(x) && isObject(y) && jsonEqual(x[key], y[key])));
  return normalizeOrder(out, patch, remaining, key);
}

/**
 * Orders a merged list as kube-apiserver does (normalizeElementOrder + mergeSortedSlice): the
 * elements named in `order` (the patch list or its `$setElementOrder`) keep that order; the
 * others ("server-only") keep their order in the live list and are slotted in before the first
 * named element that comes after them in the live list.
 */
function normalizeOrder(merged: Json[], order: Json[], live: Json[], key: string | undefined): Json[] {
  const idOf = (x: Json): Json => (key !== undefined && isObject(x) ? x[key] : x);
  const indexIn = (list: Json[], x: Json): number => list.findIndex((y) => jsonEqual(idOf(y), idOf(x)));
  const rank = (list: Json[]) => (x: Json): number => {
    const i = indexIn(list, x);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  const byOrder = rank(order);
  const byLive = rank(live);
  const named = merged.filter((x) => indexIn(order, x) >= 0).sort((a, b) => byOrder(a) - byOrder(b));
  const serverOnly = merged.filter((x) => indexIn(order, x) < 0).sort((a, b) => byLive(a) - byLive(b));
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < named.length) {
    if (j >= named.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(named[j++]);
    else {
      const li = indexIn(live, serverOnly[i]);
      const ri = indexIn(live, named[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]);
      else out.push(named[j++]);
    }
  }
  return out;
}
