// How answers are written: JSON with an exact `application/json` Content-Type, warnings as
// `Warning: 299` headers, and every failure as a Kubernetes `Status`, whoever raised it (our
// handlers, the filters, or fastify itself for bodies it could not read).
import type { FastifyReply } from 'fastify';
import type { Socket } from 'node:net';
import { answerClientError, clientErrorOf } from '../../common/http-limits.js';
import { ApiError, errors } from '../errors.js';
import { BODY_LIMIT } from './body.js';
import { parseBool, QueryParams } from './query.js';
import { negotiateOutput } from './negotiate.js';
import YAML from 'yaml';

// A Buffer body keeps fastify from appending '; charset=utf-8': discovery clients compare the
// header exactly (kube-api.md, trap 1). `?pretty=true` indents, as kube-apiserver does (the
// router has refused a value that does not parse).
// `stringify`, when given, writes `value` as JSON.stringify(value) would, only faster (a Table
// with memoized rows).
export function sendJson(reply: FastifyReply, code: number, value: unknown, stringify: (value: never) => string = JSON.stringify): FastifyReply {
  // Most answers' URLs have no `pretty` (nor an escape that could spell it): no query parsed for them.
  const url = reply.request.url;
  const pretty = url.includes('pretty') || url.includes('%') ? QueryParams.fromUrl(url).string('pretty') : undefined;
  const text = pretty !== undefined && parseBool(pretty) ? `${JSON.stringify(value, null, 2)}\n` : stringify(value as never);
  return reply.code(code).header('content-type', 'application/json').send(Buffer.from(text));
}

/** YAML with sorted keys, as kube-apiserver converts its JSON (sigs.k8s.io/yaml). */
export function sendYaml(reply: FastifyReply, code: number, value: unknown): FastifyReply {
  return reply.code(code).header('content-type', 'application/yaml').send(Buffer.from(YAML.stringify(value, { sortMapEntries: true, lineWidth: 0 })));
}

/** Whether the request's Accept header is answered in YAML (a header it cannot answer is: JSON). */
function wantsYaml(reply: FastifyReply): boolean {
  const accept = reply.request.headers.accept;
  if (accept === undefined || !accept.includes('yaml')) return false;
  try {
    return negotiateOutput(accept).mediaType === 'application/yaml';
  } catch {
    return false;
  }
}

/**
 * A failure as a Status, in the media type the request negotiates (JSON when it negotiates none),
 * as kube-apiserver's ErrorNegotiated writes it. A Status that says when to retry
 * (details.retryAfterSeconds) says it in Retry-After too.
 */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const retryAfter = error.details?.retryAfterSeconds;
  if (retryAfter !== undefined && retryAfter > 0) reply.header('retry-after', String(retryAfter));
  return wantsYaml(reply) ? sendYaml(reply, error.code, error.toStatus()) : sendJson(reply, error.code, error.toStatus());
}

/** Warnings reach clients as `Warning: 299 - "text"` headers (kubectl prints them). */
export function withWarnings(reply: FastifyReply, warnings: string[]): FastifyReply {
  return warnings.length > 0 ? reply.header('warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`)) : reply;
}

/** The Status for any error a request ended with: ours as they are, fastify's and the runtime's mapped. */
export function statusOf(error: Error & { statusCode?: number; code?: string }): ApiError {
  if (error instanceof ApiError) return error;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
    return errors.tooLarge(`the request body is larger than the limit of ${BODY_LIMIT} bytes`);
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return errors.unsupportedMediaType(error.message);
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return errors.badRequest(error.message);
  return errors.internal(error.message);
}

/**
 * The answer to a request Node's HTTP parser could not read, written on the socket: a method it
 * does not know is a 405, as kube-apiserver answers one; headers over the limit a 431, a request
 * not received in time a 408 (common/http-limits.ts), anything else (a broken header, …) a 400.
 */
export function answerUnparsable(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  // At run time the packet is the Buffer the parser stopped in.
  const packet = err.rawPacket;
  const [method = '', path = ''] = (Buffer.isBuffer(packet) ? packet.subarray(0, 2048).toString('latin1').split('\r\n')[0] : '').split(' ');
  const refusal = err.code === 'HPE_INVALID_METHOD' ? { code: 405, message: '' } : clientErrorOf(err);
  answerClientError(socket, refusal, ({ code, message }) => {
    const error = code === 405 ? errors.methodNotAllowed(method, path.split('?')[0]) : code === 413 ? errors.tooLarge(message) : new ApiError(code, code === 408 ? 'Timeout' : 'BadRequest', message);
    return { contentType: 'application/json', body: JSON.stringify(error.toStatus()) };
  });
}
