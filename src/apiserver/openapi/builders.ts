// Small constructors for the hand-written OpenAPI v3 schemas of the built-in kinds, in the shape
// kube-apiserver publishes (references wrapped in allOf so that a field can carry its own
// description; keyed lists with their strategic-merge metadata, which kubectl builds apply
// patches from).

export type Schema = Record<string, unknown>;

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const CORE = 'io.k8s.api.core.v1';

export const ref = (name: string, description?: string): Schema => ({ allOf: [{ $ref: `#/components/schemas/${name}` }], default: {}, ...(description ? { description } : {}) });
export const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
export const int = (description: string, format = 'int32'): Schema => ({ type: 'integer', format, description });
export const bool = (description: string): Schema => ({ type: 'boolean', description });
export const time = (description: string): Schema => ({ type: 'string', format: 'date-time', description });
export const intOrString = (description: string): Schema => ({ type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true, description });
export const strings = (description: string): Schema => ({ type: 'array', items: { type: 'string', default: '' }, description });
export const stringMap = (description: string): Schema => ({ type: 'object', additionalProperties: { type: 'string', default: '' }, description });
export const list = (item: string, description: string, keys?: string[], strategy = 'merge'): Schema => ({
  type: 'array', items: { allOf: [{ $ref: `#/components/schemas/${item}` }], default: {} }, description,
  ...(keys ? { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys, 'x-kubernetes-patch-merge-key': keys[0], 'x-kubernetes-patch-strategy': strategy } : {}),
});
export const free = (description: string): Schema => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description });
export const object = (description: string, properties: Record<string, Schema>, required?: string[]): Schema => ({
  type: 'object', description, properties, ...(required ? { required } : {}),
});

/** apiVersion, kind and metadata, as every top-level kind has them. */
export function typeMeta(): Record<string, Schema> {
  return {
    apiVersion: str('The versioned schema of this object (group/version). The server converts recognised versions and may reject others.'),
    kind: str('The REST resource this object represents, in CamelCase. Servers may infer it from the endpoint the client writes to; it cannot be changed.'),
    metadata: ref(`${META}.ObjectMeta`, "Standard object metadata: name, namespace, labels, annotations, owners and the server's bookkeeping."),
  };
}

export function kind(description: string, properties: Record<string, Schema>): Schema {
  return object(description, { ...typeMeta(), ...properties });
}

export const SPEC = 'The desired behaviour, as the user or a controller declares it.';
export const STATUS = 'The most recently observed state, written by the system; it may lag behind. Read-only for users.';
