// Upgrade requests (a WebSocket for `kubectl exec`, SPDY from older kubectls) through the same
// chain as every request: Node hands them to 'upgrade' listeners with the raw socket instead of
// to fastify, so the server's listener keeps the socket aside and passes the request on to
// fastify with a response written to that socket (common/http-server.ts). Authentication,
// authorization, audit and metrics then apply as to any request; a handler that serves upgrades
// (handlers/connect.ts) takes the socket over with upgradeOf(), and any other handler's answer —
// or a refusal — is written as an ordinary response, after which the connection closes.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { responseOnSocket } from '../../common/http-server.js';

/** The socket of an upgrade request, and the bytes read past its head. */
export interface Upgrade {
  socket: Duplex;
  head: Buffer;
}

const upgrades = new WeakMap<IncomingMessage, Upgrade>();

/** The upgrade a request asks for, when it came as one (undefined for an ordinary request). */
export function upgradeOf(req: IncomingMessage): Upgrade | undefined {
  return upgrades.get(req);
}

/**
 * Sends `server`'s upgrade requests through its request listeners (fastify's), their sockets kept
 * for upgradeOf(); the function returned ends the connections still open (an exec session lasts
 * as long as its command: the server's close would otherwise wait for it).
 */
export function routeUpgrades(server: Server): () => void {
  const open = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    upgrades.set(req, { socket, head });
    server.emit('request', req, responseOnSocket(req, socket));
  });
  return () => {
    for (const socket of open) socket.destroy();
  };
}
