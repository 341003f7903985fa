// The OpenAPI documents the API server publishes, for `kubectl explain`, kubectl's field
// validation and generated clients: /openapi/v3 (an index with one document per group-version,
// addressed by a content hash) and /openapi/v2 (everything in one Swagger 2.0 document). Built
// from the hand-written built-in schemas and from every CRD's openAPIV3Schema; each
// group-version's document is cached until the types served there change (a CRD written or
// deleted gives the registry new type objects, which is what the cache compares).
import { createHash } from 'node:crypto';
import type { Registry } from '../registry/registry.js';
import type { ResourceType } from '../registry/resource-type.js';
import { BUILTIN_SCHEMAS, builtinSchemaName, customResourceTypeMeta, genericSchema, type Schema } from './builtins.js';

export interface OpenApiDocument {
  /** The serialised document. */
  json: Buffer;
  /** Upper-case hex SHA-512 of `json`, as kube-apiserver hashes its documents (ETag and `?hash=`). */
  hash: string;
}

const V3_REF = '#/components/schemas/';

function documentOf(value: unknown): OpenApiDocument {
  const json = Buffer.from(JSON.stringify(value));
  return { json, hash: createHash('sha512').update(json).digest('hex').toUpperCase() };
}

/** The path of a group-version in the v3 index: `api/v1`, `apis/apps/v1`. */
export function groupVersionPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** The definition name of a kind: Kubernetes' package names for built-ins, the reversed group for custom resources (`com.example.v1.Widget`). */
export function schemaName(type: ResourceType): string {
  if (type.custom) return `${type.group.split('.').reverse().join('.')}.${type.version}.${type.kind}`;
  return builtinSchemaName(type.group, type.version, type.kind);
}

/** A custom resource's schema: its CRD's openAPIV3Schema, with apiVersion, kind and metadata described as for every kind. */
function customSchema(type: ResourceType): Schema {
  const base = (type.custom?.schema ? structuredClone(type.custom.schema) : { 'x-kubernetes-preserve-unknown-fields': true }) as Schema;
  const properties = { ...((base.properties as Record<string, Schema> | undefined) ?? {}) };
  const standard = customResourceTypeMeta();
  for (const key of ['apiVersion', 'kind']) properties[key] = { ...standard[key], ...(properties[key] ?? {}) };
  const metadataDescription = properties.metadata?.description;
  properties.metadata = { ...standard.metadata, ...(metadataDescription ? { description: metadataDescription } : {}) };
  return { ...base, type: 'object', properties };
}

