// CRDs reach the API server through client-node's typed serializer, which writes JSONSchemaProps
// fields only from their model names: crdForClient renames the raw schema keys so that nothing
// (preserve-unknown-fields, int-or-string, default, enum) is dropped on the way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crdForClient } from '../../src/cvo/apply.js';

test('crdForClient renames schema keywords, never property names', () => {
  const crd = {
    kind: 'CustomResourceDefinition',
    spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: {
      type: 'object',
      properties: {
        default: { type: 'string', enum: ['a'], default: 'a' },
        spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { n: { 'x-kubernetes-int-or-string': true } } },
        list: { type: 'array', items: { type: 'object', 'x-kubernetes-map-type': 'atomic' }, 'x-kubernetes-list-type': 'atomic' },
      },
    } } }] },
  };
  const out = crdForClient(crd);
  assert.deepEqual(out.spec.versions[0].schema.openAPIV3Schema.properties, {
    default: { type: 'string', _enum: ['a'], _default: 'a' },
    spec: { type: 'object', x_kubernetes_preserve_unknown_fields: true, properties: { n: { x_kubernetes_int_or_string: true } } },
    list: { type: 'array', items: { type: 'object', x_kubernetes_map_type: 'atomic' }, x_kubernetes_list_type: 'atomic' },
  });
  assert.equal((crd.spec.versions[0].schema.openAPIV3Schema.properties.spec as Record<string, unknown>)['x-kubernetes-preserve-unknown-fields'], true, 'input untouched');
});
