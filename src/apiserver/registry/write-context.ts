// What a write through the API server carries besides the object (who writes, dry run, field
// validation, managedFields, warnings to return) and the hooks other parts of the server attach
// to writes (CRD registration, namespace clean-up, admission of certificates and object sizes).
import type { ManagedFieldsEntry } from '../apply/managed-fields.js';
import type { ResourceType } from './resource-type.js';
import type { UserInfo } from '../auth/request-attributes.js';

import type * as api from '../../api/index.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface WriteContext {
  dryRun?: boolean;
  /** Who writes, for metadata.managedFields; writes without one (the server's own) leave them as they are. */
  fieldManager?: string;
  /** managedFields already worked out (by an apply), stored as they are. */
  managedFields?: ManagedFieldsEntry[];
  /** The subresource a write came through when it is not status (scale), as managedFields name it. */
  managedSubresource?: string;
  /** What to do with fields a custom resource's schema does not declare (kube's default: Warn). */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /** Collects warnings for the response (`Warning` headers). */
  warnings?: string[];
  /** Who writes, for kinds that record it (a CSR's spec.username); the server's own writes have none. */
  user?: UserInfo;
  /**
   * The write is a client's request through the API: admission webhooks are called for it. The
   * server's own writes (garbage collection, namespace clean-up) do not go through them.
   */
  viaApi?: boolean;
  /**
   * The body is the registry's to change: decoded for this request alone (the write handlers),
   * so no copy is made of it. Other callers keep theirs, and the registry copies it.
   */
  ownsBody?: boolean;
}

/** Hooks other parts of the server attach to writes (CRD registration, namespace cleanup, …). */
export interface ResourceHooks {
  /** Runs before a create or update is stored (`context`: who writes, through which subresource); may change the object or throw an ApiError. */
  beforeWrite?(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, context: WriteContext & { subresource?: string }): void;
  /** Runs before an object is deleted (or its deletion starts); may throw an ApiError to refuse. */
  beforeDelete?(type: ResourceType, object: api.Unstructured, context: Pick<WriteContext, 'user'>): void;
  /** Runs after a write is stored (not for dry runs). */
  afterWrite?(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, deleted: boolean): void;
}
