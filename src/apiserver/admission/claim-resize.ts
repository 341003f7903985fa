// PersistentVolumeClaimResize admission, as kube-apiserver's plugin of that name: a claim's
// storage request may grow only when the claim is Bound and its StorageClass (the same before and
// after) says `allowVolumeExpansion: true`; otherwise the update is refused, 403, in kube's words.
// (Shrinking is the claim's own update rule, kinds/persistentvolumeclaims.ts.)
import type * as api from '../../api/index.js';
import { quantityMilli } from '../../kube/quantity.js';
import { claimClass } from '../../kube/storage.js';
import { errors } from '../errors.js';
import { persistentvolumeclaims } from '../kinds/persistentvolumeclaims.js';
import { storageclasses } from '../kinds/storageclasses.js';
import { asKind } from '../kinds/strategy.js';
import { storageKey, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

const CLAIMS = persistentvolumeclaims.type;

const requested = (claim: api.PersistentVolumeClaim): bigint => {
  const storage = claim.spec?.resources?.requests?.storage;
  return storage === undefined ? 0n : quantityMilli(storage);
};

export class PersistentVolumeClaimResize implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  validate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (!previous || type.group !== CLAIMS.group || type.resource !== CLAIMS.resource) return;
    const claim = asKind<api.PersistentVolumeClaim>(object);
    const before = asKind<api.PersistentVolumeClaim>(previous);
    if (requested(claim) <= requested(before)) return;
    const forbidden = (reason: string) => errors.forbiddenObject(CLAIMS.resource, CLAIMS.group, claim.metadata.name, reason);
    if (before.status?.phase !== 'Bound') throw forbidden('Only bound persistent volume claims can be expanded');
    const className = claimClass(claim);
    const stored = className !== '' && className === claimClass(before) ? this.storage.get(storageKey(storageclasses.type, undefined, className)) : undefined;
    if (stored && asKind<api.StorageClass>(stored.object).allowVolumeExpansion === true) return;
    throw forbidden('only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
  }
}
