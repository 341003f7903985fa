// Working around @kubernetes/client-node 1.x's typed serialisation, which every generic call
// (KubernetesObjectApi) goes through for kinds it knows. Its JSONSchemaProps model writes a field
// only from its model name (`x_kubernetes_preserve_unknown_fields`, `_default`, `_enum`, `ref`
// for `$ref`), so a CRD's schema keys under their wire names would be dropped silently — taking
// preserve-unknown-fields, int-or-string, defaults and enums with them. CRDs are renamed to the
// model's names on the way out (forClient) and back on the way in (fromClient), walking the schema
// by its structure so that a *property* called `default` is left alone.
import type * as k8s from '@kubernetes/client-node';

type Obj = Record<string, any>;

const TO_MODEL: Record<string, string> = { default: '_default', enum: '_enum', $ref: 'ref', $schema: 'schema' };
const TO_WIRE: Record<string, string> = Object.fromEntries(Object.entries(TO_MODEL).map(([k, v]) => [v, k]));
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', 'dependencies']);
const SCHEMA_ONE = new Set(['items', 'additionalProperties', 'additionalItems', 'not']);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf']);

function mapSchema(schema: unknown, rename: (key: string) => string): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema as Obj).map(([key, value]) => {
      const name = rename(key);
      if (SCHEMA_MAPS.has(key) && value && typeof value === 'object') return [name, Object.fromEntries(Object.entries(value as Obj).map(([p, s]) => [p, mapSchema(s, rename)]))];
      if (SCHEMA_ONE.has(key)) return [name, mapSchema(value, rename)];
      if (SCHEMA_LIST.has(key) && Array.isArray(value)) return [name, value.map((s) => mapSchema(s, rename))];
      return [name, value];
    }),
  );
}

const toModel = (key: string) => (key.startsWith('x-kubernetes-') ? key.replace(/-/g, '_') : (TO_MODEL[key] ?? key));
const toWire = (key: string) => (key.startsWith('x_kubernetes_') ? key.replace(/_/g, '-') : (TO_WIRE[key] ?? key));

function mapCrd(crd: Obj, rename: (key: string) => string): Obj {
  if (crd.kind !== 'CustomResourceDefinition' || !Array.isArray(crd.spec?.versions)) return crd;
  return {
    ...crd,
    spec: {
      ...crd.spec,
      versions: crd.spec.versions.map((v: Obj) => (v.schema?.openAPIV3Schema ? { ...v, schema: { ...v.schema, openAPIV3Schema: mapSchema(v.schema.openAPIV3Schema, rename) } } : v)),
    },
  };
}

/** An object in the shape client-node serialises faithfully (CRD schemas under model names). */
export function forClient(object: Obj): k8s.KubernetesObject {
  return mapCrd(object, toModel) as k8s.KubernetesObject;
}

/** An object client-node returned, back in its wire shape. */
export function fromClient(object: Obj): Obj {
  return mapCrd(object, toWire);
}
