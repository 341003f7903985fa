// DefaultStorageClass admission, as kube-apiserver's plugin of that name: a claim created through
// the API that names no class (no storageClassName, no beta class annotation) gets the default
// StorageClass — the one annotated storageclass.kubernetes.io/is-default-class: "true", the
// newest if several are. A claim that says `storageClassName: ""` asks for no class and keeps it.
import type * as api from '../../api/index.js';
import { BETA_CLASS_ANNOTATION, defaultClass } from '../../kube/storage.js';
import { persistentvolumeclaims } from '../kinds/persistentvolumeclaims.js';
import { storageclasses } from '../kinds/storageclasses.js';
import { asKind } from '../kinds/strategy.js';
import { storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

const CLAIMS = persistentvolumeclaims.type;

export class DefaultStorageClass implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  mutate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (previous || type.group !== CLAIMS.group || type.resource !== CLAIMS.resource) return;
    const claim = asKind<api.PersistentVolumeClaim>(object);
    if (claim.spec?.storageClassName !== undefined && claim.spec.storageClassName !== null) return;
    if (claim.metadata.annotations?.[BETA_CLASS_ANNOTATION] !== undefined) return;
    const classes = this.storage.list(storagePrefix(storageclasses.type)).items.map((i) => asKind<api.StorageClass>(i.object));
    const chosen = defaultClass(classes);
    if (chosen) (claim.spec ??= {}).storageClassName = chosen.metadata.name;
  }
}
