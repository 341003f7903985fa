// Reads: get one object and list a collection (label and field selectors, paging with `limit`
// and `continue` at a consistent revision), as JSON or in the form the Accept header asked for
// (a server-side Table, metadata alone: output.ts).
import { ApiError, errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import type { QueryParams } from '../http/query.js';
import type { ResourceType } from '../registry/resource-type.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from '../../common/label-selectors.js';
import { StorageError, type KubeObject } from '../storage/types.js';
import { listAnswer, objectAnswer, sendAnswer } from './output.js';
import type { ServerState } from './state.js';

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
  sendAnswer(ctx, ctx.reply, 200, objectAnswer(ctx, type, state.resources.get(type, namespace, name)));
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
  const { body, stringify } = listAnswer(ctx, type, items, { resourceVersion, continue: continueToken });
  sendAnswer(ctx, ctx.reply, 200, body, stringify);
}
