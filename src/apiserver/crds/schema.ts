// OpenAPI v3 structural schemas of CustomResourceDefinitions, as kube-apiserver applies them to
// custom resources: defaulting, pruning of unknown fields, and validation with field paths in
// the causes of a 422. Whether a CRD's schema is structural at all is structural.ts.

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  nullable?: boolean;
  default?: unknown;
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  [extension: string]: unknown;
}

export type CauseType = 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueTypeInvalid' | 'FieldValueTooLong' | 'FieldValueDuplicate' | 'FieldValueForbidden';

export interface Cause {
  type: CauseType;
  message: string;
  field: string;
}

type JsonMap = Record<string, unknown>;
const isObject = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function render(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

/** Fields a custom resource always keeps whatever its schema says. */
const ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

// ---------------------------------------------------------------------------------------------
// Defaulting

/**
 * Fills in `default` values (schema order, deepest last), as kube-apiserver does on read and
 * write. A `null` where the schema does not say `nullable: true` counts as absent: it is
 * replaced by the default, or dropped when there is none (kube-apiserver's
 * PruneNonNullableNullsWithoutDefaults, which runs before defaulting). This holds for declared
 * properties and additionalProperties; in a list a null item can only be defaulted, since
 * dropping it would shift the others, so one without a default is left for validation to refuse.
 */
export function applyDefaults(schema: JSONSchemaProps | undefined, value: unknown): unknown {
  if (!schema) return value;
  if (isObject(value)) {
    const propertyOf = (key: string) => schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    for (const key of Object.keys(value)) {
      const prop = propertyOf(key);
      if (prop && value[key] === null && !prop.nullable) {
        if (prop.default === undefined) delete value[key];
        else value[key] = structuredClone(prop.default);
      }
    }
    for (const [key, prop] of Object.entries(schema.properties ?? {})) {
      if (value[key] === undefined && prop.default !== undefined) value[key] = structuredClone(prop.default);
    }
    for (const key of Object.keys(value)) {
      const prop = propertyOf(key);
      if (prop) value[key] = applyDefaults(prop, value[key]);
    }
  } else if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    return value.map((item) => applyDefaults(items, item === null && !items.nullable && items.default !== undefined ? structuredClone(items.default) : item));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Pruning

/** Removes fields the schema does not declare, except under x-kubernetes-preserve-unknown-fields. */
export function prune(schema: JSONSchemaProps | undefined, value: unknown, isRoot = true): unknown {
  if (!schema || (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties)) return value;
  if (isObject(value)) {
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = schema['x-kubernetes-embedded-resource'] === true;
    for (const key of Object.keys(value)) {
      // apiVersion, kind and metadata of a resource are the server's, never pruned by its schema.
      if ((isRoot || embedded) && ROOT_FIELDS.has(key)) continue;
      const prop = schema.properties?.[key];
      if (prop) value[key] = prune(prop, value[key], false);
      else if (isObject(schema.additionalProperties)) value[key] = prune(schema.additionalProperties, value[key], false);
      else if (schema.additionalProperties === true || preserve) continue;
      else delete value[key];
    }
  } else if (Array.isArray(value) && schema.items) {
    return value.map((item) => prune(schema.items, item, false));
  }
  return value;
}

/**
 * The fields pruning would drop, as paths (`spec.bogus`, `spec.items[0].extra`): what
 * kube-apiserver's strict field validation (`fieldValidation=Strict|Warn`) reports.
 */
export function unknownFields(schema: JSONSchemaProps | undefined, value: unknown, path = ''): string[] {
  if (!schema || (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties)) return [];
  const out: string[] = [];
  if (isObject(value)) {
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = schema['x-kubernetes-embedded-resource'] === true;
    for (const key of Object.keys(value)) {
      if ((path === '' || embedded) && ROOT_FIELDS.has(key)) continue;
      const prop = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (prop) out.push(...unknownFields(prop, value[key], childPath(path, key)));
      else if (schema.additionalProperties !== true && !preserve) out.push(childPath(path, key));
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => out.push(...unknownFields(schema.items, item, `${path}[${i}]`)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Validation

/** Validates a value against a schema; returns every problem, with kube-apiserver-style messages. */
export function validate(schema: JSONSchemaProps | undefined, value: unknown, path = ''): Cause[] {
  const causes: Cause[] = [];
  if (schema) check(schema, value, path, causes, true);
  return causes;
}

function check(schema: JSONSchemaProps, value: unknown, path: string, causes: Cause[], isRoot: boolean): void {
  // kube-apiserver validates an int-or-string node as having the two types "integer,string".
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  if (value === null) {
    const type = intOrString ? 'integer,string' : schema.type;
    if (!schema.nullable && type !== undefined) {
      causes.push({ type: 'FieldValueTypeInvalid', field: path, message: `Invalid value: "null": ${path} in body must be of type ${type}: "null"` });
    }
    return;
  }
  const actual = typeOf(value);
  if (intOrString) {
    if (actual !== 'integer' && actual !== 'string') {
      causes.push({ type: 'FieldValueTypeInvalid', field: path, message: `Invalid value: "${actual}": ${path} in body must be of type integer,string: "${actual}"` });
      return;
    }
  } else if (schema.type) {
    const ok = schema.type === actual || (schema.type === 'number' && actual === 'integer');
    if (!ok) {
      causes.push({ type: 'FieldValueTypeInvalid', field: path, message: `Invalid value: "${actual}": ${path} in body must be of type ${schema.type}: "${actual}"` });
      return;
    }
  }

  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    causes.push({
      type: 'FieldValueNotSupported',
      field: path,
      message: `Unsupported value: ${render(value)}: supported values: ${schema.enum.map(render).join(', ')}`,
    });
  }

  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && value.length > schema.maxLength) {
      causes.push({ type: 'FieldValueTooLong', field: path, message: `Too long: may not be longer than ${schema.maxLength}` });
    }
    if (schema.minLength !== undefined && value.length < schema.minLength) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${render(value)}: ${path} in body should be at least ${schema.minLength} chars long` });
    }
    if (schema.pattern !== undefined && !matches(compiledPattern(schema.pattern), value)) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${render(value)}: ${path} in body should match '${schema.pattern}'` });
    }
  }

  if (typeof value === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${value}: ${path} in body should be greater than or equal to ${schema.minimum}` });
    }
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${value}: ${path} in body should be less than or equal to ${schema.maximum}` });
    }
    if (schema.format === 'int32' && (value < -2147483648 || value > 2147483647)) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${value}: ${path} in body must be of type int32` });
    }
    if (schema.multipleOf !== undefined && value % schema.multipleOf !== 0) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${value}: ${path} in body should be a multiple of ${schema.multipleOf}` });
    }
  }

  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      causes.push({ type: 'FieldValueTooLong', field: path, message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
    }
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${value.length}: ${path} in body should have at least ${schema.minItems} items` });
    }
    if (schema['x-kubernetes-list-type'] === 'set') {
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const key = JSON.stringify(item);
        if (seen.has(key)) causes.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, message: `Duplicate value: ${key}` });
        seen.add(key);
      });
    }
    if (schema['x-kubernetes-list-type'] === 'map') duplicateMapKeys(schema['x-kubernetes-list-map-keys'] ?? [], value, path, causes);
    if (schema.items) value.forEach((item, i) => check(schema.items!, item, `${path}[${i}]`, causes, false));
  }

  if (isObject(value)) {
    for (const name of schema.required ?? []) {
      if (value[name] === undefined) causes.push({ type: 'FieldValueRequired', field: childPath(path, name), message: 'Required value' });
    }
    const count = Object.keys(value).length;
    if (schema.maxProperties !== undefined && count > schema.maxProperties) {
      causes.push({ type: 'FieldValueTooLong', field: path, message: `Too many: ${count}: must have at most ${schema.maxProperties} items` });
    }
    if (schema.minProperties !== undefined && count < schema.minProperties) {
      causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${count}: ${path} in body should have at least ${schema.minProperties} properties` });
    }
    for (const [key, child] of Object.entries(value)) {
      if ((isRoot && ROOT_FIELDS.has(key)) || child === undefined) continue;
      const prop = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (prop) check(prop, child, childPath(path, key), causes, false);
    }
    if (schema['x-kubernetes-embedded-resource']) {
      for (const name of ['apiVersion', 'kind']) {
        if (typeof value[name] !== 'string' || value[name] === '') causes.push({ type: 'FieldValueRequired', field: childPath(path, name), message: 'Required value: must not be empty' });
      }
    }
  }

  // Value validations over combinators (structural schemas use them only to constrain values).
  for (const sub of schema.allOf ?? []) check(sub, value, path, causes, false);
  if (schema.anyOf && !schema.anyOf.some((sub) => validate(sub, value, path).length === 0)) {
    causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${render(value)}: ${path} in body must match at least one schema (anyOf)` });
  }
  if (schema.oneOf && schema.oneOf.filter((sub) => validate(sub, value, path).length === 0).length !== 1) {
    causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${render(value)}: ${path} in body must match exactly one schema (oneOf)` });
  }
  if (schema.not && validate(schema.not, value, path).length === 0) {
    causes.push({ type: 'FieldValueInvalid', field: path, message: `Invalid value: ${render(value)}: ${path} in body must not match the schema (not)` });
  }
}

