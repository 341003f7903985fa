// What every bosun HTTP server does about clients that misbehave on the wire.
//
// Time: how long a client may take over a request, so that a slow one (slowloris: a connection
// that says nothing, headers or a body trickled a byte at a time, a TLS handshake never finished)
// cannot hold a socket — and with it a file descriptor and memory — for as long as it likes.
// Node's own bounds are 60 s for the headers and 5 min for the whole request (none at all under
// fastify, which turns requestTimeout off), checked every 30 s, and 2 min for a TLS handshake;
// kube-apiserver gives the headers 32 s (ReadHeaderTimeout). The clients of these servers are on
// this machine or in the local cluster and send a request in one write, so the bounds are
// generous for them and short for a client that drips.
//
// A request target Node's parser lets through but no URL parser reads (`GET http://[ HTTP/1.1`)
// is the client's mistake too: `parseTarget` tells the handler, which answers 400 rather than let
// `new URL` throw into a 500.
//
// Requests Node's parser refuses (a broken header, headers over 16 KiB, a request past its time):
// answered with the status Node would give (400, 431, 408), in the server's own error format,
// and the connection closed once the answer is out — closed, not only ended: a client that never
// closes its side would otherwise keep the socket half-open for good.
//
//   createServer({ ...REQUEST_LIMITS, cert, key }, handler)                      // node:http(s)
//   Fastify({ requestTimeout: REQUEST_TIMEOUT_MS, http: REQUEST_LIMITS,          // or https: {…}
//             clientErrorHandler: (err, socket) => answerClientError(socket, clientErrorOf(err), render) })
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** From the first byte of a request (or the connection's opening) to the end of its headers. */
export const HEADERS_TIMEOUT_MS = 15_000;
/** From the first byte of a request to the end of its body. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** From a TLS connection's opening to the end of its handshake. */
export const HANDSHAKE_TIMEOUT_MS = 15_000;
/** How often the HTTP server looks for requests past their bounds (so a bound is kept within this). */
const CHECK_INTERVAL_MS = 1_000;
/** How long a refused client gets to read its answer before the connection is closed regardless. */
const LINGER_MS = 2_000;

/** Options for node:http's and node:https's createServer (plain HTTP ignores the handshake's). */
export const REQUEST_LIMITS = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: CHECK_INTERVAL_MS,
  handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
} as const;

/** A refusal: the status and a sentence for the client. */
export interface ClientError {
  code: number;
  message: string;
}

/** The status of a request Node's HTTP parser refused (Node's own mapping), or undefined when the connection is gone. */
export function clientErrorOf(err: Error & { code?: string }): ClientError | undefined {
  switch (err.code) {
    case 'ECONNRESET':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 408, message: `the request was not received in time (${HEADERS_TIMEOUT_MS / 1000} s for its headers, ${REQUEST_TIMEOUT_MS / 1000} s in all)` };
    case 'HPE_HEADER_OVERFLOW':
      return { code: 431, message: 'the request line and headers are larger than the server accepts' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 413, message: 'the chunk extensions of the request body are larger than the server accepts' };
    default:
      return { code: 400, message: `the request could not be parsed: ${err.message}` };
  }
}

/**
 * Answers a refused request on its socket (a server's `clientError`) with `render`'s body for
 * the refusal, and closes the connection once the answer is written (or after a moment, for a
 * client that reads nothing).
 */
export function answerClientError(socket: Duplex, error: ClientError | undefined, render: (error: ClientError) => { contentType: string; body: string }): void {
  if (!error || !socket.writable) {
    socket.destroy();
    return;
  }
  const { contentType, body } = render(error);
  socket.end(`HTTP/1.1 ${error.code} ${STATUS_CODES[error.code] ?? 'Error'}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.once('finish', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** The request's target as a URL (relative to `base`), or undefined when it is not one. */
export function parseTarget(req: IncomingMessage, base: string): URL | undefined {
  const target = req.url ?? '/';
  return URL.canParse(target, base) ? new URL(target, base) : undefined;
}
