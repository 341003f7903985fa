// Object semantics of the API server, independent of HTTP: create / get / list / update over the
// storage, with what kube-apiserver adds — server-set metadata, generation, status subresources,
// finalizers, optimistic concurrency, namespace checks, dry runs and managedFields; patches and
// server-side apply (resource-patch.ts) and deletion (resource-delete.ts) are built on them. What
// differs by kind (defaults, pruning, validation, names, generation, deletion) comes from the
// kind's strategy: a built-in's in kinds/, a custom resource's from its CRD (crds/custom-resources.ts).
import { jsonEqual } from '../../common/json.js';
import { rfc3339 } from '../../common/time.js';
import { randomUUID } from 'node:crypto';
import { StorageError, type KubeObject, type Storage, type StoredItem } from '../storage/types.js';
import { ApiError, errors, type FieldProblem } from '../errors.js';
import { type Registry } from './registry.js';
import { apiVersionOf, storageKey, storagePrefix, type ResourceType } from './resource-type.js';
import { metadataProblems, nameProblem } from '../admission/validation.js';
import { jsonPathFirst } from '../printing/jsonpath.js';
import { builtinListTypes, type ListTypes } from '../apply/field-sets.js';
import { recordWrite } from '../apply/managed-fields.js';
import { deleteObject, type DeleteOptions } from './resource-delete.js';
import { patchObject } from './resource-patch.js';
import type { PatchType, ResourceHooks, WriteContext } from './write-context.js';
import { SCALE_KIND, scaleOf, withSpecReplicas, type Scale } from './scale.js';
import type { AdmissionAttributes, WebhookAdmission } from '../admission/webhooks.js';
import type { AdmissionPlugin } from '../admission/plugin.js';
import { generationChanged, kindAllocations, strategyFor, strategyOf, tracksGeneration } from '../kinds/index.js';
import { newProblems, replaceStatus, type Allocations, type AllocationSettings } from '../kinds/strategy.js';
import type * as api from '../../api/index.js';


const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return s;
}

export class Resources {
  /** The pools a type allocates from (Service IPs and node ports), rebuilt from storage. */
  readonly allocationsOf: (type: ResourceType) => Allocations | undefined;
  /** The admission webhooks writes through the API are sent to (admission/webhooks.ts), once the server sets them. */
  webhooks?: WebhookAdmission;
  /** The built-in admission plugins writes through the API pass, in order (admission/plugin.ts), once the server sets them. */
  admission: AdmissionPlugin[] = [];

  constructor(
    private readonly storage: Storage,
    private readonly registry: Registry,
    settings: AllocationSettings,
    readonly hooks: ResourceHooks[] = [],
  ) {
    this.allocationsOf = kindAllocations(storage, settings);
  }

  addHooks(hooks: ResourceHooks): void {
    this.hooks.push(hooks);
  }

  get store(): Storage {
    return this.storage;
  }

  /** Reads an object as the requested version of its type sees it. */
  present(type: ResourceType, object: KubeObject): api.Unstructured {
    const strategy = strategyFor(type);
    const conversion = strategy?.conversions?.[type.version];
    const out: api.Unstructured = conversion ? conversion.fromStored(structuredClone(object) as api.Unstructured) : { ...object };
    out.apiVersion = apiVersionOf(type);
    out.kind = type.kind;
    strategy?.readDefaults?.(out);
    return out;
  }

  /** A request's object at `type`'s version as it is stored (a copy when converted; built-ins served at more than one version). */
  private toStored(type: ResourceType, object: api.Unstructured): api.Unstructured {
    const conversion = strategyFor(type)?.conversions?.[type.version];
    if (!conversion) return object;
    const stored = conversion.toStored(structuredClone(object));
    stored.apiVersion = apiVersionOf({ group: type.group, version: strategyFor(type)!.type.version });
    return stored;
  }

  /** Whether present() writes into the object it is given (a custom resource's schema defaults). */
  presentWrites(type: ResourceType): boolean {
    return strategyFor(type)?.readDefaults !== undefined;
  }

  getItem(type: ResourceType, namespace: string | undefined, name: string): StoredItem {
    const item = this.storage.get(storageKey(type, namespace, name));
    if (!item) throw errors.notFound(type.resource, type.group, name);
    return item;
  }

  get(type: ResourceType, namespace: string | undefined, name: string): api.Unstructured {
    return this.present(type, this.getItem(type, namespace, name).object);
  }

  /** The storage prefix to list or watch: one namespace, or all. */
  prefix(type: ResourceType, namespace: string | undefined): string {
    return type.namespaced && namespace ? `${storagePrefix(type)}${namespace}/` : storagePrefix(type);
  }

