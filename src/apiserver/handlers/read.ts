// Reads: get one object and list a collection (label and field selectors, paging with `limit`
// and `continue` at a consistent revision, `resourceVersion` and `resourceVersionMatch` as kube's
// ListOptions read them), as JSON or in the form the Accept header asked for (a server-side
// Table, metadata alone: output.ts).
import { ApiError, errors, type FieldProblem } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import type { QueryParams } from '../http/query.js';
import type { ResourceType } from '../registry/resource-type.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from '../../common/label-selectors.js';
import { StorageError, type KubeObject } from '../storage/types.js';
import { listAnswer, objectAnswer, sendAnswer } from './output.js';
import type { ServerState } from './state.js';

/** selectorFilter's answer when the request has no selector: every object. */
export const MATCH_ALL = (_o: KubeObject): boolean => true;

/** The label and field selectors of a list, watch or collection delete, as one predicate. */
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

/** How long a read asking for a resourceVersion this server has not reached waits for it (kube's watch cache: 3 s). */
export const FRESHNESS_WAIT_MS = 3_000;
const FRESHNESS_POLL_MS = 20;

/** A resourceVersion query value as a revision; 400 when it is not one. */
export function parseResourceVersion(value: string): number {
  if (!/^\d+$/.test(value)) throw errors.badRequest(`invalid resource version: ${value}`);
  return Number(value);
}

/**
 * Resolves once the store has reached `revision` (with several API servers on etcd, this one's
 * cache may be behind a write a client saw through another); after FRESHNESS_WAIT_MS, a 504 the
 * client retries (client-go's reflector lists again from the newest), as kube-apiserver answers.
 */
async function reachRevision(state: ServerState, revision: number): Promise<void> {
  const deadline = Date.now() + FRESHNESS_WAIT_MS;
  while (state.storage.currentRevision() < revision) {
    if (Date.now() >= deadline) {
      throw new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${revision}, current: ${state.storage.currentRevision()}`, {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, FRESHNESS_POLL_MS));
  }
}

/**
 * The revision a list is read at, from its ListOptions: none given or "0", the newest; a
 * revision with resourceVersionMatch=Exact, that revision (410 once compacted); otherwise (unset
 * or NotOlderThan) the newest, once the store has reached the revision.
 */
async function listRevision(ctx: AuthorizedContext, state: ServerState, paging: boolean): Promise<number | undefined> {
  const resourceVersion = ctx.query.string('resourceVersion') ?? '';
  const match = ctx.query.string('resourceVersionMatch') ?? '';
  const problems: FieldProblem[] = [];
  const forbidden = (message: string) => problems.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', message: `Forbidden: ${message}` });
  if (match !== '') {
    if (resourceVersion === '') forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (paging) forbidden('resourceVersionMatch is forbidden when continue is provided');
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      problems.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""` });
    }
    if (match === 'Exact' && resourceVersion === '0') forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  }
  if (problems.length > 0) throw errors.invalid('ListOptions', 'meta.k8s.io', '', problems);
  if (paging) {
    if (resourceVersion !== '' && resourceVersion !== '0') throw errors.badRequest('specifying resource version is not allowed when using continue');
    return undefined;
  }
  if (resourceVersion === '' || resourceVersion === '0') return undefined;
  const revision = parseResourceVersion(resourceVersion);
  await reachRevision(state, revision);
  return match === 'Exact' ? revision : undefined;
}

export async function serveGet(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string): Promise<void> {
  // A get at a resourceVersion reads an object not older than it.
  const resourceVersion = ctx.query.string('resourceVersion') ?? '';
  if (resourceVersion !== '' && resourceVersion !== '0') await reachRevision(state, parseResourceVersion(resourceVersion));
  sendAnswer(ctx, 200, objectAnswer(ctx, type, state.resources.get(type, namespace, name)));
}

/** One page of a collection, as a list request's ListOptions select it. */
export interface ListPage {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
}

/**
 * Reads what the request's ListOptions select (selectors, limit and continue, resourceVersion and
 * resourceVersionMatch), each object presented as the API serves it. `readOnly`: the caller
 * only reads the objects (the store may hand out shared ones).
 */
export async function readList(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, readOnly: boolean): Promise<ListPage> {
  const { storage, resources } = state;
  const filter = selectorFilter(state, type, ctx.query);
  const limit = ctx.query.count('limit');
  const token = ctx.query.string('continue');
  let atRevision = await listRevision(ctx, state, Boolean(token));
  const exact = atRevision !== undefined;
  let startAfter: string | undefined;
  if (token) {
    const decoded = decodeContinue(token);
    atRevision = decoded.rv;
    startAfter = decoded.start;
  }
  let result;
  try {
    // Nothing here writes into the listed objects (present() copies before it sets apiVersion and
    // kind), except a custom resource's schema defaults: the store may hand out shared ones.
    result = storage.list(resources.prefix(type, namespace), { atRevision, startAfter, limit: limit || undefined, filter, shared: readOnly && !resources.presentWrites(type) });
  } catch (e) {
    if (e instanceof StorageError && e.code === 'Expired') {
      if (exact) throw new ApiError(410, 'Expired', 'The resourceVersion for the provided list is too old.');
      throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
    }
    throw e;
  }
  return {
    items: result.items.map((i) => resources.present(type, i.object)),
    resourceVersion: String(result.revision),
    continue: result.continueAfter ? encodeContinue(result.revision, result.continueAfter) : undefined,
  };
}

export async function serveList(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined): Promise<void> {
  const page = await readList(ctx, state, type, namespace, true);
  const { body, stringify } = listAnswer(ctx, type, page.items, page);
  sendAnswer(ctx, 200, body, stringify);
}
