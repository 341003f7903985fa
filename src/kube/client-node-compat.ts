// Working around @kubernetes/client-node 1.x's typed serialisation, which every generic call
// (KubernetesObjectApi) goes through for kinds it knows.
import type * as k8s from '@kubernetes/client-node';

type Obj = Record<string, any>;

/**
 * client-node serialises a CustomResourceDefinition through its typed model, whose schema fields
 * are named `x_kubernetes_int_or_string`, `_ref`, … and which silently drops the wire names
 * (`x-kubernetes-int-or-string`, `$ref`). CRDs are renamed to the model's names on the way out
 * and back on the way in, so that what reaches the server is what the manifest says.
 */
function renameSchemaKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => renameSchemaKeys(v, rename));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [rename(k), renameSchemaKeys(v, rename)]));
}
const toModelNames = (key: string) => (key.startsWith('x-kubernetes-') ? key.replace(/-/g, '_') : key.startsWith('$') ? `_${key.slice(1)}` : key);
const toWireNames = (key: string) => (key.startsWith('x_kubernetes_') ? key.replace(/_/g, '-') : key === '_ref' || key === '_schema' ? `$${key.slice(1)}` : key);

export function forClient(object: Obj): k8s.KubernetesObject {
  if (object.kind !== 'CustomResourceDefinition') return object as k8s.KubernetesObject;
  return { ...object, spec: renameSchemaKeys(object.spec, toModelNames) } as k8s.KubernetesObject;
}

export function fromClient(object: Obj): Obj {
  if (object.kind !== 'CustomResourceDefinition') return object;
  return { ...object, spec: renameSchemaKeys(object.spec, toWireNames) };
}

