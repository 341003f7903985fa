// `pods/exec` and `pods/portforward`: kube-apiserver answers them by proxying the client's
// upgrade to the kubelet of the pod's node, `https://<node address>:<kubelet port>/exec/<ns>/<pod>/
// <container>?command=…` or `/portForward/<ns>/<pod>`, as its kubelet client certificate, and then
// carrying the bytes both ways untouched: the streams' protocol (a WebSocket's channel protocol, or
// SPDY) is between the client and the kubelet (cluster/node-agent/exec-session.ts,
// port-forward.ts). The locations are worked out purely; proxyUpgrade is the thin proxy.
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, errors } from '../errors.js';
import type * as api from '../../api/index.js';
import { FALSE, kubeletAddress, kubeletRefusal, kubeletTls, podContainer, TRUE, type KubeletClient } from './pod-logs.js';
import type { Upgrade } from '../http/upgrade.js';

const STREAMS = ['stdin', 'stdout', 'stderr', 'tty'];

/**
 * The kubelet URL of an exec into `pod` from the request's query (kube's PodExecOptions: command,
 * one per argument; container; stdin, stdout, stderr, tty). Throws the 400 kube answers for a bad
 * request, a pod that has ended, or one not yet on a node.
 */
export function podExecLocation(pod: api.Pod, node: api.Node | undefined, query: URLSearchParams): URL {
  const name = String(pod.metadata?.name ?? '');
  const namespace = String(pod.metadata?.namespace ?? '');
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw errors.badRequest(`cannot exec into a container in a completed pod; current phase is ${phase}`);
  const container = podContainer(pod, query.get('container') ?? '');
  const command = query.getAll('command');
  if (command.length === 0) throw errors.badRequest('you must specify at least 1 command');
  const params = new URLSearchParams();
  for (const word of command) params.append('command', word);
  for (const stream of STREAMS) {
    const value = query.get(stream);
    if (value === null || value === '') continue;
    if (!TRUE.has(value) && !FALSE.has(value)) throw errors.badRequest(`invalid boolean value ${JSON.stringify(value)} for query parameter "${stream}"`);
    if (TRUE.has(value)) params.set(stream, 'true');
  }
  if (!['stdin', 'stdout', 'stderr'].some((s) => params.has(s))) throw errors.badRequest('you must specify at least 1 of stdin, stdout, stderr');
  const { host, port } = kubeletAddress(pod, node);
  const url = new URL(`https://${host}:${port}/${['exec', namespace, name, container].map(encodeURIComponent).join('/')}`);
  url.search = params.toString();
  return url;
}

/** The kubelet URL of a port-forward to `pod` (the ports are in the streams' headers, not the URL). */
export function podPortForwardLocation(pod: api.Pod, node: api.Node | undefined): URL {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw errors.badRequest(`cannot port-forward to a completed pod; current phase is ${phase}`);
  const { host, port } = kubeletAddress(pod, node);
  return new URL(`https://${host}:${port}/${['portForward', String(pod.metadata?.namespace ?? ''), String(pod.metadata?.name ?? '')].map(encodeURIComponent).join('/')}`);
}

/** The headers of an upgrade the proxy passes on to the kubelet (the WebSocket handshake's own, and SPDY's stream protocols). */
const FORWARDED = ['upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions'];

/**
 * Makes the client's upgrade to the kubelet at `url` and, once the kubelet switches protocols,
 * answers the client with the kubelet's 101 (after `upgraded()`, which takes the response over
 * from the server) and joins the two connections; resolves when both have closed. A kubelet that
 * cannot be reached or refuses rejects with a Status error before anything is written to the client.
 */
export function proxyUpgrade(url: URL, client: KubeletClient, req: IncomingMessage, upgrade: Upgrade, upgraded: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { connection: 'Upgrade' };
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    // Offered one header each (Node joins repeated ones with commas).
    const streamProtocols = req.headers['x-stream-protocol-version'];
    if (typeof streamProtocols === 'string') headers['x-stream-protocol-version'] = streamProtocols.split(',').map((p) => p.trim()).filter(Boolean);
    const upstream = httpsRequest(url, {
      method: 'GET',
      ...kubeletTls(client),
      headers,
    });
    const clientSocket = upgrade.socket;
    const gone = () => upstream.destroy();
    clientSocket.once('close', gone);
    upstream.on('error', (err) => {
      clientSocket.off('close', gone);
      reject(new ApiError(500, 'InternalError', `error dialing backend: ${err.message}`));
    });
    upstream.on('response', (answer: IncomingMessage) => {
      clientSocket.off('close', gone);
      const code = answer.statusCode ?? 500;
      let body = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        if (body.length < 1024) body += chunk;
      });
      answer.on('end', () => reject(kubeletRefusal(code, body, 'pods/exec')));
    });
    upstream.on('upgrade', (answer: IncomingMessage, kubelet: Duplex, kubeletHead: Buffer) => {
      // (the kubelet's 101 is passed on as it came, its headers included: the chosen protocol)
      clientSocket.off('close', gone);
      upgraded();
      const lines = [`HTTP/1.1 101 ${answer.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      clientSocket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (kubeletHead.length > 0) clientSocket.write(kubeletHead);
      if (upgrade.head.length > 0) kubelet.write(upgrade.head);
      let open = 2;
      const closed = () => {
        if (--open === 0) resolve();
      };
      kubelet.on('error', () => clientSocket.destroy());
      clientSocket.on('error', () => kubelet.destroy());
      kubelet.once('close', () => {
        clientSocket.end();
        closed();
      });
      clientSocket.once('close', () => {
        kubelet.end();
        closed();
      });
      kubelet.pipe(clientSocket);
      clientSocket.pipe(kubelet);
    });
    upstream.end();
  });
}
