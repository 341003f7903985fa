// What a resource request's answer is, once its Accept header is negotiated (http/negotiate.ts):
// the object or list itself, a Table of it (`as=Table`), or its metadata alone
// (`as=PartialObjectMetadata` for one object, `as=PartialObjectMetadataList` for a list), as
// kube-apiserver's transformResponseObject makes them, written as JSON or YAML. Asking for one
// object's form of a list (or a list's form of one object) is refused, 406, as kube refuses it; a
// Status passes as it is.
import type { FastifyReply } from 'fastify';
import { ApiError, errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import type { MetaVersion, Transform } from '../http/negotiate.js';
import { sendJson, sendYaml } from '../http/respond.js';
import { crdTable, tableFor, tableJson, type IncludeObject, type Table, type TableOptions } from '../printing/tables.js';
import { apiVersionOf, type ResourceType } from '../registry/resource-type.js';
import type { KubeObject } from '../storage/types.js';

/**
 * Writes an answer in the negotiated media type: JSON (`stringify`, when given, writes it faster),
 * or YAML with sorted keys, as kube-apiserver converts its JSON (sigs.k8s.io/yaml).
 */
export function sendAnswer(ctx: AuthorizedContext, code: number, body: unknown, stringify?: (value: never) => string): FastifyReply {
  if (ctx.output?.mediaType !== 'application/yaml') return sendJson(ctx.reply, code, body, stringify);
  return sendYaml(ctx.reply, code, body);
}

/** Renders objects as a Table for the request's type and options. */
export type TableWriter = (objects: KubeObject[], extra?: Partial<TableOptions>) => Table;

const INCLUDE_OBJECT: readonly string[] = ['Metadata', 'Object', 'None', ''];

/** The Table writer when the request asked for a Table (its `includeObject` checked), else undefined. */
export function tableWriter(ctx: AuthorizedContext, type: ResourceType): TableWriter | undefined {
  const transform = ctx.output?.transform;
  if (transform?.kind !== 'Table') return undefined;
  const include = ctx.query.string('includeObject') ?? '';
  if (!INCLUDE_OBJECT.includes(include)) {
    throw errors.badRequest(`Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(include)}: must be 'Metadata', 'Object', 'None', or empty`);
  }
  const options: TableOptions = { includeObject: (include || 'Metadata') as IncludeObject, version: transform.version };
  return (objects, extra = {}) =>
    type.custom ? crdTable(type.custom.printerColumns, objects, { ...options, ...extra }) : tableFor(type.resource, objects, { ...options, ...extra });
}

/** An object's metadata alone, as client-go's metadata client reads it. */
export function partialObjectMetadata(object: KubeObject, version: MetaVersion): { kind: 'PartialObjectMetadata'; apiVersion: string; metadata: KubeObject['metadata'] } {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: object.metadata };
}

function wrongShape(transform: Transform, what: string): ApiError {
  return transform.kind === 'PartialObjectMetadata'
    ? errors.notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${what})`)
    : errors.notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${what})`);
}

function isStatus(object: unknown): boolean {
  return (object as { kind?: unknown } | null)?.kind === 'Status';
}

/** One object (a get's, a write's) as the request asked for it. */
export function objectAnswer(ctx: AuthorizedContext, type: ResourceType, object: KubeObject): unknown {
  const transform = ctx.output?.transform;
  if (transform === undefined || isStatus(object)) return object;
  if (transform.kind === 'PartialObjectMetadata') return partialObjectMetadata(object, transform.version);
  if (transform.kind === 'PartialObjectMetadataList') throw wrongShape(transform, type.kind);
  // tableWriter answers for a Table.
  return (tableWriter(ctx, type) as TableWriter)([object], { resourceVersion: object.metadata.resourceVersion });
}

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
}

/** A list as the request asked for it, with the function that writes it as JSON. */
export function listAnswer(ctx: AuthorizedContext, type: ResourceType, items: KubeObject[], meta: ListMeta): { body: unknown; stringify?: (value: never) => string } {
  const transform = ctx.output?.transform;
  const listMeta = { resourceVersion: meta.resourceVersion, ...(meta.continue ? { continue: meta.continue } : {}) };
  if (transform === undefined) return { body: { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: listMeta, items } };
  if (transform.kind === 'PartialObjectMetadata') throw wrongShape(transform, type.listKind);
  if (transform.kind === 'PartialObjectMetadataList') {
    return {
      body: {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${transform.version}`,
        metadata: listMeta,
        items: items.map((i) => partialObjectMetadata(i, transform.version)),
      },
    };
  }
  const table = (tableWriter(ctx, type) as TableWriter)(items, meta);
  return { body: table, stringify: tableJson as (value: never) => string };
}

/**
 * Each watch event's object as the request asked for it (undefined: as it is). A Table's column
 * definitions come with the first event only. A list's form asked of a watch's single objects
 * cannot be made: kube-apiserver then sends each object as it is, and so does this server.
 */
export function eventObjectWriter(ctx: AuthorizedContext, type: ResourceType): ((object: KubeObject) => unknown) | undefined {
  const transform = ctx.output?.transform;
  if (transform === undefined || transform.kind === 'PartialObjectMetadataList') return undefined;
  if (transform.kind === 'PartialObjectMetadata') return (object) => partialObjectMetadata(object, transform.version);
  const table = tableWriter(ctx, type) as TableWriter;
  let first = true;
  return (object) => {
    const written = table([object], { noHeaders: !first, resourceVersion: object.metadata?.resourceVersion });
    first = false;
    return written;
  };
}
