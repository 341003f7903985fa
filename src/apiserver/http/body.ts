// Request bodies read and decoded as kube-apiserver does, with its limits: read by the handler
// (after authentication and authorization) up to 3 MiB, more is a 413; JSON, YAML or Kubernetes
// protobuf by Content-Type; a nesting depth limit checked before and after parsing (so no decoder
// and no later walk over the object recurses without bound over client data); and the patch
// type named by a PATCH's Content-Type.
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import YAML from 'yaml';
import { ApiError, errors } from '../errors.js';
import { decodeKubernetesProtobuf, ProtobufError } from '../protobuf.js';
import type { PatchType } from '../resources.js';

/** The largest request body accepted (kube-apiserver's limit is 3 MiB too). */
export const BODY_LIMIT = 3 * 1024 * 1024;

/**
 * The deepest nesting of objects and arrays a body may have. kube's JSON decoder allows 10,000;
 * ours is lower so that the recursive walks over objects (schema validation, merges, managed
 * fields) stay far from the stack limit, and still far beyond any real object.
 */
export const MAX_DEPTH = 512;

const tooLarge = () => errors.tooLarge(`the request body is larger than the limit of ${BODY_LIMIT} bytes`);

function readStream(stream: Readable, declaredLength: number | undefined): Promise<Buffer> {
  if (declaredLength !== undefined && declaredLength > BODY_LIMIT) {
    stream.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) {
        chunks.push(chunk);
        return;
      }
      // The rest is read and dropped, so that the 413 can still be written on this connection.
      stream.off('data', onData);
      stream.resume();
      reject(tooLarge());
    };
    stream.on('data', onData);
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', (e) => reject(errors.badRequest(`the request body could not be read: ${e.message}`)));
  });
}

const bodies = new WeakMap<FastifyRequest, Promise<Buffer>>();

/** The request's body (empty when it has none), read once. */
export function requestBody(request: FastifyRequest): Promise<Buffer> {
  let body = bodies.get(request);
  if (!body) {
    const stream = request.body as Readable | undefined;
    const length = request.headers['content-length'];
    body = stream ? readStream(stream, length === undefined ? undefined : Number(length)) : Promise.resolve(Buffer.alloc(0));
    bodies.set(request, body);
  }
  return body;
}

const tooDeep = () => errors.badRequest(`the request body could not be decoded: the object is nested deeper than ${MAX_DEPTH} levels`);

/** The deepest bracket nesting of JSON or flow-style YAML text, in one pass, strings skipped. */
export function textNestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '{' || c === '[') deepest = Math.max(deepest, ++depth);
    else if (c === '}' || c === ']') depth = Math.max(0, depth - 1);
  }
  return deepest;
}

/** The nesting depth of a decoded value, walked with an explicit stack (never recursion). */
export function valueNestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_DEPTH) return deepest;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? 'application/json').split(';')[0].trim().toLowerCase();
}

const YAML_TYPES = new Set(['application/yaml', 'application/apply-patch+yaml', 'text/yaml', 'application/x-yaml']);

/** Decodes a request body by its Content-Type; 400 for what does not decode or nests too deep. */
export function decodeBody(raw: Buffer | undefined, contentType: string | undefined): unknown {
  if (!raw || raw.length === 0) throw errors.badRequest('the request body is empty');
  const type = mediaType(contentType);
  if (type === 'application/vnd.kubernetes.protobuf') {
    let value: unknown;
    try {
      value = decodeKubernetesProtobuf(raw);
    } catch (e) {
      if (e instanceof ProtobufError) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request could not be decoded as protobuf: ${e.message}`);
      throw e;
    }
    if (valueNestingDepth(value) > MAX_DEPTH) throw tooDeep();
    return value;
  }
  if (type === 'application/cbor') {
    throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got "${type}")`);
  }
  const text = raw.toString('utf8');
  // Block-style YAML nests by indentation, which this scan does not see; the check after
  // parsing catches that, and the parser itself is bounded by its own stack check.
  if (textNestingDepth(text) > MAX_DEPTH) throw tooDeep();
  let value: unknown;
  try {
    // Aliases are expanded by the parser; its default alias limit stops "billion laughs" bodies.
    value = YAML_TYPES.has(type) ? YAML.parse(text) : JSON.parse(text);
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep();
    throw errors.badRequest(`the request body could not be decoded: ${(e as Error).message.split('\n')[0]}`);
  }
  if (valueNestingDepth(value) > MAX_DEPTH) throw tooDeep();
  return value;
}

/** A decoded body that must be a JSON object (objects, DeleteOptions, reviews). */
export function decodeObject(raw: Buffer | undefined, contentType: string | undefined): Record<string, any> {
  const value = decodeBody(raw, contentType);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest(`the request body must be an object, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value as Record<string, any>;
}

export function patchTypeOf(contentType: string | undefined): PatchType {
  const type = (contentType ?? '').split(';')[0].trim();
  switch (type) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
      return 'apply';
    default:
      throw errors.unsupportedMediaType(type);
  }
}
