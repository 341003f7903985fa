// The object header every Kubernetes object has (apiVersion, kind, metadata) and the shapes kinds
// share (conditions, references), typed as the API serves them on the wire: times are RFC 3339
// strings, not Dates. Every typed kind in src/api is its body joined with this header.
import type * as k8s from '@kubernetes/client-node';

/**
 * A client-node model as JSON on the wire. client-node's models type times as Date because its
 * serialiser turns them into Dates; bosun reads and writes the JSON as the server sends it, where a
 * time is an RFC 3339 string.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** metav1.ObjectMeta. The name is always there on a stored object (empty only with generateName). */
export type ObjectMeta = Wire<k8s.V1ObjectMeta> & { name: string };

/** metav1.OwnerReference. */
export type OwnerReference = Wire<k8s.V1OwnerReference>;

/** What every object has: its type and its metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/**
 * An object of a kind this code does not know (the CVO's manifests, the API server's storage):
 * its header is typed, its body must be narrowed before it is read.
 */
export type Unstructured = KubeObject & { [field: string]: unknown };

/** metav1.Condition, and the older per-kind conditions that share its core fields. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** A kind's body (spec, status, …) joined with the object header. */
export type Kind<Body> = KubeObject & Omit<Body, 'apiVersion' | 'kind' | 'metadata'>;

/** A client-node model made a wire-typed kind with the object header. */
export type CoreKind<Model> = Kind<Wire<Model>>;

/** A list as the API serves it. */
export interface List<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}
