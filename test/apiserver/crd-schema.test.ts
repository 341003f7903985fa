// Structural schemas of CRDs: defaulting, pruning, validation causes, structural checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults, prune, validate, type JSONSchemaProps } from '../../src/apiserver/crds/schema.js';
import { structuralProblems } from '../../src/apiserver/crds/structural.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
        name: { type: 'string', pattern: '^[a-z]+$', maxLength: 5 },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        ratio: { type: 'number', nullable: true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

test('defaulting fills missing fields, deepest included', () => {
  const obj = applyDefaults(schema, { spec: {} }) as { spec: Record<string, unknown> };
  assert.deepEqual(obj.spec, { size: 1, mode: 'fast' });
});

test('null in a non-nullable field is defaulted or dropped; nullable nulls stay', () => {
  const obj = applyDefaults(schema, { spec: { size: null, name: null, ratio: null } }) as { spec: Record<string, unknown> };
  assert.deepEqual(obj.spec, { size: 1, ratio: null, mode: 'fast' });
  assert.deepEqual(validate(schema, obj), []);
});

test('pruning drops undeclared fields but keeps metadata and preserved subtrees', () => {
  const obj = prune(schema, {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a' },
    junk: 1,
    spec: { size: 2, extra: true, config: { anything: { goes: 1 } }, labels: { a: 'b' } },
  });
  assert.deepEqual(obj, { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'a' }, spec: { size: 2, config: { anything: { goes: 1 } }, labels: { a: 'b' } } });
});

test('validation causes name the field', () => {
  const cases: Array<[unknown, Array<[string, string]>]> = [
    [{ spec: { size: 3 } }, []],
    [{ spec: {} }, [['FieldValueRequired', 'spec.size']]],
    [{ spec: { size: 'big' } }, [['FieldValueTypeInvalid', 'spec.size']]],
    [{ spec: { size: 11 } }, [['FieldValueInvalid', 'spec.size']]],
    [{ spec: { size: 1, mode: 'medium' } }, [['FieldValueNotSupported', 'spec.mode']]],
    [{ spec: { size: 1, name: 'ABC' } }, [['FieldValueInvalid', 'spec.name']]],
    [{ spec: { size: 1, name: 'abcdefg' } }, [['FieldValueTooLong', 'spec.name']]],
    [{ spec: { size: 1, port: 80 } }, []],
    [{ spec: { size: 1, port: 'http' } }, []],
    [{ spec: { size: 1, port: true } }, [['FieldValueTypeInvalid', 'spec.port']]],
    [{ spec: { size: 1, tags: ['a', 3] } }, [['FieldValueTypeInvalid', 'spec.tags[1]']]],
    [{ spec: { size: 1, tags: ['a', 'b', 'c'] } }, [['FieldValueTooLong', 'spec.tags']]],
    [{ spec: { size: 1, labels: { a: 1 } } }, [['FieldValueTypeInvalid', 'spec.labels.a']]],
    [{ spec: { size: 1, ratio: null } }, []],
    [{ spec: { size: 1 }, status: { ready: 'yes' } }, [['FieldValueTypeInvalid', 'status.ready']]],
  ];
  for (const [obj, expected] of cases) {
    assert.deepEqual(
      validate(schema, obj).map((c) => [c.type, c.field]),
      expected,
      JSON.stringify(obj),
    );
  }
  assert.match(validate(schema, { spec: { size: 1, mode: 'x' } })[0].message, /Unsupported value: "x": supported values: "fast", "slow"/);
});

test('structural check', () => {
  assert.deepEqual(structuralProblems(schema), []);
  assert.deepEqual(structuralProblems({ type: 'object', properties: { a: {} } }), ['spec.validation.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields']);
  assert.equal(structuralProblems({ type: 'object', properties: { a: { type: 'array' } } }).length, 1);
  assert.equal(structuralProblems({ type: 'object', properties: { a: { type: 'string', anyOf: [{ type: 'string' }] } } }).length, 1);
  assert.equal(structuralProblems({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }).length, 0);
  const bad: Array<[JSONSchemaProps, RegExp]> = [
    [{ type: 'object', properties: { a: { type: 'string', 'x-kubernetes-int-or-string': true } } }, /properties\[a\]\.type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is true/],
    [{ type: 'object', properties: { a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } } }, /must be true or undefined/],
    [{ type: 'object', properties: { a: { type: 'string', 'x-kubernetes-embedded-resource': true } } }, /must be object if x-kubernetes-embedded-resource/],
    [{ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }, /properties\[metadata\]\.properties\[labels\]: Forbidden/],
    [{ type: 'string' }, /must be object at the root/],
    [{ type: 'object', properties: { a: { type: 'object', properties: {}, additionalProperties: { type: 'string' } } } }, /mutually exclusive/],
  ];
  for (const [s, message] of bad) assert.match(structuralProblems(s).join('\n'), message, JSON.stringify(s));
  assert.deepEqual(structuralProblems({ type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } } }), []);
});

