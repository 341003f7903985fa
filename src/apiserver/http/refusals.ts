// What Node's HTTP server refuses with a bare answer and no body, refused here with a Status as
// every other refusal is: an HTTP/1.1 request without a Host header (Go's net/http, under
// kube-apiserver, refuses it too: 400 "missing required Host header") and an Expect header other
// than 100-continue (417). Node's own check is turned off for the first (requireHostHeader: false)
// and replaced for the second (its 'checkExpectation' event), see server.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, errors } from '../errors.js';

/** The refusal of an HTTP/1.1 request that names no host, or undefined. */
export function missingHost(request: IncomingMessage): ApiError | undefined {
  return request.httpVersion === '1.1' && request.headers.host === undefined ? errors.badRequest('missing required Host header') : undefined;
}

/** Answers a request whose Expect header asks for something other than 100-continue. */
export function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  const status = new ApiError(417, 'ExpectationFailed', `cannot meet the expectation "${String(request.headers.expect).slice(0, 100)}" (only 100-continue is understood)`).toStatus();
  const body = JSON.stringify(status);
  response.writeHead(417, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
}
