// OpenAPI (kube-api.md, trap 2): v3 for kubectl explain and kubectl's choice of server-side
// field validation; v2 as JSON, and as the smallest valid protobuf document for the kubectl
// versions that ask for it in that form only (their client-side validation then defers to us).
// The documents themselves are built in ../openapi/documents.ts.
import { errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { sendError } from '../http/respond.js';
import type { OpenApi, OpenApiDocument } from '../openapi/documents.js';

const V2_PROTOBUF = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
const V3_PROTOBUF = ['application/com.github.proto-openapi.spec.v3@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf'];

/**
 * Which form of an OpenAPI document an Accept header asks for: the first listed type that is
 * JSON (or a wildcard) or one of the `protobuf` media types; undefined when none is served.
 */
function negotiate(accept: string | undefined, protobufTypes: string[]): 'json' | 'protobuf' | undefined {
  if (!accept) return 'json';
  for (const part of accept.split(',')) {
    const type = part.trim().split(';')[0].trim();
    if (protobufTypes.includes(type)) return 'protobuf';
    if (type === 'application/json' || type === '*/*' || type === 'application/*' || type === '') return 'json';
  }
  return undefined;
}

function sendDocument(ctx: AuthorizedContext, document: OpenApiDocument): void {
  const { request, reply } = ctx;
  reply.header('etag', `"${document.hash}"`).header('vary', 'Accept');
  if (request.headers['if-none-match'] === `"${document.hash}"`) {
    reply.code(304).send();
    return;
  }
  reply.code(200).header('content-type', 'application/json').send(document.json);
}

export function isOpenApiPath(path: string): boolean {
  return path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/');
}

export function serveOpenApi(openApi: OpenApi) {
  return async (ctx: AuthorizedContext): Promise<void> => {
    const { path, request, reply } = ctx;
    if (path === '/openapi/v2') {
      const format = negotiate(request.headers.accept, V2_PROTOBUF);
      if (format === 'protobuf') {
        reply.header('content-type', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf').send(Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]));
        return;
      }
      if (format === undefined) throw errors.notAcceptable('only application/json and application/com.github.proto-openapi.spec.v2@v1.0+protobuf are served');
      return sendDocument(ctx, openApi.v2());
    }
    if (path === '/openapi/v3') return sendDocument(ctx, openApi.v3Index());
    const groupVersion = path.slice('/openapi/v3/'.length);
    const document = openApi.v3(groupVersion);
    if (!document) {
      sendError(reply, errors.pathNotFound(path));
      return;
    }
    // Only JSON is served; a client asking for protobuf alone gets 406.
    if (negotiate(request.headers.accept, V3_PROTOBUF) !== 'json') throw errors.notAcceptable('only application/json is served for OpenAPI v3 documents');
    const hash = ctx.query.string('hash');
    if (hash !== undefined) {
      // An outdated hash is sent to the current document, as kube-apiserver does.
      if (hash !== document.hash) {
        reply.code(301).header('location', `/openapi/v3/${groupVersion}?hash=${document.hash}`).send();
        return;
      }
      reply.header('cache-control', 'public, immutable').header('expires', new Date(Date.now() + 365 * 86400_000).toUTCString());
    }
    return sendDocument(ctx, document);
  };
}
