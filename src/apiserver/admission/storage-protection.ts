// StorageObjectInUseProtection admission, as kube-apiserver's plugin of that name: every claim
// created through the API gets the finalizer kubernetes.io/pvc-protection and every volume
// kubernetes.io/pv-protection, so that deleting one only marks it while a pod uses the claim or a
// claim is bound to the volume; the controller manager's pvc-protection and pv-protection
// controllers remove the finalizer once that is no longer so.
import type * as api from '../../api/index.js';
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../../kube/storage.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { AdmissionPlugin } from './plugin.js';

const FINALIZERS = new Map([['persistentvolumeclaims', PVC_PROTECTION_FINALIZER], ['persistentvolumes', PV_PROTECTION_FINALIZER]]);

export class StorageObjectInUseProtection implements AdmissionPlugin {
  mutate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    const finalizer = type.group === '' ? FINALIZERS.get(type.resource) : undefined;
    if (previous || !finalizer) return;
    const finalizers = (object.metadata.finalizers ??= []);
    if (!finalizers.includes(finalizer)) finalizers.push(finalizer);
  }
}
