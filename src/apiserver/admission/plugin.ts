// The shape of the API server's built-in admission plugins (LimitRanger, Priority, PodSecurity,
// ResourceQuota), run for writes through the API in the order the server lists them, at the three
// points of a write where kube-apiserver runs its own: before the mutating webhooks (a plugin may
// change the object), after the kind's validation and before the validating webhooks (it may
// refuse, or warn), and last before the object is stored (it may refuse, or take what the write
// uses: a quota). `previous` is the stored object on an update; undefined on a create.
import type * as api from '../../api/index.js';
import type { ResourceType } from '../registry/resource-type.js';

export interface AdmissionPlugin {
  mutate?(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void;
  validate?(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, warnings: string[] | undefined): void;
  charge?(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, dryRun: boolean): Promise<void>;
}
