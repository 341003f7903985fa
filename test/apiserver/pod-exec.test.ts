// `pods/exec` through the API server: a WebSocket upgrade proxied to the kubelet of the pod's node
// as the API server's kubelet-client certificate, the bytes carried both ways untouched; and the
// refusals before any kubelet is asked (no upgrade, no command, a completed pod, SPDY, attach,
// portforward), and a kubelet's own refusal passed back as a Status. A small HTTPS server in the
// test plays the kubelet on a 127.x address with the ws library's server (the real node agent's
// endpoint is tested in test/cluster/node-agent-pods.test.ts, with the real kubectl).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { startClusterServer } from '../../src/apiserver/cluster-server.js';
import { issueServingCert } from '../../src/common/pki.js';
import { runKubectl } from '../helpers/apiserver.js';

/** An upgrade to `path` of the API server: the answer's status and body when refused, else the open WebSocket. */
function upgrade(url: string, token: string, ca: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string } | WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^https/, 'wss')}${path}`, ['v5.channel.k8s.io', 'v4.channel.k8s.io'], { ca, headers: { authorization: `Bearer ${token}`, ...headers } });
    ws.on('open', () => resolve(ws));
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}

test('pods/exec: the WebSocket upgrade reaches the kubelet of the pod\'s node and carries the streams; refusals are Statuses', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-exec-'));
  const cluster = await startClusterServer({ dataDir: dir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  const { url, caPem: ca, token, kubeconfigPath } = cluster.server;
  const kubectl = (args: string[], input?: string) => runKubectl(kubeconfigPath, args, { input });
  // The stand-in kubelet: answers /exec/default/web/app with the command it was sent on stdout,
  // echoes stdin back on stderr, and ends with a Success Status on the error channel.
  const address = `127.0.${77 + Math.floor(Math.random() * 100)}.${2 + Math.floor(Math.random() * 200)}`;
  const serving = await issueServingCert({ certPem: ca, keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') }, 'kubelet', [address]);
  const seen: { path: string; client: string }[] = [];
  const kubelet = createServer({ key: serving.keyPem, cert: serving.certPem, ca, requestCert: true, rejectUnauthorized: false }, (_req, res) => res.writeHead(404).end('not here'));
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
  kubelet.on('upgrade', (req: IncomingMessage, socket, head) => {
    const tls = req.socket as TLSSocket;
    seen.push({ path: req.url ?? '', client: tls.authorized ? String(tls.getPeerCertificate().subject?.CN ?? '') : '' });
    if (!req.url?.startsWith('/exec/default/web/app?')) {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\ncontainer side is not running');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const query = new URL(req.url!, 'https://kubelet').searchParams;
      ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(query.getAll('command').join(' '))]));
      ws.on('message', (data: Buffer) => {
        if (data[0] === 0) ws.send(Buffer.concat([Buffer.from([2]), data.subarray(1)]));
        if (data[0] === 255) {
          ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify({ metadata: {}, status: 'Success' }))]));
          ws.close(1000);
        }
      });
    });
  });
  await new Promise<void>((resolve) => kubelet.listen(0, address, resolve));
  const port = (kubelet.address() as { port: number }).port;
  try {
    assert.equal((await kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }))).code, 0);
    const status = { status: { addresses: [{ type: 'InternalIP', address }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } };
    assert.equal((await kubectl(['patch', 'node', 'n1', '--subresource=status', '--type=merge', '-p', JSON.stringify(status)])).code, 0);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'bosun.local/echo' }, { name: 'side', image: 'bosun.local/echo' }] } };
    assert.equal((await kubectl(['create', '-f', '-'], JSON.stringify(pod))).code, 0);

    const ws = await upgrade(url, token, ca, '/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&command=-l&stdin=true&stdout=true');
    assert.ok(ws instanceof WebSocket, `upgraded: ${JSON.stringify(ws)}`);
    assert.equal(ws.protocol, 'v5.channel.k8s.io');
    const received: Buffer[] = [];
    const ended = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    ws.on('message', (data: Buffer) => received.push(data));
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('typed')]));
    await new Promise((r) => setTimeout(r, 200));
    ws.send(Buffer.from([255, 0]));
    await ended;
    assert.deepEqual(received.map((b) => [b[0], b.subarray(1).toString()]), [[1, 'ls -l'], [2, 'typed'], [3, '{"metadata":{},"status":"Success"}']]);
    assert.equal(seen[0].client, 'kube-apiserver-kubelet-client', 'the API server dials the kubelet with its kubelet-client certificate');
    assert.equal(seen[0].path, '/exec/default/web/app?command=ls&command=-l&stdin=true&stdout=true');

    // Refused before any kubelet is asked.
    const asked = seen.length;
    const refusal = async (path: string, headers?: Record<string, string>) => {
      const r = await upgrade(url, token, ca, path, headers);
      assert.ok(!(r instanceof WebSocket), `${path} is refused`);
      return { status: r.status, message: JSON.parse(r.body).message as string };
    };
    assert.deepEqual(await refusal('/api/v1/namespaces/default/pods/web/exec?container=app'), { status: 400, message: 'you must specify at least 1 command' });
    assert.deepEqual(await refusal('/api/v1/namespaces/default/pods/web/exec?command=ls'), { status: 400, message: 'a container name must be specified for pod web, choose one of: [app side]' });
    assert.deepEqual(await refusal('/api/v1/namespaces/default/pods/web/exec?container=app&command=ls'), { status: 400, message: 'you must specify at least 1 of stdin, stdout, stderr' });
    assert.deepEqual(await refusal('/api/v1/namespaces/default/pods/nope/exec?container=app&command=ls&stdout=1'), { status: 404, message: 'pods "nope" not found' });
    assert.match((await refusal('/api/v1/namespaces/default/pods/web/attach?container=app&stdout=1')).message, /^bosun does not serve pods\/attach/);
    assert.match((await refusal('/api/v1/namespaces/default/pods/web/portforward?ports=80')).message, /^bosun does not serve pods\/portforward/);
    assert.equal((await refusal('/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&stdout=1', { authorization: 'Bearer wrong' })).status, 401);
    assert.equal(seen.length, asked, 'no kubelet was asked');
    // SPDY (kubectl 1.29 and older), and a request that is no upgrade at all.
    const plain = (headers: Record<string, string>) => new Promise<{ status: number; message: string }>((resolve, reject) => {
      const req = httpsRequest(`${url}/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&stdout=true`, { method: 'POST', ca, headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, message: JSON.parse(body).message }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(await plain({ connection: 'Upgrade', upgrade: 'SPDY/3.1' }), { status: 400, message: 'bosun serves pods/exec over WebSocket (kubectl 1.30 and newer; 1.29 with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true), and this client asked for SPDY/3.1' });
    assert.deepEqual(await plain({}), { status: 400, message: 'Upgrade request required' });

    // The kubelet's own refusal comes back as a Status with its words.
    assert.deepEqual(await refusal('/api/v1/namespaces/default/pods/web/exec?container=side&command=ls&stdout=1'), { status: 400, message: 'container side is not running' });
    // A completed pod is refused.
    assert.equal((await kubectl(['patch', 'pod', 'web', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Succeeded"}}'])).code, 0);
    assert.deepEqual(await refusal('/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&stdout=1'), { status: 400, message: 'cannot exec into a container in a completed pod; current phase is Succeeded' });
  } finally {
    kubelet.closeAllConnections();
    kubelet.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