const upperFirst = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** The operations on one resource type: create on the collection; get, replace, patch, delete on one object. */
function operations(type: ResourceType): Record<string, Schema> {
  const prefix = `/${groupVersionPath(type.group, type.version)}`;
  const collection = type.namespaced ? `${prefix}/namespaces/{namespace}/${type.resource}` : `${prefix}/${type.resource}`;
  const gvk = { group: type.group, kind: type.kind, version: type.version };
  const tag = `${type.group ? type.group.split('.').map(upperFirst).join('') : 'core'}_${type.version}`;
  const idSuffix = `${type.group ? type.group.split('.').map(upperFirst).join('') : 'Core'}${upperFirst(type.version)}${type.namespaced ? 'Namespaced' : ''}${type.kind}`;
  const objectSchema = { $ref: `${V3_REF}${schemaName(type)}` };
  const content = (schema: Schema, types = ['application/json', 'application/yaml']) => Object.fromEntries(types.map((t) => [t, { schema }]));
  const query = (name: string, description: string, schemaType = 'string'): Schema => ({ name, in: 'query', description, schema: { type: schemaType, uniqueItems: true } });
  const dryRun = query('dryRun', 'When present ("All"), the change is checked but not persisted.');
  const fieldManager = query('fieldManager', 'The name of the actor making the change, recorded in metadata.managedFields. Required for apply patches.');
  const fieldValidation = query('fieldValidation', 'What to do with fields the schema does not know, or duplicated fields: Ignore, Warn or Strict.');
  const pathParams = [
    ...(type.namespaced ? [{ name: 'namespace', in: 'path', required: true, description: 'The namespace of the objects.', schema: { type: 'string', uniqueItems: true } }] : []),
  ];
  const op = (verb: string, action: string, description: string, parameters: Schema[], okCode: string, requestBody?: Schema): Schema => ({
    tags: [tag],
    description,
    operationId: `${verb}${idSuffix}`,
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses: { [okCode]: { description: okCode === '201' ? 'Created' : 'OK', content: content(objectSchema) }, '401': { description: 'Unauthorized' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  });
  const body = { content: content(objectSchema), required: true };
  const patchTypes = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', ...(type.builtin ? ['application/strategic-merge-patch+json'] : [])];
  const patchBody = { content: content({ type: 'object', description: 'The patch, in the format its content type names.' }, patchTypes), required: true };
  return {
    [collection]: {
      parameters: pathParams,
      post: op('create', 'post', `create a ${type.kind}`, [dryRun, fieldManager, fieldValidation], '201', body),
    },
    [`${collection}/{name}`]: {
      parameters: [{ name: 'name', in: 'path', required: true, description: `The name of the ${type.kind}.`, schema: { type: 'string', uniqueItems: true } }, ...pathParams],
      get: op('read', 'get', `read the specified ${type.kind}`, [], '200'),
      put: op('replace', 'put', `replace the specified ${type.kind}`, [dryRun, fieldManager, fieldValidation], '200', body),
      patch: op('patch', 'patch', `partially update the specified ${type.kind}`, [dryRun, fieldManager, fieldValidation, query('force', 'Apply patches only: take over fields other managers own instead of failing with a conflict.', 'boolean')], '200', patchBody),
      delete: op('delete', 'delete', `delete a ${type.kind}`, [dryRun], '200'),
    },
  };
}

/** Adds every built-in definition the schemas refer to, transitively. */
function addReferenced(schemas: Record<string, Schema>): void {
  const pending = Object.values(schemas);
  while (pending.length > 0) {
    const text = JSON.stringify(pending.pop());
    for (const match of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      const name = match[1];
      if (schemas[name] || !BUILTIN_SCHEMAS[name]) continue;
      schemas[name] = BUILTIN_SCHEMAS[name];
      pending.push(schemas[name]);
    }
  }
}

function buildV3(types: ResourceType[], serverVersion: string): Schema {
  const schemas: Record<string, Schema> = {};
  const paths: Record<string, Schema> = {};
  for (const type of types) {
    const name = schemaName(type);
    const schema = type.custom ? customSchema(type) : structuredClone(BUILTIN_SCHEMAS[name] ?? genericSchema(type.kind));
    schema['x-kubernetes-group-version-kind'] = [{ group: type.group, kind: type.kind, version: type.version }];
    schemas[name] = schema;
    Object.assign(paths, operations(type));
  }
  addReferenced(schemas);
  const sorted = Object.fromEntries(Object.keys(schemas).sort().map((k) => [k, schemas[k]]));
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: serverVersion }, paths, components: { schemas: sorted } };
}

/** Rewrites a v3 fragment for Swagger 2.0: `#/definitions/` references, a single allOf reference as a plain $ref. */
function toV2Schema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toV2Schema);
  if (typeof value !== 'object' || value === null) return value;
  const o = value as Schema;
  if (Array.isArray(o.allOf) && o.allOf.length === 1 && !o.properties) {
    const { allOf, default: _default, ...rest } = o;
    return { ...(toV2Schema(allOf[0]) as Schema), ...(toV2Schema(rest) as Schema) };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(o)) out[k] = k === '$ref' && typeof v === 'string' ? v.replace(V3_REF, '#/definitions/') : toV2Schema(v);
  return out;
}