function matches(pattern: RegExp | undefined, value: string): boolean {
  return pattern ? pattern.test(value) : true;
}

/** Items of a list-type map with the same values in all the key fields. */
function duplicateMapKeys(keys: string[], items: unknown[], path: string, causes: Cause[]): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (!isObject(item)) return;
    const key = JSON.stringify(Object.fromEntries(keys.map((k) => [k, item[k]])));
    if (seen.has(key)) causes.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, message: `Duplicate value: ${key}` });
    seen.add(key);
  });
}

const patterns = new Map<string, RegExp | undefined>();

/**
 * A schema's pattern as a RegExp, compiled once. Patterns are written for Go's RE2: most mean
 * the same in JavaScript's Unicode mode, some (such as `\_`) only in its plain mode, and flags
 * at the start (`(?i)`, `^(?i)`) become JavaScript flags. A pattern JavaScript cannot compile at
 * all (RE2-only syntax) goes unchecked rather than refused, as kube-apiserver accepts it.
 */
function compiledPattern(pattern: string): RegExp | undefined {
  if (!patterns.has(pattern)) {
    const inline = /^(\^?)\(\?([ims]+)\)/.exec(pattern);
    const source = inline ? inline[1] + pattern.slice(inline[0].length) : pattern;
    const flags = inline?.[2] ?? '';
    let compiled: RegExp | undefined;
    for (const mode of ['u', '']) {
      try {
        compiled = new RegExp(source, flags + mode);
        break;
      } catch {
        // the next mode, or unchecked
      }
    }
    patterns.set(pattern, compiled);
  }
  return patterns.get(pattern);
}