  private checkNamespace(type: ResourceType, namespace: string | undefined, creating: boolean, name = ''): void {
    if (!type.namespaced) return;
    if (!namespace) throw errors.badRequest('the server could not find the requested resource: a namespace is required');
    const ns = this.storage.get(`/core/namespaces//${namespace}`);
    if (!ns) throw errors.notFound('namespaces', '', namespace);
    if (creating && ns.object.metadata.deletionTimestamp) {
      throw new ApiError(403, 'Forbidden', `${type.resource} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, {
        kind: type.resource,
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  }

  /** Refuses a body that is no object of `type` (its kind, its group, its metadata's shape). */
  checkKind(type: ResourceType, object: unknown): asserts object is api.Unstructured {
    if (typeof object !== 'object' || object === null || Array.isArray(object)) throw errors.badRequest('the request body must be a JSON object');
    const { kind, apiVersion, metadata } = object as { kind?: unknown; apiVersion?: unknown; metadata?: unknown };
    if (kind !== undefined && kind !== type.kind) {
      throw errors.badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${type.kind}) for ${type.resource}`);
    }
    if (apiVersion !== undefined && apiVersion !== apiVersionOf(type)) {
      const group = String(apiVersion).includes('/') ? String(apiVersion).split('/')[0] : '';
      if (group !== type.group) {
        throw errors.badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${apiVersionOf(type)})`);
      }
    }
    if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
      throw errors.badRequest('metadata must be an object');
    }
  }

  /** Prunes, defaults and validates by the kind's strategy; throws 422 Invalid with every problem. */
  private admit(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, ctx: WriteContext & { subresource?: string }): void {
    const name = object.metadata?.name ?? '';
    const strategy = strategyFor(type);
    const unknown = ctx.fieldValidation === 'Ignore' ? [] : (strategy?.unknownFields?.(object) ?? []);
    if (unknown.length > 0 && ctx.fieldValidation === 'Strict') {
      throw errors.badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
    }
    ctx.warnings?.push(...unknown.map((f) => `unknown field "${f}"`));
    strategy?.prune?.(object);
    strategy?.defaults?.(object, previous, ctx.user);
    let problems: FieldProblem[] = [...metadataProblems(object), ...(strategy?.validate?.(object, previous, ctx.subresource ?? ctx.managedSubresource) ?? [])];
    // Ratcheting, as kube ratchets a CRD's schema: an update is refused only for what it brings, not
    // for a problem the stored object already has (the same field, the same message) — one stored
    // before a kind's checks grew stricter keeps its labels, finalizers and status writable. Checked
    // only when there is a problem: an update that passes costs no second validation.
    if (problems.length > 0 && previous && strategy?.validate) problems = newProblems(problems, strategy.validate(previous, undefined));
    for (const hook of this.hooks) hook.beforeWrite?.(type, object, previous, ctx);
    if (problems.length > 0) throw errors.invalid(type.kind, type.group, name, problems);
  }

  async create(type: ResourceType, namespace: string | undefined, body: unknown, ctx: WriteContext = {}): Promise<api.Unstructured> {
    this.checkKind(type, body);
    const object: api.Unstructured = this.toStored(type, ctx.ownsBody ? body : structuredClone(body));
    // The name is checked (or generated) just below.
    const metadata: api.ObjectMeta = (object.metadata = { ...(object.metadata ?? {}) } as api.ObjectMeta);
    if (type.namespaced) {
      if (metadata.namespace && namespace && metadata.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      metadata.namespace = namespace ?? metadata.namespace;
    } else delete metadata.namespace;
    this.checkNamespace(type, metadata.namespace, true, metadata.name ?? '');
    if (metadata.resourceVersion) throw errors.badRequest('resourceVersion should not be set on objects to be created');
    if (!metadata.name) {
      if (!metadata.generateName) {
        throw errors.invalid(type.kind, type.group, '', [{ type: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
      }
      metadata.name = `${String(metadata.generateName).slice(0, 58)}${randomSuffix()}`;
    }
    const strategy = strategyFor(type);
    const problem = typeof metadata.name === 'string' ? nameProblem(strategy?.names ?? 'subdomain', metadata.name) : 'must be a string';
    if (problem) throw errors.invalid(type.kind, type.group, String(metadata.name), [{ type: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${metadata.name}": ${problem}` }]);
    object.apiVersion = apiVersionOf({ group: type.group, version: strategy?.storageVersion ?? type.version });
    object.kind = type.kind;
    metadata.uid = randomUUID();
    metadata.creationTimestamp = rfc3339();
    // Only kinds whose strategy keeps a generation get one (custom resources' always does).
    if (tracksGeneration(type)) metadata.generation = 1;
    else delete metadata.generation;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    strategy?.prepareForCreate?.(object);
    const plugins = ctx.viaApi ? this.admission : [];
    for (const plugin of plugins) plugin.mutate?.(type, object, undefined);
    const mutated = await this.mutateByWebhooks(type, object, undefined, ctx);
    this.admit(type, mutated, undefined, ctx);
    for (const plugin of plugins) plugin.validate?.(type, mutated, undefined, ctx.warnings);
    await this.validateByWebhooks(type, mutated, undefined, ctx);
    for (const plugin of plugins) await plugin.charge?.(type, mutated, undefined, ctx.dryRun ?? false);
    return this.storeCreated(type, mutated, ctx);
  }

  /** The create's last steps: managedFields, pools, storage. */
  private async storeCreated(type: ResourceType, object: api.Unstructured, ctx: WriteContext): Promise<api.Unstructured> {
    const metadata = object.metadata;
    this.recordManager(type, object, undefined, ctx);
    const key = storageKey(type, metadata.namespace, metadata.name);
    const giveBack = this.allocationsOf(type)?.reserve(object, undefined);
    if (ctx.dryRun) {
      giveBack?.();
      if (this.storage.get(key)) throw errors.alreadyExists(type.resource, type.group, metadata.name);
      return this.present(type, object as KubeObject);
    }
    try {
      await this.allocationsOf(type)?.commit?.(object);
      const stored = await this.storage.create(key, object as KubeObject);
      for (const hook of this.hooks) hook.afterWrite?.(type, stored.object, undefined, false);
      return this.present(type, stored.object);
    } catch (e) {
      giveBack?.();
      throw this.mapStorageError(e, type, metadata.name);
    }
  }

  private admissionAttributes(type: ResourceType, object: api.Unstructured | undefined, previous: api.Unstructured | undefined, ctx: WriteContext & { subresource?: string }): AdmissionAttributes {
    const subject = object ?? previous!;
    const subresource = ctx.subresource ?? ctx.managedSubresource;
    // A write through `/scale` is admitted as a Scale, as kube-apiserver sends it to webhooks.
    const view = subresource === 'scale' && type.scale
      ? (o: api.Unstructured) => scaleOf(type, this.present(type, o as KubeObject)) as api.Unstructured
      : (o: api.Unstructured) => this.present(type, o as KubeObject);
    return {
      operation: object === undefined ? 'DELETE' : previous === undefined ? 'CREATE' : 'UPDATE',
      type, subresource, namespace: subject.metadata.namespace, name: subject.metadata.name,
      ...(subresource === 'scale' && type.scale ? { kind: SCALE_KIND } : {}),
      object: object && view(object), oldObject: previous && view(previous),
      user: ctx.user, dryRun: ctx.dryRun ?? false, warnings: ctx.warnings,
    };
  }

  /**
   * The mutating webhooks' turn (writes through the API only): the object as they patched it,
   * with what the server owns (identity, version, kind) kept, as kube keeps it.
   */
  private async mutateByWebhooks(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, ctx: WriteContext & { subresource?: string }): Promise<api.Unstructured> {
    if (!ctx.viaApi || !this.webhooks?.configured('mutating', type)) return object;
    const attrs = this.admissionAttributes(type, object, previous, ctx);
    const mutated = await this.webhooks.mutate(attrs);
    if (!mutated) return object;
    if (attrs.kind === SCALE_KIND) {
      // A Scale the webhooks patched: only its replicas go back into the object.
      const replicas = (mutated as Scale).spec?.replicas;
      return Number.isInteger(replicas) ? withSpecReplicas(type, object, replicas as number) : object;
    }
    const out = this.toStored(type, structuredClone(mutated));
    out.apiVersion = object.apiVersion;
    out.kind = object.kind;
    out.metadata = { ...(out.metadata ?? {}) } as api.ObjectMeta;
    for (const field of ['name', 'namespace', 'uid', 'creationTimestamp', 'generation', 'resourceVersion'] as const) {
      if (object.metadata[field] === undefined) delete out.metadata[field];
      else (out.metadata as Record<string, unknown>)[field] = object.metadata[field];
    }
    return out;
  }

  /** The validating webhooks' turn (writes through the API only), after the kind's own validation. */
  private async validateByWebhooks(type: ResourceType, object: api.Unstructured | undefined, previous: api.Unstructured | undefined, ctx: WriteContext & { subresource?: string }): Promise<void> {
    if (!ctx.viaApi || !this.webhooks?.configured('validating', type)) return;
    await this.webhooks.validate(this.admissionAttributes(type, object, previous, ctx));
  }

  /** Both kinds of webhooks on a delete (mutating ones cannot change anything there, but may refuse). */
  async admitDeletion(type: ResourceType, current: api.Unstructured, ctx: WriteContext): Promise<void> {
    if (!ctx.viaApi || !this.webhooks) return;
    const attrs = this.admissionAttributes(type, undefined, current, ctx);
    await this.webhooks.mutate(attrs);
    await this.webhooks.validate(attrs);
  }

  /** How server-side apply merges this type's lists: the strategy's (a CRD schema's list types), or strategic merge keys. */
  listTypes(type: ResourceType): ListTypes {
    return strategyFor(type)?.listTypes ?? builtinListTypes;
  }

  /**
   * Keeps metadata.managedFields as kube-apiserver does on create/update/patch: the fields the
   * writer changed become its own (operation Update), removed fields leave every manager.
   */
  private recordManager(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, ctx: WriteContext & { subresource?: string }): void {
    if (ctx.managedFields) {
      object.metadata.managedFields = ctx.managedFields;
      return;
    }
    if (!ctx.fieldManager) return;
    const subresource = ctx.subresource ?? ctx.managedSubresource;
    recordWrite(object, previous, { manager: ctx.fieldManager, apiVersion: apiVersionOf(type), listTypes: this.listTypes(type), subresource, viaStatus: ctx.subresource !== undefined });
  }

  mapStorageError(e: unknown, type: ResourceType, name: string): Error {
    if (e instanceof StorageError) {
      switch (e.code) {
        case 'AlreadyExists':
          return errors.alreadyExists(type.resource, type.group, name);
        case 'NotFound':
          return errors.notFound(type.resource, type.group, name);
        case 'Conflict':
          return errors.conflict(type.resource, type.group, name);
        case 'Expired':
          return errors.gone(e.message);
        case 'Closed':
          return new ApiError(503, 'ServiceUnavailable', 'the server is shutting down');
      }
    }
    return e as Error;
  }

  /**
   * Replaces an object (PUT), or its status (subresource "status"). `expectedRevision` is the
   * revision the caller based the change on, for internal read-modify-write cycles.
   */
  async update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteContext & { subresource?: string; basedOn?: StoredItem } = {},
  ): Promise<api.Unstructured> {
    this.checkKind(type, body);
    const current = options.basedOn ?? this.getItem(type, namespace, name);
    const previous = current.object;
    const incoming: api.Unstructured = this.toStored(type, options.ownsBody ? body : structuredClone(body));
    const inMeta: Partial<api.ObjectMeta> = incoming.metadata ?? {};
    if (inMeta.name !== undefined && inMeta.name !== name) {
      throw errors.badRequest(`the name of the object (${String(inMeta.name)}) does not match the name on the URL (${name})`);
    }
    if (type.namespaced && inMeta.namespace && inMeta.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (inMeta.resourceVersion !== undefined && inMeta.resourceVersion !== '' && String(inMeta.resourceVersion) !== String(current.revision)) {
      throw errors.conflict(type.resource, type.group, name);
    }
    if (strategyFor(type)?.unconditionalUpdate === false && !options.basedOn && (inMeta.resourceVersion === undefined || inMeta.resourceVersion === '')) {
      throw errors.invalid(type.kind, type.group, name, [{ type: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }

    let next: api.Unstructured;
    const throughSubresource = options.subresource === undefined ? undefined : strategyFor(type)?.subresourceUpdates?.[options.subresource];
    if (throughSubresource) next = throughSubresource(incoming, previous);
    else if (options.subresource === 'status') next = replaceStatus(incoming, previous, strategyFor(type)?.statusMetadata);
    else {
      next = { ...incoming };
      // Its name is set below, after the fields the server owns (keeping the keys' order).
      next.metadata = { ...inMeta } as api.ObjectMeta;
      if (type.status) {
        if (previous.status === undefined) delete next.status;
        else next.status = previous.status;
      }
      // Fields the server owns stay as they were.
      for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
        if (previous.metadata[field] !== undefined) (next.metadata as Record<string, unknown>)[field] = previous.metadata[field];
        else delete next.metadata[field];
      }
      next.metadata.name = name;
      if (type.namespaced) next.metadata.namespace = namespace;
      // A finalizer may be removed but not added once deletion has started.
      if (previous.metadata.deletionTimestamp) {
        const before = new Set<string>(previous.metadata.finalizers ?? []);
        const added = (next.metadata.finalizers ?? []).filter((f: string) => !before.has(f));
        if (added.length > 0) {
          throw errors.invalid(type.kind, type.group, name, [{ type: 'FieldValueForbidden', field: 'metadata.finalizers', message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}` }]);
        }
      }
    }
    next.apiVersion = previous.apiVersion;
    next.kind = type.kind;
    delete next.metadata.resourceVersion;
    const plugins = options.viaApi && options.subresource === undefined ? this.admission : [];
    for (const plugin of plugins) plugin.mutate?.(type, next, previous);
    next = await this.mutateByWebhooks(type, next, previous, options);
    this.admit(type, next, previous, options);
    for (const plugin of plugins) plugin.validate?.(type, next, previous, options.warnings);
    await this.validateByWebhooks(type, next, previous, options);
    for (const plugin of plugins) await plugin.charge?.(type, next, previous, options.dryRun ?? false);
    this.recordManager(type, next, previous, options);
    if (options.subresource === undefined && tracksGeneration(type) && generationChanged(type, next, previous)) {
      next.metadata.generation = (previous.metadata.generation ?? 0) + 1;
    }
    const giveBack = this.allocationsOf(type)?.reserve(next, previous);
    return this.write(type, namespace, name, next, current, options.dryRun ?? false, giveBack);
  }

  /**
   * Stores `next` over `current`, or removes it when its deletion has no finalizers left; what
   * was reserved for `next` is given back (`giveBack`) when nothing is written, and what
   * `current` held and the result no longer holds is freed.
   */
  private async write(type: ResourceType, namespace: string | undefined, name: string, next: api.Unstructured, current: StoredItem, dryRun: boolean, giveBack?: () => void): Promise<api.Unstructured> {
    const key = storageKey(type, namespace, name);
    // kube's ShouldDeleteDuringUpdate: no finalizer left and no grace period running (a terminating pod stays for its kubelet).
    const finishing = next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 && !(Number(current.object.metadata.deletionGracePeriodSeconds ?? 0) > 0);
    // Compared as values, key order aside (as kube compares decoded objects), without serializing either.
    const unchanged = jsonEqual({ ...next, metadata: { ...next.metadata, managedFields: undefined } }, { ...current.object, metadata: { ...current.object.metadata, resourceVersion: undefined, managedFields: undefined } })
      && jsonEqual(next.metadata.managedFields ?? [], current.object.metadata.managedFields ?? []);
    const allocations = this.allocationsOf(type);
    if (dryRun) {
      giveBack?.();
      return this.present(type, { ...next, metadata: { ...next.metadata, resourceVersion: String(current.revision) } } as KubeObject);
    }
    try {
      if (finishing) {
        const deleted = await this.storage.delete(key, { expectedRevision: current.revision });
        giveBack?.();
        allocations?.settle(undefined, current.object);
        for (const hook of this.hooks) hook.afterWrite?.(type, deleted.object, current.object, true);
        return this.present(type, deleted.object);
      }
      // An update that changes nothing is not written (no new resourceVersion, no watch event).
      if (unchanged) {
        giveBack?.();
        return this.present(type, current.object);
      }
      await allocations?.commit?.(next);
      const stored = await this.storage.update(key, next as KubeObject, { expectedRevision: current.revision });
      allocations?.settle(stored.object, current.object);
      for (const hook of this.hooks) hook.afterWrite?.(type, stored.object, current.object, false);
      return this.present(type, stored.object);
    } catch (e) {
      giveBack?.();
      throw this.mapStorageError(e, type, name);
    }
  }

  /** A JSON, merge, strategic-merge or apply patch (resource-patch.ts). */
  patch(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, options: WriteContext & { subresource?: string; force?: boolean } = {}): Promise<api.Unstructured> {
    return patchObject(this, type, namespace, name, patchType, patch, options);
  }

  /** Deletes an object, or starts its deletion when finalizers or a grace period hold it (resource-delete.ts). */
  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<api.Unstructured> {
    return deleteObject(this, type, namespace, name, options);
  }

  /** The value of a field-selector path on an object, as a string (missing → ""). */
  fieldValue(object: api.Unstructured, field: string): string | undefined {
    const strategy = strategyOf(object);
    const computed = strategy?.fieldValues?.[field];
    if (computed) return computed(object as never);
    const value = jsonPathFirst(object, `.${field}`);
    if (value === undefined || value === null) return strategy?.fieldDefaults?.[field] ?? '';
    return String(value);
  }
}
