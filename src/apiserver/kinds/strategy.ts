// The strategy of one built-in kind, as kube-apiserver keeps one per kind in its registry
// (pkg/registry/<group>/<kind>/strategy.go): the kind's discovery facts, server-side defaults,
// validation of its own fields, printer columns, what bumps metadata.generation, how its names
// are checked, how its deletion waits for its own clean-up or a grace period, and what it allocates from pools
// shared by all its objects. Generic mechanics (storage, patch, apply, garbage collection) stay
// outside; kinds/index.ts is the registry of strategies by group and resource.
import { isPlainObject, jsonEqual } from '../../common/json.js';
import type { ListTypes } from '../apply/field-sets.js';
import type { FieldProblem } from '../errors.js';
import type { Printer } from '../printing/columns.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { UserInfo } from '../auth/request-attributes.js';
import type { Storage } from '../storage/types.js';
import type * as api from '../../api/index.js';

/** How names of a kind are checked: DNS-1123 subdomain (most kinds), label, or path segment (RBAC). */
export type NameRule = 'subdomain' | 'label' | 'path';

/** How one server's pools are configured (kube-apiserver's flags). */
export interface AllocationSettings {
  /** --service-cluster-ip-range: the network Services' cluster IPs come from. */
  serviceClusterIPRange: string;
}

/**
 * Values a kind hands out from pools shared by all its objects (a Service's cluster IP and node
 * ports), kept for one server over one storage.
 */
export interface Allocations<T extends api.KubeObject = api.Unstructured> {
  /**
   * Takes what `object` needs and `previous` (its stored state, on an update) does not hold yet:
   * fills in what is unset, refuses with 422 what is taken. Returns how to give back what it took,
   * for when the write does not happen (failed, refused, or a dry run).
   */
  reserve(object: T, previous: T | undefined): () => void;
  /**
   * Before the write that follows `reserve`: makes what it took for `object` the object's in
   * storage, where every API server sharing it sees it; may replace a value another server took
   * first (refusing one that was asked for). Reserve's give-back undoes it too.
   */
  commit?(object: T): Promise<void>;
  /** After a stored write: frees what `previous` held that `object` no longer holds (all of it when deleted). */
  settle(object: T | undefined, previous: T | undefined): void;
}

/** How objects of one served version become the stored version's, and back. */
export interface VersionConversion<T extends api.KubeObject = api.Unstructured> {
  /** The stored object (a copy the conversion may change) as the served version has it. */
  fromStored(object: T): api.Unstructured;
  /** An object of the served version (a copy the conversion may change) as it is stored. */
  toStored(object: api.Unstructured): T;
}

/**
 * The strategy of objects of kind `T`; the registry holds every kind's as a `KindStrategy` over
 * unstructured objects, and calls each only with objects of its own kind.
 */
export interface KindStrategy<T extends api.KubeObject = api.Unstructured> {
  /** Discovery, routing and storage facts. */
  type: ResourceType;
  /** How names are checked; a DNS-1123 subdomain when not said. */
  names?: NameRule;
  /**
   * Server-side defaults, as kube-apiserver's defaulting and PrepareForCreate/Update fill them in;
   * `requester` is who writes (kube's request context), for kinds that record it.
   */
  defaults?(object: T, previous: T | undefined, requester?: UserInfo): void;
  /**
   * Problems with the kind's own fields (metadata is checked for every kind). `subresource`: the
   * write came through one (status, scale, a Pod's binding), which may change what an update may not.
   */
  validate?(object: T, previous: T | undefined, subresource?: string): FieldProblem[];
  /** What a field selector reads for an unset field, where kube's selectable fields default it. */
  fieldDefaults?: Record<string, string>;
  /** Selectable fields whose value is not at their own path (a Job's `status.successful` is its `status.succeeded`). */
  fieldValues?: Record<string, (object: T) => string>;
  /**
   * How an update through a subresource merges into the stored object, for kinds that say more
   * than "status replaces status" (a CSR's status keeps its approval; its `approval` subresource
   * changes only conditions). Keyed by subresource; every key is served and listed in discovery.
   */
  subresourceUpdates?: Record<string, (incoming: T, previous: T) => T>;
  /** Columns for `kubectl get`; Name and Age when absent. */
  printer?: Printer<T>;
  /**
   * Kinds that keep metadata.generation (1 on create) say which updates bump it; kinds without
   * it never get one, as kube-apiserver's strategies that never set it.
   */
  generation?(next: T, previous: T): boolean;
  /**
   * Metadata a status update may change (kube's <kind>StatusStrategy keeps it from the request):
   * the Deployment controller writes its revision annotation with the status, without a new generation.
   */
  statusMetadata?: Array<'annotations' | 'labels'>;
  /**
   * Kinds deleted gracefully (Pods, kube's CheckGracefulDelete): the grace period in seconds a
   * first deletion request gives the object, from the requested one; 0 deletes at once.
   */
  gracePeriod?(object: T, requested: number | undefined): number;
  /** Why an object may not be deleted at all (immortal namespaces, the system PriorityClasses), or undefined. */
  undeletable?(name: string): string | undefined;
  /** Kinds whose deletion waits for a clean-up of their own (Namespaces): marks the object as terminating. */
  terminate?(object: T): void;
  /** Pools the kind allocates from, rebuilt from what `storage` holds. */
  allocations?(storage: Storage, settings: AllocationSettings): Allocations<T>;
  /** The version objects are stored at when it is not the served one (custom resources: the CRD's storage version). */
  storageVersion?: string;
  /**
   * Other versions the kind is served at besides `type.version` (its stored one), each with its
   * conversions, as kube-apiserver converts through the internal version: a request's body at that
   * version is made the stored form before anything else looks at it; an object read at that
   * version is made its form on the way out (HorizontalPodAutoscalers: autoscaling/v1 beside v2).
   */
  conversions?: Record<string, VersionConversion<T>>;
  /** Fields of an incoming object the kind does not declare (custom resources: outside the schema): warned about, or refused under strict field validation. */
  unknownFields?(object: T): string[];
  /** Drops what the kind does not keep (custom resources: fields outside the schema), before defaults. */
  prune?(object: T): void;
  /** What kube's PrepareForCreate clears beyond defaults (custom resources with a status subresource: status). */
  prepareForCreate?(object: T): void;
  /** Defaults applied to an object as it is read (custom resources: the schema's, as kube applies them when decoding). */
  readDefaults?(object: T): void;
  /** How server-side apply merges the kind's lists; strategic merge keys when not said. */
  listTypes?: ListTypes;
  /** false: an update must say which resourceVersion it is based on (kube's AllowUnconditionalUpdate; custom resources). */
  unconditionalUpdate?: boolean;
}

