// OpenAPI schemas of meta/v1: object metadata, owner references, managedFields, label
// selectors and conditions, shared by every kind.
import { bool, int, list, META, object, str, stringMap, strings, time, type Schema } from './builders.js';

export const META_V1_SCHEMAS: Record<string, Schema> = {
  [`${META}.ObjectMeta`]: object('Metadata every persisted resource has.', {
    name: str('Unique name within a namespace (or the cluster, for cluster-scoped kinds). Required when creating, unless generateName is set. Cannot be updated.'),
    generateName: str('A prefix the server uses to make up a unique name when name is empty: five random characters are appended.'),
    namespace: str('The namespace the object lives in; empty for cluster-scoped kinds. Must be a DNS label. Cannot be updated.'),
    uid: str('A value unique in time and space that the server assigns on create. Read-only.'),
    resourceVersion: str('An opaque value that changes on every write, for optimistic concurrency and watches. Clients pass it back unchanged. Read-only.'),
    generation: int('A sequence number of changes to the desired state, set by the server. Read-only.', 'int64'),
    creationTimestamp: time('When the server created this object (UTC). Read-only.'),
    deletionTimestamp: time('When this object will be deleted: set by the server when a deletion is requested while finalizers remain. Read-only.'),
    deletionGracePeriodSeconds: int('Seconds the object is allowed to terminate gracefully before it is removed. Read-only.', 'int64'),
    labels: stringMap('Key/value pairs used to organise and select objects (label selectors).'),
    annotations: stringMap('Key/value pairs for arbitrary, non-identifying data that tools and controllers store with the object.'),
    ownerReferences: list(`${META}.OwnerReference`, 'The objects this one depends on. When every owner is gone, the garbage collector removes this object. At most one owner may be the managing controller.', ['uid']),
    finalizers: { ...strings('Conditions that must be cleared before the object is deleted: the object stays, with deletionTimestamp set, until this list is empty.'), 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' },
    managedFields: list(`${META}.ManagedFieldsEntry`, 'Which field manager owns which fields, and by which operation (Apply or Update). Maintained by the server for server-side apply.'),
  }),
  [`${META}.OwnerReference`]: object('Identifies an owner of an object: enough to find it, in the same namespace.', {
    apiVersion: str('API version of the owner.'),
    kind: str('Kind of the owner.'),
    name: str('Name of the owner.'),
    uid: str('UID of the owner.'),
    controller: bool('True when the owner is the managing controller of this object.'),
    blockOwnerDeletion: bool('When true, and the owner has the foregroundDeletion finalizer, the owner cannot be removed before this object is.'),
  }, ['apiVersion', 'kind', 'name', 'uid']),
  [`${META}.ManagedFieldsEntry`]: object('The fields one manager manages, through one operation and API version.', {
    manager: str('The name of the field manager (the fieldManager of its requests, or the client program).'),
    operation: str('The operation that made this entry: Apply or Update.'),
    apiVersion: str('The API version the fields are expressed in.'),
    time: time('When the fields of this entry last changed.'),
    fieldsType: str('The format of fieldsV1; only "FieldsV1" exists.'),
    fieldsV1: { type: 'object', description: 'The set of fields, as a tree of f:<name>, k:<key> and v:<value> elements.' },
    subresource: str('The subresource the write went to (for example "status"); empty for the main resource.'),
  }),
  [`${META}.LabelSelector`]: object('Selects objects by label: every matchLabels pair and every matchExpressions requirement must hold. An empty selector matches everything; a null one matches nothing.', {
    matchLabels: stringMap('Labels that must be present with exactly these values.'),
    matchExpressions: list(`${META}.LabelSelectorRequirement`, 'Requirements on labels, all of which must hold.'),
  }),
  [`${META}.LabelSelectorRequirement`]: object('A requirement on one label key.', {
    key: str('The label key.'),
    operator: str('How the key relates to the values: In, NotIn, Exists or DoesNotExist.'),
    values: strings('The values for In and NotIn (non-empty); empty for Exists and DoesNotExist.'),
  }, ['key', 'operator']),
  [`${META}.Condition`]: object('One aspect of the current state of an object.', {
    type: str('The type of condition, in CamelCase.'),
    status: str('True, False or Unknown.'),
    observedGeneration: int('The metadata.generation the condition was based on.', 'int64'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('A CamelCase, machine-readable reason for the last transition.'),
    message: str('A human-readable explanation of the last transition.'),
  }, ['type', 'status', 'lastTransitionTime', 'reason', 'message']),
};
