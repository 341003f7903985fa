// KubeClient's retry of answers that carry Retry-After (429, or 5xx such as an API server that is
// shutting down), as client-go does: the request is sent again after the wait, a write with its
// body, at most MAX_RETRY_AFTER times; answers without the header fail at once. A GET whose
// connection is cut before an answer is sent again after a second (client-go's retry of GETs on a
// connection reset); a write is not. The server here injects those answers and cuts (fault
// injection), on a loopback port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { KubeApiError, KubeClient, MAX_RETRY_AFTER } from '../../src/kube/client.js';

const namespaces = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };

/**
 * A plain-HTTP server answering each request with the next of `answers` (the last one repeats);
 * code 0 cuts the connection instead of answering. Records what it got.
 */
async function faultyServer(answers: { code: number; headers?: Record<string, string> }[]) {
  const seen: { method: string; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', body });
      const a = answers[Math.min(seen.length - 1, answers.length - 1)];
      if (a.code === 0) return void req.socket.destroy();
      const status = a.code < 300
        ? { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'n1' } }
        : { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: a.code, reason: a.code === 429 ? 'TooManyRequests' : 'ServiceUnavailable', message: `answer ${seen.length}` };
      res.writeHead(a.code, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(status));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(join(tmpdir(), 'bosun-client-retry-'));
  const file = join(dir, 'kubeconfig');
  const server_ = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  writeFileSync(file, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: server_ } }], users: [{ name: 'c', user: { token: 't' } }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'c' } }],
  }));
  return {
    seen,
    client: new KubeClient(loadKubeConfig(file)),
    close: () => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a 503 or 429 with Retry-After is sent again after the wait, a write with its body', async () => {
  const s = await faultyServer([{ code: 503, headers: { 'retry-after': '0' } }, { code: 429, headers: { 'retry-after': '1' } }, { code: 201 }]);
  try {
    const started = Date.now();
    const created = await s.client.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1' } });
    assert.equal(created.metadata?.name, 'n1');
    assert.equal(s.seen.length, 3);
    assert.ok(s.seen.every((r) => r.method === 'POST' && JSON.parse(r.body).metadata.name === 'n1'), 'every attempt carried the body');
    assert.ok(Date.now() - started >= 900, 'the second retry waited the second the answer asked for');
  } finally {
    s.close();
  }
});

test('answers without Retry-After, and 4xx other than 429 with it, fail at once', async () => {
  for (const answer of [{ code: 503 }, { code: 500 }, { code: 409, headers: { 'retry-after': '0' } }]) {
    const s = await faultyServer([answer, { code: 200 }]);
    try {
      await assert.rejects(s.client.get(namespaces, 'n1'), (e) => e instanceof KubeApiError && e.code === answer.code);
      assert.equal(s.seen.length, 1, `HTTP ${answer.code}${answer.headers ? ' with Retry-After' : ''} is not retried`);
    } finally {
      s.close();
    }
  }
});

test(`the retries stop after ${MAX_RETRY_AFTER}, with the last answer's error`, async () => {
  const s = await faultyServer([{ code: 503, headers: { 'retry-after': '0' } }]);
  try {
    await assert.rejects(s.client.get(namespaces, 'n1'), (e) => e instanceof KubeApiError && e.code === 503 && /answer 11/.test(e.message));
    assert.equal(s.seen.length, MAX_RETRY_AFTER + 1);
  } finally {
    s.close();
  }
});

test('an aborted request stops waiting for its retry', async () => {
  const s = await faultyServer([{ code: 503, headers: { 'retry-after': '30' } }]);
  try {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const started = Date.now();
    await assert.rejects(s.client.request('GET', '/api/v1/namespaces/n1', { signal: abort.signal }));
    assert.ok(Date.now() - started < 10_000, 'did not wait out the 30 s');
    assert.equal(s.seen.length, 1);
  } finally {
    s.close();
  }
});

test('a GET whose connection is cut before an answer is sent again after a second; a write is not', async () => {
  const s = await faultyServer([{ code: 0 }, { code: 0 }, { code: 200 }]);
  try {
    const started = Date.now();
    const got = await s.client.get(namespaces, 'n1');
    assert.equal(got.metadata?.name, 'n1');
    assert.equal(s.seen.length, 3, 'two cut connections, then the answer');
    assert.deepEqual(s.client.retried, { retryAfter: 0, connectionReset: 2 });
    assert.ok(Date.now() - started >= 1800, 'each retry waited a second');
  } finally {
    s.close();
  }
  const w = await faultyServer([{ code: 0 }, { code: 201 }]);
  try {
    await assert.rejects(w.client.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1' } }), (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET');
    assert.equal(w.seen.length, 1, 'a create is not sent twice: it may have been carried out');
    assert.equal(w.client.retried.connectionReset, 0);
  } finally {
    w.close();
  }
});

test('a GET cut every time stops retrying when it is aborted', async () => {
  const s = await faultyServer([{ code: 0 }]);
  try {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 2500);
    await assert.rejects(s.client.request('GET', '/api/v1/namespaces/n1', { signal: abort.signal }), (e: Error) => e.name === 'AbortError');
    assert.ok(s.seen.length >= 2 && s.seen.length <= 4, `asked ${s.seen.length} times in 2.5 s, a second apart`);
  } finally {
    s.close();
  }
});
