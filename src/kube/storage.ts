// What the API server's storage kinds and admission, the PV controller, the provisioner and the
// scheduler all read the same way: the annotations and finalizers Kubernetes names (kept
// verbatim, since kubectl and users' manifests use them), a claim's and a volume's class (the
// beta annotation before the field, as kube's helpers read them), the default StorageClass, and
// access modes as kubectl abbreviates them.
import type * as api from '../api/index.js';

/** A StorageClass marked with this annotation ("true") is the default for claims that name none. */
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';
/** The class a claim or volume names in its annotation, from before `storageClassName` existed. */
export const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** On a claim and a volume: the binder finished binding them. */
export const BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** On a claim and a volume: the binder (not the user) made the binding. */
export const BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** On a volume: the provisioner that made it. */
export const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
/** On a claim: the provisioner asked to make its volume. */
export const STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
/** On a claim of a WaitForFirstConsumer class: the node the scheduler chose for its first pod. */
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/** Kept on a claim while a pod uses it (StorageObjectInUseProtection). */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
/** Kept on a volume while a claim is bound to it. */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const SHORT_ACCESS_MODES: [string, string][] = [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']];

/** Access modes as kubectl prints them: RWO, ROX, RWX, RWOP in that order, comma-joined. */
export function accessModesString(modes: string[] | undefined): string {
  return SHORT_ACCESS_MODES.filter(([mode]) => (modes ?? []).includes(mode)).map(([, short]) => short).join(',');
}

/** Whether a class is marked as the default (the GA annotation, or the beta one). */
export function isDefaultClass(sc: api.StorageClass): boolean {
  const annotations = sc.metadata.annotations ?? {};
  return annotations[DEFAULT_CLASS_ANNOTATION] === 'true' || annotations[BETA_DEFAULT_CLASS_ANNOTATION] === 'true';
}

/** The default class: among those marked, the newest (then the first by name), as kube chooses since 1.28. */
export function defaultClass(classes: api.StorageClass[]): api.StorageClass | undefined {
  return classes.filter(isDefaultClass).sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name))[0];
}

/** The class a claim asks for ("" for none): the beta annotation if set, else spec.storageClassName. */
export function claimClass(pvc: api.PersistentVolumeClaim): string {
  return pvc.metadata.annotations?.[BETA_CLASS_ANNOTATION] ?? pvc.spec?.storageClassName ?? '';
}

/** The class of a volume ("" for none), read as a claim's is. */
export function volumeClass(pv: api.PersistentVolume): string {
  return pv.metadata.annotations?.[BETA_CLASS_ANNOTATION] ?? pv.spec?.storageClassName ?? '';
}
