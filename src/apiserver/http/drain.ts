// A stopping API server's connections, let go gracefully (kube-apiserver's graceful termination
// with --shutdown-send-retry-after): once the server stops, every request that still arrives on an
// open connection is answered 503 with Retry-After and `Connection: close` (filters/shutdown.ts),
// so a client asks again on a new connection, which goes to another server. Here: the listener
// closes at once — a balancer's next connection attempt is refused and goes to another server
// (haproxy's redispatch) instead of being accepted here, only to be answered 503 or cut at the end;
// the requests already in flight finish, and their answers close their connections too; a
// connection that brings no request within the grace period is closed while idle (a client between
// two requests sees its pooled connection end); what is still open when the in-flight bound is
// over is left to the server's close (destroyed).
import type { Server as HttpServer, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { sleep } from '../../common/sleep.js';

/** How long requests in flight at the end of the grace period may take to finish. */
export const SHUTDOWN_INFLIGHT_MS = 10_000;
const POLL_MS = 25;

/** The slice of an HTTP(S) server the drain uses (https.Server has the same). */
type Drainable = Pick<HttpServer, 'on' | 'closeIdleConnections' | 'listening'>;

export interface ConnectionDrain {
  /** The connections open now. */
  readonly open: number;
  /**
   * Waits up to `graceMs` for the open connections to end (each closes after its next answer),
   * then closes the idle ones, again and again as requests in flight finish, for up to `inflightMs`.
   */
  drain(graceMs: number, inflightMs?: number): Promise<void>;
}

/** Tracks `server`'s connections and the answers in flight on them, from now on. */
export function trackConnections(server: Drainable): ConnectionDrain {
  const sockets = new Set<Socket>();
  const answering = new Set<ServerResponse>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (_request, response: ServerResponse) => {
    answering.add(response);
    response.once('close', () => answering.delete(response));
    if (draining && !response.headersSent) response.setHeader('connection', 'close');
  });
  return {
    get open() {
      return sockets.size;
    },
    async drain(graceMs, inflightMs = SHUTDOWN_INFLIGHT_MS) {
      draining = true;
      // No new connection from now. (http's Server.close would also close the idle connections at
      // once, before their clients could be told to go: the listener alone is closed, as net's.)
      if (server.listening) NetServer.prototype.close.call(server as unknown as NetServer);
      // Answers still to be sent close their connection once sent.
      for (const response of answering) if (!response.headersSent) response.setHeader('connection', 'close');
      const graceEnd = Date.now() + graceMs;
      while (sockets.size > 0 && Date.now() < graceEnd) await sleep(POLL_MS);
      const end = Date.now() + inflightMs;
      while (sockets.size > 0 && Date.now() < end) {
        server.closeIdleConnections();
        await sleep(POLL_MS);
      }
    },
  };
}
