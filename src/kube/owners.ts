// Owner references: the controller owner of an object, and the KeyMapper that reconciles it when
// an owned object changes (controller-runtime's EnqueueRequestForOwner with OnlyControllerOwner):
// a Pod's events enqueue its ReplicaSet, a ReplicaSet's its Deployment. Owners live in the
// owned object's namespace (or are cluster-scoped); an ownerReference never crosses namespaces.
import type { OwnerReference } from '../common/kube-types.js';
import type * as api from '../api/index.js';
import type { KeyMapper } from './controller.js';

export type { OwnerReference };

/** The reference marked controller: true, if any. */
export function controllerOf(object: { metadata?: { ownerReferences?: OwnerReference[] } }): OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** The group of an apiVersion ('' for core "v1"). */
const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

/**
 * Maps an object to its controller owner's key when that owner is a `kind` of `group` (any
 * version; '' for core); undefined otherwise. `namespaced: false` for cluster-scoped owners.
 */
export function enqueueOwner(owner: { group: string; kind: string; namespaced?: boolean }): KeyMapper {
  return (object) => {
    const ref = controllerOf(object);
    if (!ref || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group) return undefined;
    const namespace = owner.namespaced === false ? undefined : object.metadata?.namespace;
    return namespace ? `${namespace}/${ref.name}` : ref.name;
  };
}

/** An ownerReference making `owner` the controller of what it is put on. */
export function controllerReference(owner: api.KubeObject): OwnerReference {
  return { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata.name, uid: owner.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}
