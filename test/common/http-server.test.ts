// The plumbing bosun's small HTTP(S) servers share: listening, the bound port, closing without
// waiting for kept-alive or unfinished clients, and JSON answers (Kubernetes Status on failure).
import { strict as assert } from 'node:assert';
import { createServer as createHttpServer, request as httpRequest, Agent as HttpAgent, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { createServer as createNetServer, connect, type Server as NetServer } from 'node:net';
import { test } from 'node:test';
import { boundPort, closeServer, failureStatus, listenOn, sendJson } from '../../src/common/http-server.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';

const listen = (server: NetServer) => listenOn(server, 0, '127.0.0.1');

/** GET / with a kept-alive agent: the status, headers and body. */
function get(server: NetServer, tls?: { ca: string }): Promise<{ status: number; type?: string; body: string }> {
  const options = { host: '127.0.0.1', port: boundPort(server), path: '/' };
  return new Promise((resolve, reject) => {
    const onAnswer = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    };
    const req = tls ? httpsRequest({ ...options, ca: tls.ca, agent: new HttpsAgent({ keepAlive: true }) }, onAnswer) : httpRequest({ ...options, agent: new HttpAgent({ keepAlive: true }) }, onAnswer);
    req.on('error', reject).end();
  });
}

test('listenOn: resolves once listening, rejects with the error when the address is taken', async () => {
  const first = createHttpServer();
  await listen(first);
  const second = createHttpServer();
  await assert.rejects(listenOn(second, boundPort(first)!, '127.0.0.1'), { code: 'EADDRINUSE' });
  assert.equal(second.listening, false);
  await closeServer(first);
});

test('boundPort: the port chosen for port 0 while listening, undefined before and after', async () => {
  const server = createHttpServer();
  assert.equal(boundPort(server), undefined);
  assert.equal(boundPort(undefined), undefined);
  await listen(server);
  const port = boundPort(server);
  assert.ok(port && port > 0, `bound to ${port}`);
  await closeServer(server);
  assert.equal(boundPort(server), undefined);
});

test('closeServer: an HTTP server closes at once with a kept-alive client and one mid-request', async () => {
  let started!: () => void;
  const requestStarted = new Promise<void>((resolve) => (started = resolve));
  const server: HttpServer = createHttpServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    if (req.url === '/hang') return started();
    sendJson(res, { code: 200, body: { ok: true } });
  });
  await listen(server);
  assert.deepEqual(await get(server), { status: 200, type: 'application/json', body: '{"ok":true}' });
  const hanging = new Promise<string>((resolve) => {
    httpRequest({ host: '127.0.0.1', port: boundPort(server), path: '/hang' }).on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message)).end();
  });
  await requestStarted;
  // Without ending the connections, the kept-alive one and the unanswered request would hold the close for a minute.
  await closeServer(server);
  assert.equal(server.listening, false);
  assert.equal(await hanging, 'ECONNRESET');
});

test('closeServer: an HTTPS server and a plain TCP server close too; one never started resolves', async () => {
  const ca = await createCA('test-ca');
  const pair = await issueServingCert(ca, 'localhost', ['127.0.0.1']);
  const https = createHttpsServer({ cert: pair.certPem, key: pair.keyPem }, (_req, res) => sendJson(res, failureStatus(404, 'NotFound', 'nothing here')));
  await listen(https);
  const answer = await get(https, { ca: ca.certPem });
  assert.equal(answer.status, 404);
  assert.deepEqual(JSON.parse(answer.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'nothing here', reason: 'NotFound', code: 404 });
  await closeServer(https);
  assert.equal(https.listening, false);

  const tcp = createNetServer((socket) => socket.end());
  await listen(tcp);
  await new Promise<void>((resolve) => connect(boundPort(tcp)!, '127.0.0.1').on('close', () => resolve()).resume());
  await closeServer(tcp);
  assert.equal(tcp.listening, false);

  await closeServer(createHttpServer());
});

test('sendJson: once an answer has begun, an error can only end it', async () => {
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial ');
    sendJson(res, failureStatus(500, 'InternalError', 'failed part-way'));
  });
  await listen(server);
  assert.deepEqual(await get(server), { status: 200, type: 'text/plain', body: 'partial ' });
  await closeServer(server);
});