test('nulls: non-nullable map values pruned, list items defaulted, int-or-string null refused in a list', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      optional: { type: 'object', additionalProperties: { type: 'string', nullable: true } },
      sizes: { type: 'array', items: { type: 'integer', default: 1 } },
      ports: { type: 'array', items: { 'x-kubernetes-int-or-string': true } },
    },
  };
  const obj = applyDefaults(s, { labels: { a: null, b: 'x' }, optional: { a: null }, sizes: [null, 3], ports: [null] });
  assert.deepEqual(obj, { labels: { b: 'x' }, optional: { a: null }, sizes: [1, 3], ports: [null] });
  assert.deepEqual(validate(s, obj).map((c) => c.message), ['Invalid value: "null": ports[0] in body must be of type integer,string: "null"']);
});

test('structural: the forms kube-apiserver accepts', () => {
  const ok: JSONSchemaProps[] = [
    { type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } },
    { type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^[0-9]+%?$' }] } } },
    { type: 'object', properties: { a: { type: 'string', anyOf: [{ pattern: '^a' }, { maxLength: 3 }], not: { enum: ['abc'] } } } },
    { type: 'object', properties: { a: { type: 'integer' } }, anyOf: [{ properties: { a: { minimum: 1 } } }, { required: ['a'] }] },
    { type: 'object', properties: { raw: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } },
    { type: 'object', properties: { c: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } } } },
    { type: 'object', properties: { s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } }, m: { type: 'object', 'x-kubernetes-map-type': 'atomic' } } },
    { type: 'object', properties: { p: { type: 'string', pattern: '^[a-z\\_]+$' } } },
    { type: 'object', properties: { t: { 'x-kubernetes-int-or-string': true, anyOf: null, allOf: [{ not: { enum: [0] } }, { not: { enum: [''] } }] } } } as unknown as JSONSchemaProps,
  ];
  for (const s of ok) assert.deepEqual(structuralProblems(s), [], JSON.stringify(s));
});

