// Reads: get one object and list a collection (label and field selectors, paging with `limit`
// and `continue` at a consistent revision), as JSON or, when the client asks with
// `Accept: …;as=Table`, as a server-side Table.
import { ApiError, errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import type { QueryParams } from '../http/query.js';
import { sendJson } from '../http/respond.js';
import { apiVersionOf, type ResourceType } from '../registry/resource-type.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from '../../common/label-selectors.js';
import { StorageError, type KubeObject } from '../storage/types.js';
import { crdTable, tableFor, tableJson, type IncludeObject, type Table, type TableOptions } from '../printing/tables.js';
import type { ServerState } from './state.js';

/** Renders objects as a Table for the request's type and options; undefined when JSON was asked for. */
export type TableWriter = (objects: KubeObject[], extra?: Partial<TableOptions>) => Table;

export function tableWriter(ctx: AuthorizedContext, type: ResourceType): TableWriter | undefined {
  if (!/as=Table/.test(ctx.request.headers.accept ?? '')) return undefined;
  const options: TableOptions = { includeObject: (ctx.query.string('includeObject') as IncludeObject | undefined) ?? 'Metadata' };
  return (objects, extra = {}) =>
    type.custom ? crdTable(type.custom.printerColumns, objects, { ...options, ...extra }) : tableFor(type.resource, objects, { ...options, ...extra });
}

/** The label and field selectors of a list, watch or collection delete, as one predicate. */
/** selectorFilter's answer when the request has no selector: every object. */
export const MATCH_ALL = (_o: KubeObject): boolean => true;

export function selectorFilter(state: ServerState, type: ResourceType, query: QueryParams): (o: KubeObject) => boolean {
  try {
    const labels = parseLabelSelector(query.string('labelSelector') ?? '');
    const fields = parseFieldSelector(query.string('fieldSelector') ?? '', ['metadata.name', 'metadata.namespace', ...type.fieldSelectors]);
    if (labels.length === 0 && fields.length === 0) return MATCH_ALL;
    return (o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, (f) => state.resources.fieldValue(o, f));
  } catch (e) {
    if (e instanceof SelectorError) throw errors.badRequest(e.message);
    throw e;
  }
}

function encodeContinue(revision: number, after: string): string {
  return Buffer.from(JSON.stringify({ rv: revision, start: after })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof value.rv === 'number' && typeof value.start === 'string') return value;
  } catch {
    // fall through
  }
  throw errors.badRequest('continue key is not valid: the token is malformed');
}

export function serveGet(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string): void {
  const object = state.resources.get(type, namespace, name);
  const table = tableWriter(ctx, type);
  sendJson(ctx.reply, 200, table ? table([object], { resourceVersion: object.metadata.resourceVersion }) : object);
}

export function serveList(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined): void {
  const { storage, resources } = state;
  const filter = selectorFilter(state, type, ctx.query);
  const limit = ctx.query.count('limit');
  let atRevision: number | undefined;
  let startAfter: string | undefined;
  const token = ctx.query.string('continue');
  if (token) {
    const decoded = decodeContinue(token);
    atRevision = decoded.rv;
    startAfter = decoded.start;
  }
  let result;
  try {
    // Nothing here writes into the listed objects (present() copies before it sets apiVersion and
    // kind), except a custom resource's schema defaults: the store may hand out shared ones.
    result = storage.list(resources.prefix(type, namespace), { atRevision, startAfter, limit: limit || undefined, filter, shared: !resources.presentWrites(type) });
  } catch (e) {
    if (e instanceof StorageError && e.code === 'Expired') {
      throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
    }
    throw e;
  }
  const items = result.items.map((i) => resources.present(type, i.object));
  const resourceVersion = String(result.revision);
  const continueToken = result.continueAfter ? encodeContinue(result.revision, result.continueAfter) : undefined;
  const table = tableWriter(ctx, type);
  if (table) {
    sendJson(ctx.reply, 200, table(items, { resourceVersion, continue: continueToken }), tableJson);
    return;
  }
  sendJson(ctx.reply, 200, {
    kind: type.listKind,
    apiVersion: apiVersionOf(type),
    metadata: { resourceVersion, ...(continueToken ? { continue: continueToken } : {}) },
    items,
  });
}