function toV2Operation(op: Schema): Schema {
  const { requestBody, responses, parameters, ...rest } = op as { requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>; parameters: Schema[] };
  const params = parameters.map(({ schema, ...p }) => ({ ...p, type: (schema as Schema).type, uniqueItems: true }));
  if (requestBody) params.push({ name: 'body', in: 'body', required: true, schema: toV2Schema(Object.values(requestBody.content)[0].schema) } as never);
  return {
    ...rest,
    ...(requestBody ? { consumes: Object.keys(requestBody.content) } : {}),
    produces: ['application/json', 'application/yaml'],
    parameters: params,
    responses: Object.fromEntries(Object.entries(responses).map(([code, r]) => [code, { description: r.description, ...(r.content ? { schema: toV2Schema(Object.values(r.content)[0].schema) } : {}) }])),
  };
}

/** Publishes the OpenAPI documents of what a registry serves. */
export class OpenApi {
  private readonly cache = new Map<string, { types: ResourceType[]; v3: Schema; document: OpenApiDocument }>();
  private v2Cache?: { key: string; document: OpenApiDocument };

  constructor(
    private readonly registry: Registry,
    private readonly serverVersion: string,
  ) {}

  /** Every served group-version, as its index path (`api/v1`, `apis/apps/v1`). */
  private groupVersions(): Array<{ path: string; group: string; version: string }> {
    const out = [{ path: groupVersionPath('', 'v1'), group: '', version: 'v1' }];
    for (const g of this.registry.groups()) for (const v of g.versions) out.push({ path: groupVersionPath(g.name, v), group: g.name, version: v });
    return out;
  }

  private entry(group: string, version: string): { v3: Schema; document: OpenApiDocument } | undefined {
    const types = this.registry.resources(group, version);
    if (types.length === 0) return undefined;
    const path = groupVersionPath(group, version);
    const cached = this.cache.get(path);
    if (cached && cached.types.length === types.length && cached.types.every((t, i) => t === types[i])) return cached;
    const v3 = buildV3(types, this.serverVersion);
    const fresh = { types, v3, document: documentOf(v3) };
    this.cache.set(path, fresh);
    return fresh;
  }

  /** The v3 document of one group-version (`api/v1`, `apis/<group>/<version>`), or undefined when nothing is served there. */
  v3(path: string): OpenApiDocument | undefined {
    const gv = this.groupVersions().find((g) => g.path === path);
    return gv ? this.entry(gv.group, gv.version)?.document : undefined;
  }

  /** The v3 index: every group-version with its document's address. */
  v3Index(): OpenApiDocument {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    const served = this.groupVersions();
    for (const path of this.cache.keys()) if (!served.some((gv) => gv.path === path)) this.cache.delete(path);
    for (const gv of served) {
      const entry = this.entry(gv.group, gv.version);
      if (entry) paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${entry.document.hash}` };
    }
    return documentOf({ paths });
  }

  /** Everything in one Swagger 2.0 document. */
  v2(): OpenApiDocument {
    const entries = this.groupVersions().map((gv) => this.entry(gv.group, gv.version)).filter((e) => e !== undefined);
    const key = entries.map((e) => e.document.hash).join(',');
    if (this.v2Cache?.key === key) return this.v2Cache.document;
    const paths: Record<string, Schema> = {};
    const definitions: Record<string, unknown> = {};
    for (const { v3 } of entries) {
      for (const [path, item] of Object.entries(v3.paths as Record<string, Schema>)) {
        paths[path] = Object.fromEntries(Object.entries(item).map(([method, op]) => [method, method === 'parameters'
          ? (op as Schema[]).map(({ schema, ...p }) => ({ ...p, type: (schema as Schema).type, uniqueItems: true }))
          : toV2Operation(op as Schema)]));
      }
      for (const [name, schema] of Object.entries((v3.components as { schemas: Record<string, Schema> }).schemas)) definitions[name] = toV2Schema(schema);
    }
    const document = documentOf({ swagger: '2.0', info: { title: 'Kubernetes', version: this.serverVersion }, paths, definitions });
    this.v2Cache = { key, document };
    return document;
  }
}