test('structural: what kube-apiserver refuses, in its words', () => {
  const p = 'spec.validation.openAPIV3Schema';
  const bad: Array<[JSONSchemaProps, string]> = [
    [{ type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'boolean' }] } } }, `${p}.properties[a].anyOf[1].type: Forbidden: must be empty to be structural`],
    [{ type: 'object', properties: { a: { type: 'string', allOf: [{ description: 'x' }] } } }, `${p}.properties[a].allOf[0].description: Forbidden: must be empty to be structural`],
    [{ type: 'object', properties: { a: { type: 'string', oneOf: [{ nullable: true }] } } }, `${p}.properties[a].oneOf[0].nullable: Forbidden: must be false to be structural`],
    [{ type: 'object', properties: { a: { type: 'object', not: { default: {} } } } }, `${p}.properties[a].not.default: Forbidden: must be undefined to be structural`],
    [{ type: 'object', properties: { a: { type: 'object', anyOf: [{ 'x-kubernetes-preserve-unknown-fields': true }] } } }, `${p}.properties[a].anyOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`],
    [{ type: 'object', properties: { a: { type: 'object', allOf: [{ properties: { metadata: {} } }] } } }, `${p}.properties[a].allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`],
    [{ type: 'object', anyOf: [{ properties: { b: { minimum: 1 } } }] }, `${p}.properties[b]: Required value: because it is defined in ${p}.anyOf[0].properties[b]`],
    [{ type: 'object', properties: { a: { type: 'array', items: { type: 'object' } } }, allOf: [{ properties: { a: { items: { properties: { x: { minimum: 1 } } } } } }] }, `${p}.properties[a].items.properties[x]: Required value: because it is defined in ${p}.allOf[0].properties[a].items.properties[x]`],
    [{ type: 'object', properties: { a: { type: 'array', items: {} } } }, `${p}.properties[a].items.type: Required value: must not be empty for specified array items`],
    [{}, `${p}.type: Required value: must not be empty at the root`],
    [{ type: 'object', additionalProperties: { type: 'string' } }, `${p}.additionalProperties: Forbidden: must not be used at the root`],
    [{ type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } }, `${p}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`],
    [{ type: 'object', properties: { r: { type: 'object', 'x-kubernetes-embedded-resource': true } } }, `${p}.properties[r].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`],
    [{ type: 'object', properties: { r: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, properties: { kind: { type: 'integer' } } } } }, `${p}.properties[r].properties[kind].type: Invalid value: "integer": must be string`],
    [{ type: 'object', properties: { l: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' } } }, `${p}.properties[l].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`],
    [{ type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: { n: { type: 'string' } } }, 'x-kubernetes-list-type': 'map' } } }, `${p}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`],
    [{ type: 'object', properties: { l: { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'string' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['m'] } } }, `${p}.properties[l].x-kubernetes-list-map-keys: Invalid value: ["m"]: entries must all be names of item properties`],
    [{ type: 'object', properties: { l: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-map-keys': ['m'] } } }, `${p}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`],
    [{ type: 'object', properties: { m: { type: 'object', 'x-kubernetes-map-type': 'deep' } } }, `${p}.properties[m].x-kubernetes-map-type: Unsupported value: "deep": supported values: "atomic", "granular"`],
    [{ type: 'object', properties: { m: { type: 'string', 'x-kubernetes-map-type': 'atomic' } } }, `${p}.properties[m].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`],
    [{ type: 'object', properties: { l: { type: 'object', 'x-kubernetes-list-type': 'atomic' } } }, `${p}.properties[l].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`],
    [{ type: 'object', properties: { l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['n'], items: { type: 'object', properties: { n: { type: 'string' } } } } } }, `${p}.properties[l].items.properties[n].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`],
    [{ type: 'object', properties: { l: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', nullable: true } } } }, `${p}.properties[l].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set`],
    [{ type: 'object', properties: { l: { type: 'array', uniqueItems: true, items: { type: 'string' } } } }, `${p}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`],
    [{ type: 'object', properties: { r: { $ref: '#/definitions/x' } } } as unknown as JSONSchemaProps, `${p}.properties[r].$ref: Forbidden: $ref is not supported`],
    [{ type: 'object', nullable: true }, `${p}.nullable: Forbidden: nullable cannot be true at the root`],
  ];
  for (const [s, problem] of bad) assert.ok(structuralProblems(s).includes(problem), `${problem}\nnot in\n${structuralProblems(s).join('\n')}`);
});

test('list-type map: items with the same key values are duplicates', () => {
  const s: JSONSchemaProps = { type: 'object', properties: { c: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type', 'scope'], items: { type: 'object', properties: { type: { type: 'string' }, scope: { type: 'string' } } } } } };
  assert.deepEqual(validate(s, { c: [{ type: 'A', scope: 'x' }, { type: 'A', scope: 'y' }] }), []);
  assert.deepEqual(validate(s, { c: [{ type: 'A', scope: 'x' }, { type: 'A', scope: 'x' }] }).map((c) => [c.type, c.field, c.message]), [['FieldValueDuplicate', 'c[1]', 'Duplicate value: {"type":"A","scope":"x"}']]);
});

test('patterns written for RE2: plain-mode escapes and a leading (?i) are checked, RE2-only syntax is not refused', () => {
  const s = (pattern: string): JSONSchemaProps => ({ type: 'object', properties: { v: { type: 'string', pattern } } });
  assert.deepEqual(validate(s('^[a-z\\_]+$'), { v: 'a_b' }), []);
  assert.equal(validate(s('^[a-z\\_]+$'), { v: 'A' }).length, 1);
  assert.deepEqual(validate(s('^(?i)text/[a-z]+$'), { v: 'TEXT/html' }), []);
  assert.equal(validate(s('^(?i)text/[a-z]+$'), { v: 'image/png' }).length, 1);
  assert.deepEqual(validate(s('^[[:alpha:]]+(?P<n>x)$'), { v: 'anything' }), []);
});