/** A built-in type: namespaced, no status, no short names unless said. */
export function builtinType(
  group: string,
  version: string,
  resource: string,
  kind: string,
  options: Partial<Pick<ResourceType, 'namespaced' | 'shortNames' | 'categories' | 'status' | 'scale' | 'fieldSelectors' | 'singular'>> = {},
): ResourceType {
  return {
    group,
    version,
    resource,
    kind,
    listKind: `${kind}List`,
    singular: options.singular ?? kind.toLowerCase(),
    namespaced: options.namespaced ?? true,
    shortNames: options.shortNames ?? [],
    categories: options.categories ?? [],
    status: options.status ?? false,
    scale: options.scale,
    fieldSelectors: options.fieldSelectors ?? [],
    builtin: true,
  };
}

/**
 * An update through `status` as most kinds take it: the stored object with the incoming status,
 * and the incoming metadata fields the kind lets its status writers set (statusMetadata).
 */
export function replaceStatus<T extends api.KubeObject>(incoming: { status?: unknown; metadata?: Partial<api.ObjectMeta> }, previous: T, metadataFields: Array<'annotations' | 'labels'> = []): T {
  const next = structuredClone(previous);
  const withStatus = next as { status?: unknown };
  if (incoming.status === undefined) delete withStatus.status;
  else withStatus.status = incoming.status;
  for (const field of metadataFields) {
    if (incoming.metadata?.[field] === undefined) delete next.metadata[field];
    else next.metadata[field] = incoming.metadata[field];
  }
  return next;
}

/** The `all` category (`kubectl get all`). */
export const ALL = ['all'];

/** The generation rule of most kinds that keep one: a change of spec. */
export const specChanged = (next: { spec?: unknown }, previous: { spec?: unknown }): boolean => !jsonEqual(next.spec, previous.spec);

/**
 * An update's problems less those the stored object already had (the same field, the same
 * message): where bosun's validation of a kind has grown stricter, an object stored before is
 * refused only for what an update brings, so that its labels, finalizers and status can still be
 * written (kube ratchets its newer rules likewise).
 */
export function newProblems(problems: FieldProblem[], stored: FieldProblem[]): FieldProblem[] {
  if (stored.length === 0) return problems;
  const had = new Set(stored.map((p) => `${p.field}\n${p.message}`));
  return problems.filter((p) => !had.has(`${p.field}\n${p.message}`));
}

/**
 * kube's defaulting of one struct: each field of `defaults` is set where `target` leaves it unset —
 * absent, null (Go's nil pointer) or the empty string (Go's "" for a string enum) — so that a
 * manifest that carries a field without a value (`strategy: {}`, `replicas: null`, as kubectl and
 * generated YAML send them) gets the default as one without it does. Returns `target`.
 */
export function fillUnset<T extends object>(target: T, defaults: Partial<T>): T {
  const record = target as Record<string, unknown>;
  for (const [key, value] of Object.entries(defaults)) if (record[key] === undefined || record[key] === null || record[key] === '') record[key] = value;
  return target;
}

/**
 * The object at `parent[key]`, made an empty one when unset, for the defaults inside it; undefined
 * when something else is there (a malformed manifest: validation refuses it with a clear message,
 * rather than the defaults failing with a TypeError).
 */
export function objectField<T extends object>(parent: object, key: string): T | undefined {
  const record = parent as Record<string, unknown>;
  if (record[key] === undefined || record[key] === null) record[key] = {};
  return isPlainObject(record[key]) ? (record[key] as T) : undefined;
}

/**
 * An object the server holds as unstructured, read as its kind `T`: for code that knows the kind
 * by the object's type (a hook on CSRs, the storage prefix of Services), not by looking.
 */
export const asKind = <T extends { metadata: object }>(object: api.KubeObject): T => object as unknown as T;
