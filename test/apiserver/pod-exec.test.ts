// `pods/exec` and `pods/portforward` through the API server: a WebSocket or SPDY upgrade proxied to
// the kubelet of the pod's node as the API server's kubelet-client certificate, the bytes carried
// both ways untouched; the refusals before any kubelet is asked (no upgrade, no command, a
// completed pod, attach), and a kubelet's own refusal passed back as a Status. A small HTTPS
// server in the test plays the kubelet on a 127.x address (the ws library's server for WebSockets;
// for SPDY it echoes the bytes after its 101). The real node agent's endpoints are tested in
// test/cluster/node-agent-pods.test.ts with the real kubectl, and its SPDY in spdy.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { startClusterServer } from '../../src/apiserver/cluster-server.js';
import { issueServingCert } from '../../src/common/pki.js';
import { runKubectl } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

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
  const seen: { path: string; client: string; protocols?: string[] }[] = [];
  const kubelet = createServer({ key: serving.keyPem, cert: serving.certPem, ca, requestCert: true, rejectUnauthorized: false }, (_req, res) => res.writeHead(404).end('not here'));
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
  kubelet.on('upgrade', (req: IncomingMessage, socket, head) => {
    const tls = req.socket as TLSSocket;
    const protocols: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'x-stream-protocol-version') protocols.push(req.rawHeaders[i + 1]);
    seen.push({ path: req.url ?? '', client: tls.authorized ? String(tls.getPeerCertificate().subject?.CN ?? '') : '', protocols });
    if (req.headers.upgrade === 'SPDY/3.1') {
      // SPDY: the 101 naming the protocol chosen, then every byte echoed.
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocols[0]}\r\n\r\n`);
      socket.pipe(socket);
      return;
    }
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
    // The audit log records the switch of protocols (kube-apiserver's 101).
    const audited = await eventually('the exec audited', () => {
      const lines = existsSync(join(dir, 'audit.log')) ? readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter((l) => l.includes('"resource":"pods/exec"')) : [];
      return lines.length > 0 && lines.map((l) => JSON.parse(l));
    });
    assert.deepEqual(audited.map((a) => [a.verb, a.code, a.name]), [['get', 101, 'web']]);

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
    assert.equal((await refusal('/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&stdout=1', { authorization: 'Bearer wrong' })).status, 401);
    assert.equal(seen.length, asked, 'no kubelet was asked');
    // SPDY (kubectl 1.29 and older's exec, every kubectl's port-forward): the 101 and the bytes after it carried through.
    const spdy = (path: string) => new Promise<string>((resolve, reject) => {
      const { hostname: host, port: apiPort } = new URL(url);
      const socket = tlsConnect({ host, port: Number(apiPort), ca, servername: host }, () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nX-Stream-Protocol-Version: v3.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`);
      });
      let got = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => {
        got += d;
        if (got.endsWith('\r\n\r\n')) socket.write('ping over spdy');
        if (got.endsWith('ping over spdy')) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on('error', reject);
    });
    const spdyExec = await spdy('/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&stdout=true');
    assert.match(spdyExec, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(spdyExec, /\r\nX-Stream-Protocol-Version: v4\.channel\.k8s\.io\r\n/, 'the kubelet\'s choice reaches the client');
    assert.ok(spdyExec.endsWith('\r\n\r\nping over spdy'), 'the bytes after the 101 are carried both ways');
    assert.deepEqual(seen.at(-1)!.protocols, ['v4.channel.k8s.io', 'v3.channel.k8s.io'], 'each offered protocol passed on as its own header');
    assert.equal(seen.at(-1)!.path, '/exec/default/web/app?command=ls&stdout=true');
    await spdy('/api/v1/namespaces/default/pods/web/portforward');
    assert.equal(seen.at(-1)!.path, '/portForward/default/web');
    // A request that is no upgrade at all.
    const plain = (headers: Record<string, string>) => new Promise<{ status: number; message: string }>((resolve, reject) => {
      const req = httpsRequest(`${url}/api/v1/namespaces/default/pods/web/exec?container=app&command=ls&stdout=true`, { method: 'POST', ca, headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, message: JSON.parse(body).message }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(await plain({}), { status: 400, message: 'Upgrade request required' });
    assert.deepEqual(await plain({ connection: 'Upgrade', upgrade: 'h2c' }), { status: 400, message: 'pods/exec is served over a WebSocket or SPDY/3.1, not h2c' });

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
