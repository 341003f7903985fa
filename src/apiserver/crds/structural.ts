// Whether a CRD's OpenAPI v3 schema is one kube-apiserver accepts in apiextensions.k8s.io/v1: the
// structural-schema rules of the Kubernetes documentation ("Specifying a structural schema") and
// the rules of the x-kubernetes-* extensions. A structural schema gives every field a type
// outside the value validations (allOf/anyOf/oneOf/not), which may only constrain values; the one
// exception is x-kubernetes-int-or-string, whose conventional `anyOf: [{type: integer},
// {type: string}]` (alone, or first in an allOf) is allowed. Problems read as kube-apiserver's
// field errors: "<field path>: <Required value|Forbidden|Invalid value|Unsupported value>: <why>".
import type { JSONSchemaProps } from './schema.js';

type JsonMap = Record<string, unknown>;
const isObject = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where a node sits, which decides the wording of a missing type. */
type Level = 'root' | 'item' | 'field';

const KNOWN_TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const LIST_TYPES = ['atomic', 'set', 'map'];
const MAP_TYPES = ['granular', 'atomic'];
const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;

/** Problems that make the schema unacceptable; empty when kube-apiserver would take it. */
export function structuralProblems(schema: JSONSchemaProps | undefined, path = 'spec.validation.openAPIV3Schema'): string[] {
  if (schema === undefined) return [`${path}: Required value: schemas are required`];
  if (!isObject(schema)) return [`${path}: Invalid value: must be an object`];
  const out: string[] = [];
  checkNode(schema, 'root', path, out);
  // kube-apiserver checks completeness from the root's value validations (which reach into
  // nested properties and items through them); it does not start again at each node.
  checkCompleteness(schema, schema, path, path, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The structural part: types, items, properties and the extensions on every node.

function checkNode(s: JSONSchemaProps, level: Level, path: string, out: string[]): void {
  if (!isObject(s)) {
    out.push(`${path}: Invalid value: must be an object`);
    return;
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;

  if (embedded && s.type !== 'object') {
    out.push(s.type === undefined ? `${path}.type: Required value: must be object if x-kubernetes-embedded-resource is true` : `${path}.type: Invalid value: "${s.type}": must be object if x-kubernetes-embedded-resource is true`);
  } else if (s.type === undefined && !intOrString && !preserve) {
    const where = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' }[level];
    out.push(`${path}.type: Required value: must not be empty ${where}`);
  }
  if (s.type === 'null') out.push(`${path}.type: Forbidden: type cannot be set to null, use nullable as an alternative`);
  else if (s.type !== undefined && !KNOWN_TYPES.has(s.type)) out.push(`${path}.type: Unsupported value: "${s.type}": supported values: "array", "boolean", "integer", "number", "object", "string"`);
  if (level === 'root' && s.type !== undefined && s.type !== 'object') out.push(`${path}.type: Invalid value: "${s.type}": must be object at the root`);
  if (level === 'root' && s.nullable === true) out.push(`${path}.nullable: Forbidden: nullable cannot be true at the root`);
  if (intOrString && s.type !== undefined) out.push(`${path}.type: Invalid value: "${s.type}": must be empty if x-kubernetes-int-or-string is true`);
  if (intOrString && preserve) out.push(`${path}.x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`);
  if (intOrString && embedded) out.push(`${path}.x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true`);
  if (s['x-kubernetes-preserve-unknown-fields'] === false) out.push(`${path}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`);

  if (s.type === 'array' && s.items === undefined) out.push(`${path}.items: Required value: must be specified`);
  if (Array.isArray(s.items)) out.push(`${path}.items: Forbidden: items must be a schema object and not an array`);
  else if (s.items !== undefined) checkNode(s.items, 'item', `${path}.items`, out);

  const ap = s.additionalProperties;
  if (ap !== undefined && level === 'root') out.push(`${path}.additionalProperties: Forbidden: must not be used at the root`);
  if (s.properties && (isObject(ap) || ap === false)) out.push(`${path}.additionalProperties: Forbidden: additionalProperties and properties are mutually exclusive`);
  if (embedded && ap !== undefined) out.push(`${path}.additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set`);
  if (embedded && !preserve && Object.keys(s.properties ?? {}).length === 0) out.push(`${path}.properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`);
  for (const [name, prop] of Object.entries(s.properties ?? {})) checkNode(prop, 'field', `${path}.properties[${name}]`, out);
  if (isObject(ap)) checkNode(ap as JSONSchemaProps, 'field', `${path}.additionalProperties`, out);

  // apiVersion, kind and metadata of the resource itself (the root, or an embedded resource).
  if (level === 'root' || embedded) {
    for (const name of ['apiVersion', 'kind']) {
      const prop = s.properties?.[name];
      if (prop && prop.type !== 'string') out.push(`${path}.properties[${name}].type: Invalid value: "${prop.type ?? ''}": must be string`);
    }
    const metadata = s.properties?.metadata;
    if (metadata && metadata.type !== 'object') out.push(`${path}.properties[metadata].type: Invalid value: "${metadata.type ?? ''}": must be object`);
  }
  if (level === 'root' && isObject(s.properties?.metadata)) {
    for (const field of Object.keys(s.properties.metadata.properties ?? {})) {
      if (field !== 'name' && field !== 'generateName') out.push(`${path}.properties[metadata].properties[${field}]: Forbidden: only name and generateName may be specified at the root metadata`);
    }
  }

  checkExtensions(s, path, out);
  checkSupported(s, path, out);
  checkJunctors(s, path, isIntOrStringAnyOf(s.anyOf), isIntOrStringAnyOf(s.allOf?.[0]?.anyOf), out);
}

/** `[{type: integer}, {type: string}]` and nothing else: int-or-string's conventional anyOf. */
function isIntOrStringAnyOf(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  const only = (v: unknown, type: string) => isObject(v) && Object.keys(v).length === 1 && v.type === type;
  return only(anyOf[0], 'integer') && only(anyOf[1], 'string');
}

/** x-kubernetes-list-type, list-map-keys and map-type: known values, on the right kinds of node. */
function checkExtensions(s: JSONSchemaProps, path: string, out: string[]): void {
  const listType = s['x-kubernetes-list-type'];
  const mapKeys = s['x-kubernetes-list-map-keys'];
  const mapType = s['x-kubernetes-map-type'];
  const item = isObject(s.items) ? s.items : undefined;
  if (mapType !== undefined && s.type !== 'object') out.push(wrongType(path, s.type, 'object', 'x-kubernetes-map-type'));
  if (mapType !== undefined && !MAP_TYPES.includes(mapType)) out.push(`${path}.x-kubernetes-map-type: Unsupported value: "${mapType}": supported values: "atomic", "granular"`);
  if (listType !== undefined && s.type !== 'array') out.push(wrongType(path, s.type, 'array', 'x-kubernetes-list-type'));
  if (listType !== undefined && !LIST_TYPES.includes(listType)) out.push(`${path}.x-kubernetes-list-type: Unsupported value: "${listType}": supported values: "atomic", "set", "map"`);
  if (Array.isArray(mapKeys) && mapKeys.length > 0 && listType !== 'map') {
    out.push(listType === undefined ? `${path}.x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty` : `${path}.x-kubernetes-list-type: Invalid value: "${listType}": must be map if x-kubernetes-list-map-keys is non-empty`);
  }
  // A set compares whole items, so an item that is itself a map or list must be atomic.
  if (listType === 'set' && item?.type === 'object' && item['x-kubernetes-map-type'] !== 'atomic') out.push(`${path}.items.x-kubernetes-map-type: Invalid value: "${item['x-kubernetes-map-type'] ?? ''}": must be atomic as item of a list with x-kubernetes-list-type=set`);
  if (listType === 'set' && item?.type === 'array' && (item['x-kubernetes-list-type'] ?? 'atomic') !== 'atomic') out.push(`${path}.items.x-kubernetes-list-type: Invalid value: "${item['x-kubernetes-list-type']}": must be atomic as item of a list with x-kubernetes-list-type=set`);
  if ((listType === 'set' || listType === 'map') && item?.nullable === true) out.push(`${path}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is ${listType}`);
  if (listType !== 'map') return;

  if (!Array.isArray(mapKeys) || mapKeys.length === 0) out.push(`${path}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`);
  if (!item) {
    out.push(`${path}.items: Required value: must have a schema if x-kubernetes-list-type is map`);
    return;
  }
  if (item.type !== 'object') {
    out.push(`${path}.items.type: Invalid value: "${item.type ?? ''}": must be object if parent array's x-kubernetes-list-type is map`);
    return;
  }
  // Each key identifies an item, so it is a scalar every item has.
  const seen = new Set<string>();
  for (const key of Array.isArray(mapKeys) ? mapKeys : []) {
    const prop = item.properties?.[key];
    const at = `${path}.items.properties[${key}]`;
    if (!prop) out.push(`${path}.x-kubernetes-list-map-keys: Invalid value: ${JSON.stringify(mapKeys)}: entries must all be names of item properties`);
    else {
      if (prop.type === 'array' || prop.type === 'object') out.push(`${at}.type: Invalid value: "${prop.type}": must be a scalar type if parent array's x-kubernetes-list-type is map`);
      if (!(item.required ?? []).includes(key) && prop.default === undefined) out.push(`${at}.default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`);
      if (prop.nullable === true) out.push(`${at}.nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`);
    }
    if (seen.has(key)) out.push(`${path}.x-kubernetes-list-map-keys: Invalid value: ${JSON.stringify(mapKeys)}: must not contain duplicate entries`);
    seen.add(key);
  }
}

function wrongType(path: string, type: string | undefined, wanted: string, extension: string): string {
  return type === undefined
    ? `${path}.type: Required value: must be ${wanted} if ${extension} is specified`
    : `${path}.type: Invalid value: "${type}": must be ${wanted} if ${extension} is specified`;
}

/** Parts of OpenAPI that CRD schemas may not use at all. */
const UNSUPPORTED: Array<[string, string]> = [
  ['$ref', '$ref is not supported'],
  ['id', 'id is not supported'],
  ['additionalItems', 'additionalItems is not supported'],
  ['patternProperties', 'patternProperties is not supported'],
  ['definitions', 'definitions is not supported'],
  ['dependencies', 'dependencies is not supported'],
];

function checkSupported(s: JSONSchemaProps, path: string, out: string[]): void {
  for (const [field, message] of UNSUPPORTED) if (s[field] !== undefined && s[field] !== null) out.push(`${path}.${field}: Forbidden: ${message}`);
  if (s.uniqueItems === true) out.push(`${path}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`);
}

// ---------------------------------------------------------------------------------------------
// Value validations: what may appear under allOf/anyOf/oneOf/not.

type Holder = Pick<JSONSchemaProps, 'allOf' | 'anyOf' | 'oneOf' | 'not'>;

function checkJunctors(v: Holder, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, out: string[]): void {
  for (const junctor of JUNCTORS) {
    const list = v[junctor];
    if (list === undefined || list === null) continue; // `anyOf: null` is how Go writes an empty list
    if (!Array.isArray(list)) {
      out.push(`${path}.${junctor}: Invalid value: must be a list of schemas`);
      continue;
    }
    if (junctor === 'anyOf' && skipAnyOf) continue;
    list.forEach((sub, i) => checkNested(sub, `${path}.${junctor}[${i}]`, junctor === 'allOf' && i === 0 && skipFirstAllOfAnyOf, out));
  }
  if (v.not !== undefined && v.not !== null) checkNested(v.not, `${path}.not`, false, out);
}

/** Fields that give a node its structure and so may not appear inside a value validation. */
const NESTED_FORBIDDEN: Array<[keyof JSONSchemaProps, string]> = [
  ['type', 'must be empty to be structural'],
  ['additionalProperties', 'must be undefined to be structural'],
  ['default', 'must be undefined to be structural'],
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
  ['externalDocs', 'must be undefined to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
  ['x-kubernetes-validations', 'must be empty to be structural'],
];
/** Flags that are forbidden inside a value validation only when true. */
const NESTED_FORBIDDEN_FLAGS: Array<keyof JSONSchemaProps> = ['nullable', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string'];

function checkNested(v: JSONSchemaProps, path: string, skipAnyOf: boolean, out: string[]): void {
  if (!isObject(v)) {
    out.push(`${path}: Invalid value: must be an object`);
    return;
  }
  checkJunctors(v, path, skipAnyOf, false, out);
  if (isObject(v.items)) checkNested(v.items, `${path}.items`, false, out);
  for (const [name, prop] of Object.entries(v.properties ?? {})) checkNested(prop, `${path}.properties[${name}]`, false, out);
  for (const [field, message] of NESTED_FORBIDDEN) {
    const value = v[field];
    const empty = value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
    if (!empty) out.push(`${path}.${field}: Forbidden: ${message}`);
  }
  for (const flag of NESTED_FORBIDDEN_FLAGS) if (v[flag] === true) out.push(`${path}.${flag}: Forbidden: must be false to be structural`);
  if (v.properties?.metadata !== undefined) out.push(`${path}.properties[metadata]: Forbidden: must not be specified in a nested context`);
  checkSupported(v, path, out);
}

/**
 * Every property or items named inside a value validation must also be specified outside it, at
 * the same place (`s`): value validations constrain values, they never declare fields.
 */
function checkCompleteness(v: Holder, s: JSONSchemaProps, sPath: string, vPath: string, out: string[]): void {
  for (const junctor of JUNCTORS) {
    const list = v[junctor];
    if (Array.isArray(list)) list.forEach((sub, i) => checkNestedCompleteness(sub, s, sPath, `${vPath}.${junctor}[${i}]`, out));
  }
  if (isObject(v.not)) checkNestedCompleteness(v.not, s, sPath, `${vPath}.not`, out);
}

function checkNestedCompleteness(v: JSONSchemaProps, s: JSONSchemaProps | undefined, sPath: string, vPath: string, out: string[]): void {
  if (!isObject(v)) return;
  if (!isObject(s)) {
    out.push(`${sPath}: Required value: because it is defined in ${vPath}`);
    return;
  }
  checkCompleteness(v, s, sPath, vPath, out);
  if (v.items !== undefined) checkNestedCompleteness(v.items, s.items, `${sPath}.items`, `${vPath}.items`, out);
  for (const [name, prop] of Object.entries(v.properties ?? {})) {
    checkNestedCompleteness(prop, s.properties?.[name], `${sPath}.properties[${name}]`, `${vPath}.properties[${name}]`, out);
  }
}
