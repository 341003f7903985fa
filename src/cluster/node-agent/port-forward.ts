// `kubectl port-forward` on the node agent: the kubelet's /portForward/<namespace>/<pod> endpoint,
// reached through the API server's pods/portforward proxy. A SPDY session (spdy.ts), over the
// upgraded connection (portforward.k8s.io) or tunnelled in a WebSocket's binary messages
// (SPDY/3.1+portforward.k8s.io, kubectl 1.31+): for each connection kubectl accepts locally it
// opens two streams with the same `requestid` and `port` — `error` and `data` — and the node
// connects to the pod's IP on that port and carries the bytes both ways until either side ends.
// A connection that fails is reported on the error stream, as the kubelet words it. Each
// direction keeps to the slower side's pace: the pod's bytes are no longer read while the session
// holds more than it may for the client (spdy.ts), and the client's are not read while the pod's
// connection does not take them.
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../common/log.js';
import { SpdySession, type SpdyStream } from './spdy.js';

/** The stream protocol of port forwarding, and its WebSocket tunnel's subprotocol. */
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

export interface ForwardTarget {
  podIP: string;
  /** namespace/name and UID, for the error messages. */
  pod: string;
  uid: string;
}

/** Serves one port-forward session on `socket` (already upgraded) until the client closes it. */
export function runPortForward(socket: Duplex, target: ForwardTarget, log: Logger): SpdySession {
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>();
  const session: SpdySession = new SpdySession(socket, (stream) => {
    const type = stream.headers.get('streamtype');
    const request = stream.headers.get('requestid') ?? '';
    if (type !== 'error' && type !== 'data') return stream.reset();
    const pair = pairs.get(request) ?? {};
    pairs.set(request, pair);
    if (pair[type]) return stream.reset();
    pair[type] = stream;
    if (!pair.error || !pair.data) return;
    pairs.delete(request);
    forward(session, pair.error, pair.data, stream.headers.get('port') ?? '', target, log);
  });
  return session;
}

function forward(session: SpdySession, error: SpdyStream, data: SpdyStream, portHeader: string, target: ForwardTarget, log: Logger): void {
  const port = Number(portHeader);
  const fail = (message: string) => {
    error.write(Buffer.from(`error forwarding port ${portHeader} to pod ${target.pod}, uid ${target.uid}: ${message}`));
    error.end();
    data.end();
  };
  if (!/^\d+$/.test(portHeader) || port < 1 || port > 65535) return fail(`invalid port "${portHeader}"`);
  const conn = connect({ host: target.podIP, port });
  let connected = false;
  conn.on('connect', () => {
    connected = true;
    log.debug({ pod: target.pod, port }, 'port-forward connection');
  });
  conn.on('error', (e) => {
    if (!connected) fail(e.message);
    else data.reset();
  });
  let held = false;
  conn.on('data', (chunk: Buffer) => {
    if (data.write(chunk) || held) return;
    held = true;
    conn.pause();
    session.whenDrained(() => {
      held = false;
      conn.resume();
    });
  });
  conn.on('end', () => data.end());
  conn.on('close', () => {
    if (connected) error.end();
  });
  let blocked = false;
  const unblock = () => {
    if (!blocked) return;
    blocked = false;
    session.resumeReading();
  };
  conn.on('drain', unblock);
  conn.on('close', unblock);
  data.on('data', (chunk: Buffer) => {
    if (conn.destroyed || conn.write(chunk) || blocked) return;
    blocked = true;
    session.pauseReading();
  });
  data.on('end', () => conn.end());
  data.on('close', () => conn.destroy());
}
