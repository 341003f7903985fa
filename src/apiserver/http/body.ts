// Request bodies read and decoded as kube-apiserver does, with its limits: read by the handler
// (after authentication and authorization) up to 3 MiB, more is a 413; JSON, YAML or Kubernetes
// protobuf by Content-Type; a nesting depth limit (checked on YAML's syntax tree before the
// document is built, and on every decoded value) so that no decoder and no later walk over the
// object recurses without bound over client data; and the patch type named by a PATCH's
// Content-Type.
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import YAML from 'yaml';
import { ApiError, errors } from '../errors.js';
import { decodeKubernetesProtobuf, ProtobufError } from './protobuf.js';
import { MAX_DEPTH, valueNestingDepth } from './nesting.js';
import type { PatchType } from '../registry/write-context.js';

/** The largest request body accepted (kube-apiserver's limit is 3 MiB too). */
export const BODY_LIMIT = 3 * 1024 * 1024;

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

const YAML_COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);

/**
 * A bound on the nesting of YAML text found in one linear pass, before any parser runs: the YAML
 * parser's work on deep nesting grows much faster than the text (a 1 MB body of `[` took it 10 s
 * of CPU, `- - - …` 3 s), so text that plainly nests too deep is refused first. It counts flow
 * collections (every `[`/`{` opens, every `]`/`}` closes, quoted or not — an overestimate only
 * for text holding hundreds of unclosed brackets) and, on each line, the run of block indicators
 * (`- `, `? `, `: `) it starts with, each of which opens a collection inside the last.
 */
export function yamlNestingBound(text: string, limit = MAX_DEPTH): number {
  let flow = 0;
  let deepest = 0;
  let lineStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++flow);
    else if (c === 0x5d || c === 0x7d) flow = Math.max(0, flow - 1);
    else if (c === 0x0a) lineStart = true;
    else if (lineStart && c !== 0x20 && c !== 0x09) {
      // The line's leading run of block indicators: `-`, `?` or `:` each followed by a space.
      let run = 0;
      while (i + 1 < text.length && (text[i] === '-' || text[i] === '?' || text[i] === ':') && (text[i + 1] === ' ' || text[i + 1] === '\t')) {
        run++;
        i += 2;
        while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
      }
      deepest = Math.max(deepest, flow + run);
      lineStart = false;
      i--;
    }
    if (deepest > limit) return deepest;
  }
  return deepest;
}

/**
 * The nesting depth of YAML text, measured on the YAML library's concrete syntax tree, which
 * its parser builds without recursion; building the document from it recurses, so this is
 * checked first. Walked with an explicit stack; stops counting past MAX_DEPTH.
 */
export function yamlNestingDepth(text: string): number {
  let deepest = 0;
  const seen = new Set<object>();
  const stack: [unknown, number][] = [...new YAML.Parser().parse(text)].map((t): [unknown, number] => [t, 0]);
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    const here = YAML_COLLECTIONS.has((node as { type?: string }).type ?? '') ? depth + 1 : depth;
    deepest = Math.max(deepest, here);
    if (deepest > MAX_DEPTH) return deepest;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, here]);
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
  // JSON.parse does not recurse on the stack; the YAML parser does, so YAML is measured first.
  const yaml = YAML_TYPES.has(type);
  if (yaml && (yamlNestingBound(text) > MAX_DEPTH || yamlNestingDepth(text) > MAX_DEPTH)) throw tooDeep();
  let value: unknown;
  try {
    // Aliases are expanded by the parser; its default alias limit stops "billion laughs" bodies,
    // and the check below catches aliases that nest.
    value = yaml ? YAML.parse(text) : JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`the request body could not be decoded: ${(e as Error).message.split('\n')[0]}`);
  }
  if (valueNestingDepth(value) > MAX_DEPTH) throw tooDeep();
  return value;
}

/** A decoded body that must be a JSON object (objects, DeleteOptions, reviews). */
export function decodeObject(raw: Buffer | undefined, contentType: string | undefined): Record<string, unknown> {
  const value = decodeBody(raw, contentType);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest(`the request body must be an object, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value as Record<string, unknown>;
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
