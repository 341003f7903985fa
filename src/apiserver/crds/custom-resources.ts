// The strategy of custom resources, as kube-apiextensions-apiserver's customresource strategy:
// one per served version of a CRD, built from its type. Objects are stored at the CRD's storage
// version; their schema prunes unknown fields (reported as warnings, or refused under strict field
// validation), defaults them (on write and when read) and validates them; every change outside
// metadata (and outside status, when the status subresource is on) bumps the generation; a create
// may not set status when the status subresource is on; an update must say which resourceVersion
// it is based on; server-side apply merges lists by the schema's list types.
import { jsonEqual } from '../../common/json.js';
import { crdListTypes } from '../apply/field-sets.js';
import type * as api from '../../api/index.js';
import type { KindStrategy } from '../kinds/strategy.js';
import type { ResourceType } from '../registry/resource-type.js';
import { applyDefaults, prune, unknownFields, validate } from './schema.js';

/**
 * The generation rule of custom resources: any change outside metadata, and outside status too
 * when the status subresource is enabled.
 */
export function customResourceChanged(next: api.Unstructured, previous: api.Unstructured, statusSubresource: boolean): boolean {
  const content = (o: api.Unstructured): Record<string, unknown> => {
    const { metadata: _m, status, ...rest } = o;
    return statusSubresource ? rest : { ...rest, status };
  };
  return !jsonEqual(content(next), content(previous));
}

/** The strategy of one custom resource type (its `custom` facts say its schema and storage version). */
export function customResourceStrategy(type: ResourceType): KindStrategy {
  const schema = type.custom?.schema;
  return {
    type,
    storageVersion: type.custom?.storageVersion,
    unconditionalUpdate: false,
    listTypes: crdListTypes(schema),
    ...(schema && {
      unknownFields: (object: api.Unstructured) => unknownFields(schema, object),
      prune: (object: api.Unstructured) => void prune(schema, object),
      defaults: (object: api.Unstructured) => void applyDefaults(schema, object),
      readDefaults: (object: api.Unstructured) => void applyDefaults(schema, object),
    }),
    validate: (object) => validate(schema, object),
    prepareForCreate: (object) => {
      if (type.status) delete object.status;
    },
    generation: (next, previous) => customResourceChanged(next, previous, type.status),
  };
}
