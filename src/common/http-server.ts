// What bosun's small node:http(s) servers share (the machine-config server, the metrics and
// package servers, the Cluster API webhooks, the thanos-querier proxy, a component's metrics and
// health endpoints, the node agent's servers): listening, the port a server is bound to, stopping
// it without waiting for kept-alive clients, a JSON answer, and an answer to an upgrade request.
import { Server as HttpServer, ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Server as HttpsServer } from 'node:https';
import type { Server as NetServer } from 'node:net';

/**
 * Listens on host:port; rejects with the listen error (EADDRINUSE…). The rejecting listener stays:
 * an error the server emits later (a failed accept) is swallowed, not thrown.
 */
export function listenOn(server: NetServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

/** The port `server` is bound to (the one chosen, when it listened on port 0); undefined when it is not listening. */
export function boundPort(server: NetServer | undefined): number | undefined {
  const address = server?.address();
  return address && typeof address === 'object' ? address.port : undefined;
}

/**
 * Stops listening and, for an HTTP(S) server, ends every connection at once, idle or mid-request:
 * a kept-alive client (or a watcher) would otherwise hold the close back until it left. Resolves
 * once the server is closed (at once when it was not listening).
 */
export function closeServer(server: NetServer): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    if (server instanceof HttpServer || server instanceof HttpsServer) server.closeAllConnections();
  });
}

/** An HTTP answer whose body is JSON. */
export interface JsonAnswer {
  code: number;
  body: unknown;
}

/** A Kubernetes Status of failure, as an aggregated API server answers an error. */
export function failureStatus(code: number, reason: string, message: string): JsonAnswer {
  return { code, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code } };
}

/** Writes `answer` as application/json; when an answer has begun already (an error part-way), only ends it. */
export function sendJson(res: ServerResponse, answer: JsonAnswer): void {
  if (res.headersSent) return void res.end();
  res.writeHead(answer.code, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

/**
 * A response written straight to the socket of an upgrade request (Node hands those to 'upgrade'
 * listeners, socket and all, without one): for answering it as any request is answered — a
 * refusal, or the request's handler — before anything takes the socket over. The connection
 * closes once it is sent.
 */
export function responseOnSocket(req: IncomingMessage, socket: Duplex): ServerResponse {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0]);
  res.on('finish', () => socket.end());
  return res;
}
