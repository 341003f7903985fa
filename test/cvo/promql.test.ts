// The CVO's PromQL rule evaluation against an HTTP(S) server the test plays: GET with the
// bearer token, only a vector of exactly one 0/1 sample is an answer (scalars, matrices, zero or
// two samples, other values are refused naming the query), HTTP and API errors say what the
// server said, a `<svc>.<ns>.svc` host is reached at the Service's clusterIP with TLS verified
// for the DNS name, and a wrong CA fails saying so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { promqlMatcher, serviceOfHost } from '../../src/cvo/updates/promql.js';
import { ConditionCache, ThrottledError } from '../../src/cvo/updates/condition-cache.js';
import { FakeClock } from '../../src/kube/clock.js';

const vector = (...values: string[]) => ({ status: 'success', data: { resultType: 'vector', result: values.map((v, i) => ({ metric: { i: String(i) }, value: [1700000000, v] })) } });
const answers: Record<string, [number, unknown]> = {
  one: [200, vector('1')],
  zero: [200, vector('0')],
  scalar: [200, { status: 'success', data: { resultType: 'scalar', result: [1700000000, '1'] } }],
  matrix: [200, { status: 'success', data: { resultType: 'matrix', result: [{ metric: {}, values: [[1700000000, '1']] }] } }],
  two: [200, vector('1', '0')],
  none: [200, vector()],
  two_valued: [200, vector('2')],
  bad: [400, { status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": 1:4: parse error' }],
  forbidden: [403, 'Forbidden (user=system:serviceaccount:x:y, verb=get, resource=prometheuses)'],
};

interface Seen {
  method?: string;
  path?: string;
  authorization?: string;
  host?: string;
}
const seen: Seen[] = [];
const handler = (req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url!, 'http://x');
  seen.push({ method: req.method, path: url.pathname, authorization: req.headers.authorization, host: req.headers.host });
  const [code, body] = answers[url.searchParams.get('query') ?? ''] ?? [400, { status: 'error', error: 'unknown query' }];
  res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
};

let plain: ReturnType<typeof createServer>;
let tls: ReturnType<typeof createHttpsServer>;
let plainPort: number;
let tlsPort: number;
let caPem: string;
let otherCaPem: string;
const SERVICE_HOST = 'thanos-querier.openshift-monitoring.svc';

before(async () => {
  const ca = await createCA('test-service-ca');
  caPem = ca.certPem;
  otherCaPem = (await createCA('another-ca')).certPem;
  const serving = await issueServingCert(ca, SERVICE_HOST, [SERVICE_HOST, `${SERVICE_HOST}.cluster.local`]);
  plain = createServer(handler);
  tls = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, handler);
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  plainPort = (plain.address() as AddressInfo).port;
  tlsPort = (tls.address() as AddressInfo).port;
});
after(() => {
  plain.close();
  tls.close();
});

