// The local cloud's API fuzzed on the wire (test/helpers/fuzz.ts): malformed requests, bodies of
// the wrong shape for instances, balancers and routes, and slow clients. Every request is answered
// (`{"error":{code,message}}` for its errors) or the connection closed, slow clients are cut off,
// and the API keeps serving. Every body carries a field the API does not know, so that nothing is
// ever created: a balancer would listen on the shared 127.0.200.0/24 addresses.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoProblems, fuzzSeed, fuzzServer } from '../helpers/fuzz.js';
import { startCloud, type CloudFixture } from './cloud-fixture.js';

let f: CloudFixture;
before(async () => {
  f = await startCloud();
});
after(async () => {
  await f.close();
});

const NEVER_VALID = { 'x-fuzz': 'an unknown field: the request is refused whatever else it holds' };

test('fuzzed requests: answered or closed, slow clients cut off, the API still serving', { timeout: 120_000 }, async (t) => {
  const url = new URL(f.service.url);
  const report = await fuzzServer({
    name: 'cloud API', seed: fuzzSeed(),
    target: { host: url.hostname, port: Number(url.port) },
    profile: {
      paths: ['/v1/instances', '/v1/instances?state=running,pending&name=a', '/v1/instances/i-0123456789abcdef', '/v1/instances/i-0123456789abcdef/stop',
        '/v1/loadbalancers', '/v1/loadbalancers/fz', '/v1/routes', '/v1/routes/fz', '/v1/zones', '/v1/instance-types', '/healthz'],
      methods: ['GET', 'POST', 'PUT', 'DELETE'],
      bodies: [
        { name: 'fz', type: 'small', zone: 'local-a', userData: '{"ignition":{"version":"3.2.0"}}', ...NEVER_VALID },
        { name: 'fz', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 30080, targets: ['i-1'] }], targets: ['i-1'], sourceRanges: ['0.0.0.0/0'], internal: false, healthCheck: { port: 30081, path: '/healthz' }, ...NEVER_VALID },
        { name: 'fz', destinationCidr: '127.1.9.0/24', targetInstance: 'i-1', ...NEVER_VALID },
      ],
      bodyLimit: 256 * 1024,
    },
    slow: ['silent', 'headers', 'request-line', 'body', 'held-after-error'],
    good: async () => {
      assert.deepEqual(await f.client.listInstances(), []);
      assert.deepEqual(await f.client.listLoadBalancers(), []);
    },
    judge: (_c, o) => {
      if (o.status === undefined || o.status < 400 || o.body.length === 0) return undefined;
      try {
        const e = (JSON.parse(o.body.toString('utf8')) as { error?: { code?: unknown; message?: unknown } }).error;
        return typeof e?.code === 'string' && typeof e.message === 'string' ? undefined : `a ${o.status} that is not {"error":{code,message}}: ${o.body.toString('utf8').slice(0, 200)}`;
      } catch {
        return `a ${o.status} whose body is not JSON: ${o.body.toString('utf8').slice(0, 200)}`;
      }
    },
  });
  t.diagnostic(report.summary);
  t.diagnostic(JSON.stringify(report.slowClosedMs));
  assertNoProblems(report);
});
