// The Kubernetes object metadata types both sides of the API share (metav1.ObjectMeta and
// metav1.OwnerReference, as far as bosun reads them): the embedded API server, the controller
// toolkit and the components each use these rather than declaring their own, and none of them
// imports the others for it.

/** metav1.OwnerReference: an object this one depends on, in its namespace (or cluster-scoped). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** This owner is the managing controller (at most one reference says so). */
  controller?: boolean;
  /** A foreground deletion of the owner waits for this object. */
  blockOwnerDeletion?: boolean;
}

/** metav1.ObjectMeta, the fields bosun reads and writes. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}
