// Fetching the graph from an upstream: each way it can go wrong maps to its RetrievedUpdates reason.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchUpdateGraph, RetrievalError } from '../../src/cvo/updates/upstream.js';

let server: Server;
let base: string;
const answers: Record<string, [number, string]> = {
  '/good': [200, JSON.stringify({ version: 1, nodes: [{ version: '1.0.0', payload: 'p', metadata: {} }], edges: [], conditionalEdges: [] })],
  '/garbage': [200, '<html>oops</html>'],
  '/wrong-shape': [200, JSON.stringify({ nodes: 'none' })],
  '/error': [500, JSON.stringify({ kind: 'internal_error', value: 'boom' })],
};

before(async () => {
  server = createServer((req, res) => {
    const [status, body] = answers[req.url!.split('?')[0]] ?? [404, '{}'];
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const reasonOf = async (upstream: string): Promise<string> => {
  try {
    await fetchUpdateGraph({ upstream, channel: 'stable-1.0' }, { timeoutMs: 2000 });
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof RetrievalError, String(err));
    assert.ok(err.message.length > 10);
    return err.reason;
  }
};

test('upstream: good, garbage, wrong shape, server error and unreachable', async () => {
  assert.equal(await reasonOf(`${base}/good`), 'ok');
  assert.equal(await reasonOf(`${base}/garbage`), 'ResponseInvalid');
  assert.equal(await reasonOf(`${base}/wrong-shape`), 'ResponseInvalid');
  assert.equal(await reasonOf(`${base}/error`), 'ResponseFailed');
  assert.equal(await reasonOf('http://127.0.0.1:1/graph'), 'RemoteFailed');
});
