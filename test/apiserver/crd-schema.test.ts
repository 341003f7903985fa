// Structural schemas of CRDs: defaulting, pruning, validation causes, structural checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults, prune, structuralProblems, validate, type JSONSchemaProps } from '../../src/apiserver/crd-schema.js';

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
});