test('answers: a vector of one sample valued 1 or 0; anything else is refused, naming the query', async () => {
  const match = promqlMatcher({ url: `http://127.0.0.1:${plainPort}`, token: async () => 'secret-token' });
  assert.equal(await match('one'), true);
  assert.equal(await match('zero'), false);
  const last = seen[seen.length - 1];
  assert.deepEqual([last.method, last.path, last.authorization], ['GET', '/api/v1/query', 'Bearer secret-token'], 'an instant query by GET with the token');
  await assert.rejects(match('scalar'), /invalid PromQL result for scalar: a scalar, not a vector/);
  await assert.rejects(match('matrix'), /invalid PromQL result for matrix: a matrix, not a vector/);
  await assert.rejects(match('two'), /invalid PromQL result for two: 2 samples, must be exactly one/);
  await assert.rejects(match('none'), /invalid PromQL result for none: 0 samples, must be exactly one/);
  await assert.rejects(match('two_valued'), /invalid PromQL result for two_valued: 2, must be 0 or 1/);
  await assert.rejects(match('bad'), /answered HTTP 400 Bad Request to bad: invalid parameter "query": 1:4: parse error/);
  await assert.rejects(match('forbidden'), /answered HTTP 403 Forbidden to forbidden: Forbidden \(user=system:serviceaccount/);
  await assert.rejects(promqlMatcher({ url: 'http://127.0.0.1:9' })('one'), /could not query the PromQL service http:\/\/127\.0\.0\.1:9: .*ECONNREFUSED/);
  // A multi-line query is shown on one line.
  await assert.rejects(match('sum(\n  x\n)'), /to sum\( x \): unknown query/);
});

test('a <service>.<namespace>.svc host is reached at the clusterIP, TLS verified for the DNS name', async () => {
  assert.deepEqual(serviceOfHost(SERVICE_HOST), { namespace: 'openshift-monitoring', name: 'thanos-querier' });
  assert.deepEqual(serviceOfHost(`${SERVICE_HOST}.cluster.local`), { namespace: 'openshift-monitoring', name: 'thanos-querier' });
  assert.equal(serviceOfHost('prometheus.example.com'), undefined);
  const lookups: string[] = [];
  const target = (ca: string | undefined, ip: string | undefined = '127.0.0.1') => ({
    url: `https://${SERVICE_HOST}:${tlsPort}`,
    ca: async () => ca,
    token: async () => 'cvo-token',
    serviceIP: async (namespace: string, name: string) => (lookups.push(`${namespace}/${name}`), ip),
  });
  assert.equal(await promqlMatcher(target(caPem))('one'), true);
  assert.deepEqual(lookups, ['openshift-monitoring/thanos-querier']);
  const last = seen[seen.length - 1];
  assert.equal(last.host, `${SERVICE_HOST}:${tlsPort}`, 'the Host header names the service, not the IP');
  assert.equal(last.authorization, 'Bearer cvo-token');
  await assert.rejects(promqlMatcher(target(otherCaPem))('one'), (e: Error) => {
    assert.match(e.message, new RegExp(`could not query the PromQL service https://${SERVICE_HOST.replace(/\./g, '\\.')}:${tlsPort} \\(127\\.0\\.0\\.1\\): .*\\(the server certificate is not signed by the configured CA bundle\\)`));
    return true;
  });
  await assert.rejects(promqlMatcher(target(undefined))('one'), /not signed by the configured CA bundle; no CA bundle was configured/);
  await assert.rejects(promqlMatcher(target(caPem, ''))('one'), /Service openshift-monitoring\/thanos-querier \(thanos-querier\.openshift-monitoring\.svc:\d+\) does not exist or has no clusterIP/);
  await assert.rejects(promqlMatcher(target(caPem, 'None'))('one'), /is headless/);
  await assert.rejects(promqlMatcher({ ...target(caPem), ca: async () => { throw new Error('no service CA to verify the PromQL service with'); } })('one'), /no service CA/);
  // An IP address that the certificate does not name.
  await assert.rejects(promqlMatcher({ url: `https://127.0.0.1:${tlsPort}`, ca: async () => caPem })('one'), /not valid for the host name/);
});

test('a URL that is neither http nor https is refused at once', () => {
  assert.throws(() => promqlMatcher({ url: 'ftp://x' }), /neither http nor https/);
});

test('through the cache, the server sees at most one query a second and each rule at most hourly', async () => {
  const clock = new FakeClock();
  const match = promqlMatcher({ url: `http://127.0.0.1:${plainPort}` });
  const cache = new ConditionCache((rule) => match(rule.promql!.promql), clock);
  const one = { type: 'PromQL', promql: { promql: 'one' } };
  const zero = { type: 'PromQL', promql: { promql: 'zero' } };
  const before = seen.length;
  assert.equal(await cache.match(one), true);
  await assert.rejects(cache.match(zero), ThrottledError);
  assert.equal(await cache.match(one), true);
  assert.equal(seen.length - before, 1, 'one query in the first second');
  clock.advance(1001);
  assert.equal(await cache.match(zero), false);
  assert.equal(await cache.match(one), true);
  assert.equal(seen.length - before, 2, 'the waiting rule got the next second');
  clock.advance(30 * 60_000);
  assert.equal(await cache.match(one), true);
  assert.equal(await cache.match(zero), false);
  assert.equal(seen.length - before, 2, 'nothing asked again within the hour');
  clock.advance(31 * 60_000);
  await cache.match(one);
  assert.equal(seen.length - before, 3, 'asked again after the hour');
});
