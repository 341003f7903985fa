// The machine-config server fuzzed on the wire (test/helpers/fuzz.ts): malformed requests on both
// listeners, broken TLS handshakes on 22623's, slow clients on each. Every request is answered or
// the connection closed, slow clients are cut off, and booting machines keep getting their config.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoProblems, fuzzSeed, fuzzServer, type FuzzReport } from '../helpers/fuzz.js';
import { get, startFixture, type Fixture } from './mcs-fixture.js';

let f: Fixture;
before(async () => {
  f = await startFixture();
});
after(async () => {
  await f.close();
});

const profile = {
  paths: ['/config/worker', '/config/master', '/healthz', '/config/worker?x=1', '/etc/kubernetes/kubeconfig'],
  methods: ['GET', 'HEAD'],
};

async function good(listener: 'tls' | 'http'): Promise<void> {
  const r = await get(f, listener, '/config/worker', { accept: 'application/vnd.coreos.ignition+json;version=3.2.0' });
  assert.equal(r.status, 200, r.body);
  assert.equal(JSON.parse(r.body).ignition.version, '3.2.0');
}

test('fuzzed requests on both listeners: answered or closed, slow clients cut off, configs still served', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed();
  const reports: FuzzReport[] = await Promise.all((['tls', 'http'] as const).map((listener, i) => fuzzServer({
    name: `machine-config-server (${listener})`, seed: seed + i, profile,
    target: { host: '127.0.0.1', port: f.server.port(listener)!, tls: listener === 'tls' },
    slow: listener === 'tls' ? ['tls-silent', 'tls-partial-hello', 'headers', 'held-after-error'] : ['silent', 'headers', 'request-line', 'held-after-error'],
    good: () => good(listener),
  })));
  for (const report of reports) {
    t.diagnostic(report.summary);
    t.diagnostic(JSON.stringify(report.slowClosedMs));
  }
  for (const report of reports) assertNoProblems(report);
});
