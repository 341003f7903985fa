// The local cloud's load balancer listeners, on each engine (haproxy.ts, load-balancer-proxy.ts), fuzzed on the wire
// (test/helpers/fuzz.ts), with the machine-config server's plain HTTP listener as the target
// behind them: malformed requests, abrupt closes and slow clients pass through a TCP proxy, which
// must carry the target's answer or close, let go of both sides of every connection once either
// is done with it, and keep carrying good clients' requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/listen.js';
import { logger } from '../../src/common/log.js';
import { loadBalancerEngine, type LoadBalancerEngine } from '../../src/cloud/load-balancer-engine.js';
import type { LoadBalancer } from '../../src/cloud/types.js';
import { eventually } from '../helpers/eventually.js';
import { assertNoProblems, connectionsTo, fuzzSeed, fuzzServer, type Target } from '../helpers/fuzz.js';
import { skipWithoutHaproxy } from '../helpers/haproxy.js';
import { startFixture, type Fixture } from '../mco/mcs-fixture.js';

for (const engine of ['haproxy', 'node'] as const) {
  describe(`the ${engine} engine`, { skip: engine === 'haproxy' ? skipWithoutHaproxy : false }, () => {
    let backend: Fixture;
    let proxies: LoadBalancerEngine;
    let lb: Target;
    let target: Target;
    let dir: string;

    before(async () => {
      backend = await startFixture();
      target = { host: '127.0.0.1', port: backend.server.port('http')! };
      lb = { host: '127.0.0.1', port: await freePort() };
      dir = mkdtempSync(join(tmpdir(), 'bosun-lb-fuzz-'));
      proxies = loadBalancerEngine({ engine, dir: join(dir, 'haproxy'), resolve: () => undefined, log: logger('lb-fuzz') });
      assert.equal(proxies.name, engine);
      const now = new Date().toISOString();
      const balancer: LoadBalancer = { name: 'fuzz', address: lb.host, ports: [{ protocol: 'TCP', port: lb.port, targetPort: target.port }], targets: [target.host], sourceRanges: [], createdAt: now, updatedAt: now };
      await proxies.sync([balancer]);
      assert.deepEqual(proxies.listening(), [`${lb.host}:${lb.port}`]);
    });
    after(async () => {
      await proxies.closeAll();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const healthz = (): Promise<{ status: number; body: string }> => new Promise((resolve, reject) => {
      const req = httpRequest({ host: lb.host, port: lb.port, path: '/healthz', agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

    test('fuzzed requests through a balancer: carried or closed, both sides let go, slow clients cut off, good clients served', { timeout: 120_000 }, async (t) => {
      const report = await fuzzServer({
        name: `load balancer listener (${engine})`, seed: fuzzSeed(), target: lb, upstream: target,
        profile: { paths: ['/config/worker', '/healthz', '/config/master'], methods: ['GET', 'HEAD'] },
        slow: ['silent', 'headers', 'request-line', 'held-after-error'],
        good: async () => {
          const r = await healthz();
          assert.equal(r.status, 200);
          assert.equal(r.body, 'ok\n');
        },
      });
      t.diagnostic(report.summary);
      t.diagnostic(JSON.stringify(report.slowClosedMs));
      assertNoProblems(report);
    });

    test('a client that resets while the balancer connects to the target leaves no connection to the target behind', async () => {
      await eventually('no connections to the target left from before', () => connectionsTo(target) === 0, 15_000);
      for (let i = 0; i < 50; i++) {
        const socket = connect({ host: lb.host, port: lb.port });
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.resetAndDestroy();
      }
      await eventually('the balancer closing every connection to the target', () => connectionsTo(target) === 0, 5_000);
      assert.equal((await healthz()).status, 200);
    });
  });
}
