// Writes: create (POST), replace (PUT), patch (PATCH: JSON, merge, strategic merge, apply),
// delete and collection delete (DELETE, with DeleteOptions from the body or the query), each
// with dryRun, fieldManager and fieldValidation as kube-apiserver reads them. The object
// semantics are in ../registry/resources.ts; admission rules that belong to the request path (immortal
// namespaces) are checked here.
import { ApiError, errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { decodeBody, decodeObject, patchTypeOf, requestBody } from '../http/body.js';
import { withWarnings } from '../http/respond.js';
import { admitDelete } from '../kinds/index.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { WriteContext } from '../registry/write-context.js';
import { listAnswer, objectAnswer, sendAnswer } from './output.js';
import { readList } from './read.js';
import type { ServerState } from './state.js';

/** metav1.DeleteOptions as sent: each field is checked where it is read. */
type DeleteOptionsBody = { propagationPolicy?: unknown; orphanDependents?: unknown; preconditions?: unknown; gracePeriodSeconds?: unknown; dryRun?: unknown };

/** What every write of one request shares. */
export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string;
  fieldValidation: NonNullable<WriteContext['fieldValidation']>;
  warnings: string[];
  /** `status`, or a subresource of the kind's own (a CSR's `approval`). */
  subresource?: string;
  /** Who writes (a CSR records it; NodeRestriction checks it). */
  user: NonNullable<WriteContext['user']>;
  /** A client's request: admission webhooks are called. */
  viaApi?: boolean;
}

export async function serveCreate(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, options: WriteOptions): Promise<void> {
  const object = decodeObject(await requestBody(ctx.request), ctx.request.headers['content-type']);
  // The decoded body is this request's alone: the registry changes it rather than a copy.
  const created = await state.resources.create(type, namespace, object, { ...options, ownsBody: true });
  withWarnings(ctx.reply, options.warnings);
  sendAnswer(ctx, 201, objectAnswer(ctx, type, created));
}

export async function serveUpdate(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string, options: WriteOptions): Promise<void> {
  const object = decodeObject(await requestBody(ctx.request), ctx.request.headers['content-type']);
  const updated = await state.resources.update(type, namespace, name, object, { ...options, ownsBody: true });
  withWarnings(ctx.reply, options.warnings);
  sendAnswer(ctx, 200, objectAnswer(ctx, type, updated));
}

export async function servePatch(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string, options: WriteOptions): Promise<void> {
  const { resources, storage } = state;
  const patchType = patchTypeOf(ctx.request.headers['content-type']);
  const patch = decodeBody(await requestBody(ctx.request), ctx.request.headers['content-type']);
  const force = ctx.query.optionalBool('force');
  const before = storage.get(`${resources.prefix(type, namespace)}${type.namespaced ? '' : '/'}${name}`);
  // An apply must name its manager; other patches fall back to the client's program name.
  const fieldManager = patchType === 'apply' ? ctx.query.string('fieldManager') : options.fieldManager;
  const result = await resources.patch(type, namespace, name, patchType, patch, { ...options, fieldManager, force });
  withWarnings(ctx.reply, options.warnings);
  sendAnswer(ctx, patchType === 'apply' && !before ? 201 : 200, objectAnswer(ctx, type, result));
}

/** DeleteOptions from the body (when there is one) and the query. */
async function deleteOptions(ctx: AuthorizedContext, dryRun: boolean): Promise<{ dryRun: boolean; propagationPolicy?: string; preconditions?: { uid?: string; resourceVersion?: string }; gracePeriodSeconds?: number }> {
  const raw = await requestBody(ctx.request);
  const options: DeleteOptionsBody = raw.length > 0 ? decodeObject(raw, ctx.request.headers['content-type']) : {};
  const propagationPolicy = ctx.query.string('propagationPolicy') ?? options.propagationPolicy ?? (options.orphanDependents === true ? 'Orphan' : undefined);
  if (propagationPolicy !== undefined && (typeof propagationPolicy !== 'string' || !['Orphan', 'Background', 'Foreground'].includes(propagationPolicy))) {
    throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', [{ type: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: ${JSON.stringify(propagationPolicy)}: supported values: "Foreground", "Background", "Orphan"` }]);
  }
  const preconditions = options.preconditions !== null && typeof options.preconditions === 'object' ? options.preconditions as { uid?: string; resourceVersion?: string } : undefined;
  const gracePeriodSeconds: unknown = ctx.query.integer('gracePeriodSeconds') ?? options.gracePeriodSeconds ?? undefined;
  if (gracePeriodSeconds !== undefined && !Number.isSafeInteger(gracePeriodSeconds)) {
    throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', [{ type: 'FieldValueInvalid', field: 'gracePeriodSeconds', message: `Invalid value: ${JSON.stringify(gracePeriodSeconds)}: must be an integer` }]);
  }
  // gracePeriodSeconds is a safe integer or absent by now.
  return { dryRun: dryRun || (Array.isArray(options.dryRun) && options.dryRun.includes('All')), propagationPolicy, preconditions, gracePeriodSeconds: gracePeriodSeconds as number | undefined };
}

export async function serveDelete(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string, dryRun: boolean): Promise<void> {
  const options = await deleteOptions(ctx, dryRun);
  admitDelete(type, name);
  sendAnswer(ctx, 200, objectAnswer(ctx, type, await state.resources.delete(type, namespace, name, { ...options, user: ctx.user, viaApi: true })));
}

/**
 * Deletes what the request's ListOptions select, one object after another as kube-apiserver's
 * single worker does (each with the request's DeleteOptions, its preconditions included): an
 * object gone meanwhile is passed over, any other failure ends the request with its error. The
 * answer is the list of the objects deleted, as they were listed (with `limit`, one page and its
 * `continue`).
 */
export async function serveDeleteCollection(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, dryRun: boolean): Promise<void> {
  const options = await deleteOptions(ctx, dryRun);
  const page = await readList(ctx, state, type, namespace, false);
  for (const item of page.items) {
    try {
      await state.resources.delete(type, item.metadata.namespace, item.metadata.name, { ...options, user: ctx.user, viaApi: true });
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
  const { body, stringify } = listAnswer(ctx, type, page.items, page);
  sendAnswer(ctx, 200, body, stringify);
}
