// The API server fuzzed on the wire (test/helpers/fuzz.ts), below what fuzz.test.ts sends through
// an HTTP client: request lines, headers and framings no client would write, bodies of the wrong
// shape for the kinds it serves, broken TLS handshakes and slow clients. Every request is answered
// with a Kubernetes Status (or the connection closed), slow clients are cut off within the bounds
// of common/http-limits.ts, and kubectl's requests keep being served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { assertNoProblems, exchange, fuzzSeed, fuzzServer, slowClient } from '../helpers/fuzz.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';

test('fuzzed requests and handshakes: a Status or a closed connection, slow clients cut off, kubectl still served', { timeout: 150_000 }, async (t) => {
  const report = await fuzzServer({
    name: 'apiserver', seed: fuzzSeed(),
    target: { host: '127.0.0.1', port: api.port, tls: true },
    profile: {
      paths: [CM, `${CM}/fz`, `${CM}?watch=1&timeoutSeconds=1`, '/api/v1/namespaces/default/pods', '/apis/apps/v1/namespaces/default/deployments/fz',
        '/api/v1/namespaces', '/api', '/apis', '/version', '/healthz', '/openapi/v2', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      headers: { Authorization: `Bearer ${api.token}` },
      bodies: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fz', labels: { a: 'b' } }, data: { k: 'v' } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'fz' }, spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80 }] }] } },
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'fz' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } },
      ],
      bodyLimit: 3 * 1024 * 1024,
    },
    slow: ['tls-silent', 'tls-partial-hello', 'headers', 'body', 'held-after-error'],
    good: async () => {
      const r = await api.request('GET', '/api/v1/namespaces/default');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.name, 'default');
    },
    judge: (c, o) => {
      if (o.status === undefined || o.status < 400 || c.head) return undefined;
      let status: { kind?: string; code?: number; reason?: string; message?: string };
      try {
        status = JSON.parse(o.body.toString('utf8'));
      } catch {
        return `a ${o.status} whose body is not JSON: ${o.body.toString('utf8').slice(0, 200)}`;
      }
      const ok = o.headers['content-type'] === 'application/json' && status.kind === 'Status' && status.code === o.status && typeof status.reason === 'string' && typeof status.message === 'string';
      return ok ? undefined : `a ${o.status} that is not a Status: ${o.body.toString('utf8').slice(0, 200)}`;
    },
  });
  t.diagnostic(report.summary);
  t.diagnostic(JSON.stringify(report.slowClosedMs));
  assertNoProblems(report);
  assert.ok((await api.kubectlOk(['get', 'namespaces'])).includes('default'), 'kubectl still works');
});

test('what Node refuses before the handlers is a Status too, and a refused client cannot hold its socket', async () => {
  const target = { host: '127.0.0.1', port: api.port, tls: true };
  const auth = `Authorization: Bearer ${api.token}\r\n`;
  const cases: [string, number, string][] = [
    [`GET /api HTTP/1.1\r\n${auth}\r\n`, 400, 'missing required Host header'],
    [`GET /api HTTP/1.1\r\nHost: x\r\n${auth}Expect: bogus\r\n\r\n`, 417, 'expectation'],
    [`GET /api HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'larger than the server accepts'],
    [`GET /api HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`, 400, 'could not be parsed'],
  ];
  for (const [request, code, message] of cases) {
    const o = await exchange(target, { bytes: Buffer.from(request), complete: true });
    assert.equal(o.status, code, `${request.slice(0, 60)}: ${o.kind} ${o.status}`);
    const status = JSON.parse(o.body.toString('utf8'));
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, code);
    assert.ok(status.message.includes(message), status.message);
  }
  const held = await slowClient(target, 'held-after-error', `127.0.0.1:${api.port}`);
  await eventually('the server letting go of a refused client that keeps its side open', () => held.closedAfterMs !== undefined, 10_000);
  held.stop();
});
