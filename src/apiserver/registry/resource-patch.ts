// Patches, as kube-apiserver's patch handler applies them: JSON, merge and strategic merge
// patches as a read-modify-write retried when another writer got there first, and server-side
// apply (merged by apply/server-side-apply.ts, owned fields recorded in managedFields), which creates
// the object when it is absent. The writes themselves go through the object store (resources.ts).
import { ApiError, errors, type StatusDetails } from '../errors.js';
import { strategyFor } from '../kinds/index.js';
import type { ListTypes } from '../apply/field-sets.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, PatchError } from '../apply/patch.js';
import { apiVersionOf, storageKey, type ResourceType } from './resource-type.js';
import { serverSideApply } from '../apply/server-side-apply.js';
import type { KubeObject, Storage, StoredItem } from '../storage/types.js';
import type { PatchType, WriteContext } from './write-context.js';
import type * as api from '../../api/index.js';


/** What patches need of the object store. */
export interface PatchTarget {
  readonly store: Storage;
  checkKind(type: ResourceType, object: unknown): asserts object is KubeObject;
  getItem(type: ResourceType, namespace: string | undefined, name: string): StoredItem;
  present(type: ResourceType, object: StoredItem['object']): KubeObject;
  listTypes(type: ResourceType): ListTypes;
  create(type: ResourceType, namespace: string | undefined, body: unknown, ctx?: WriteContext): Promise<KubeObject>;
  update(type: ResourceType, namespace: string | undefined, name: string, body: unknown, options?: WriteContext & { subresource?: string; basedOn?: StoredItem }): Promise<KubeObject>;
}

/** Patches an object (JSON, merge, strategic merge), or applies a configuration to it (apply). */
export async function patchObject(
  target: PatchTarget,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  patchType: PatchType,
  patch: unknown,
  options: WriteContext & { subresource?: string; force?: boolean } = {},
): Promise<KubeObject> {
  if (patchType === 'strategic' && !type.builtin) {
    throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
  }
  if (patchType === 'apply' && !options.fieldManager) {
    throw errors.invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' }]);
  }
  if (patchType !== 'apply' && options.force !== undefined) {
    throw errors.invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' }]);
  }
  if (patchType === 'apply') return applyObject(target, type, namespace, name, patch, options);
  // Read-modify-write, retried when another writer got there first (as kube-apiserver does
  // for patches that carry no resourceVersion of their own).
  for (let attempt = 0; ; attempt++) {
    const current = target.getItem(type, namespace, name);
    const base = target.present(type, current.object);
    let patched: KubeObject;
    try {
      switch (patchType) {
        case 'json':
          patched = applyJsonPatch(base, patch);
          break;
        case 'merge':
          patched = applyMergePatch(base, patch);
          break;
        case 'strategic':
          patched = applyStrategicMergePatch(base, patch);
          break;
      }
    } catch (e) {
      if (e instanceof PatchError) throw errors.invalid(type.kind, type.group, name, [{ type: 'FieldValueInvalid', message: e.message }]);
      throw e;
    }
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) throw errors.badRequest('the patch produced something that is not an object');
    const pinned = patched.metadata?.resourceVersion !== undefined && patched.metadata.resourceVersion !== base.metadata.resourceVersion;
    patched.metadata = { ...(patched.metadata ?? {}) };
    if (!pinned) patched.metadata.resourceVersion = String(current.revision);
    try {
      return await target.update(type, namespace, name, patched, { ...options, subresource: options.subresource, basedOn: current });
    } catch (e) {
      if (!pinned && attempt < 5 && e instanceof ApiError && e.reason === 'Conflict') continue;
      throw e;
    }
  }
}

/**
 * Server-side apply: merges the applied configuration into the object (creating it when
 * absent) as `fieldManager`, refusing with 409 when it would change fields other managers own
 * unless forced; retried like a patch when another writer got there first.
 */
async function applyObject(target: PatchTarget, type: ResourceType, namespace: string | undefined, name: string, patch: unknown, options: WriteContext & { subresource?: string; force?: boolean }): Promise<KubeObject> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw errors.badRequest('the apply patch must be an object');
  target.checkKind(type, patch);
  const meta: Partial<api.ObjectMeta> = patch.metadata ?? {};
  if (meta.name !== undefined && meta.name !== name) throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
  if (meta.managedFields !== undefined) throw errors.badRequest('metadata.managedFields must be nil');
  const applied: KubeObject = { ...patch, apiVersion: apiVersionOf(type), kind: type.kind, metadata: { ...meta, name } };
  const unknown = options.fieldValidation !== 'Ignore' ? (strategyFor(type)?.unknownFields?.(applied) ?? []) : [];
  if (unknown.length > 0 && options.fieldValidation === 'Strict') {
    const problems = unknown.map((f) => `.${f}: field not declared in schema`);
    throw errors.badRequest(`failed to create typed patch object (${apiVersionOf(type)}, Kind=${type.kind}): ${problems.length === 1 ? problems[0] : `errors:\n  ${problems.join('\n  ')}`}`);
  }
  options.warnings?.push(...unknown.map((f) => `unknown field "${f}"`));
  const pinned = meta.resourceVersion !== undefined;
  const listTypes = target.listTypes(type);
  for (let attempt = 0; ; attempt++) {
    const current = target.store.get(storageKey(type, namespace, name));
    if (!current && options.subresource) throw errors.notFound(type.resource, type.group, name);
    const live = current ? target.present(type, current.object) : undefined;
    const result = serverSideApply(live, applied, { manager: options.fieldManager!, force: options.force, listTypes, subresource: options.subresource });
    if (!result.ok) throw new ApiError(409, 'Conflict', String(result.status.message), result.status.details as unknown as StatusDetails);
    const context: WriteContext = { dryRun: options.dryRun, fieldManager: options.fieldManager, managedFields: result.managedFields, fieldValidation: 'Ignore' };
    try {
      if (!current) return await target.create(type, namespace, result.object, context);
      return await target.update(type, namespace, name, result.object, { ...context, subresource: options.subresource, basedOn: current });
    } catch (e) {
      if (!pinned && attempt < 5 && e instanceof ApiError && (e.reason === 'Conflict' || e.reason === 'AlreadyExists')) continue;
      throw e;
    }
  }
}
