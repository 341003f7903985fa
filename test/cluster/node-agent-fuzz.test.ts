// The node agent's kubelet endpoint (logs and metrics on :10250, logs-server.ts) fuzzed on the
// wire (test/helpers/fuzz.ts): malformed requests, broken TLS handshakes and slow clients, with
// callers authenticated and authorised through a real API server. Every request is answered or
// the connection closed, slow clients are cut off, and `kubectl logs`' request keeps being served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as api from '../../src/api/index.js';
import { freePort } from '../../src/common/listen.js';
import { logger } from '../../src/common/log.js';
import { DelegatedAuth, KubeClient, loadKubeConfig } from '../../src/kube/index.js';
import { selfSignedServing } from '../../src/cluster/node-agent/certificates.js';
import { LogsServer } from '../../src/cluster/node-agent/logs-server.js';
import { NodeMetrics } from '../../src/cluster/node-agent/metrics.js';
import { startClusterServer, type ClusterServer } from '../../src/apiserver/cluster-server.js';
import { assertNoProblems, exchange, fuzzSeed, fuzzServer } from '../helpers/fuzz.js';

const NODE = 'fuzz-node';
let cluster: ClusterServer;
let token: string;
let root: string;
let server: LogsServer;
let port: number;
let pod: api.Pod;

before(async () => {
  // The API server as a cluster runs it: TokenReview and SubjectAccessReview for the kubelet's delegated auth.
  root = mkdtempSync(join(tmpdir(), 'bosun-kubelet-fuzz-'));
  cluster = await startClusterServer({ dataDir: join(root, 'apiserver'), host: '127.0.0.1', port: 0, logLevel: 'warn' });
  token = cluster.server.token;
  const client = new KubeClient(loadKubeConfig(cluster.server.kubeconfigPath));
  pod = await client.request<api.Pod>('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'logger' }, spec: { nodeName: NODE, containers: [{ name: 'c', image: 'busybox' }] } } });
  const dir = join(root, 'var/log/pods', `default_logger_${pod.metadata.uid}`, 'c');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '0.log'), Array.from({ length: 50 }, (_, i) => `2026-01-01T00:00:${String(i).padStart(2, '0')}.000000000Z stdout F line ${i}`).join('\n') + '\n');
  const delegated = new DelegatedAuth(client);
  server = new LogsServer(root, {
    pod: (namespace, name) => (namespace === 'default' && name === 'logger' ? pod : undefined),
    authorize: async (user, verb, subresource) => (await client.request<api.SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: user.name, groups: user.groups, resourceAttributes: { group: '', version: 'v1', verb, resource: 'nodes', subresource, name: NODE } } },
    })).status?.allowed === true,
    authorizeToken: (authorization, verb, subresource) => delegated.check(authorization, { resource: { verb, group: '', version: 'v1', resource: 'nodes', subresource, name: NODE } }),
    metrics: new NodeMetrics(NODE, () => []),
  }, logger('node-agent'));
  port = await freePort();
  await server.start('127.0.0.1', port, await selfSignedServing(NODE, ['127.0.0.1', NODE]));
});
after(async () => {
  await server.stop();
  await cluster.stop();
  rmSync(root, { recursive: true, force: true });
});

/** What the API server asks for `kubectl logs --tail=3`. */
function tail(): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/containerLogs/default/logger/c?tailLines=3', rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('fuzzed requests and handshakes: answered or closed, slow clients cut off, logs still served', { timeout: 120_000 }, async (t) => {
  const report = await fuzzServer({
    name: 'node agent (kubelet endpoint)', seed: fuzzSeed(),
    target: { host: '127.0.0.1', port, tls: true },
    profile: {
      paths: ['/containerLogs/default/logger/c', '/containerLogs/default/logger/c?tailLines=5&timestamps=true&limitBytes=100', '/containerLogs/default/logger/c?previous=true',
        '/containerLogs/default/nope/c', '/metrics', '/metrics/resource', '/stats/summary', '/logs/', '/pods'],
      methods: ['GET', 'HEAD'],
      headers: { Authorization: `Bearer ${token}` },
    },
    slow: ['tls-silent', 'tls-partial-hello', 'headers', 'held-after-error'],
    good: async () => {
      const r = await tail();
      assert.equal(r.status, 200, r.body);
      assert.equal(r.body, 'line 47\nline 48\nline 49\n');
    },
  });
  t.diagnostic(report.summary);
  t.diagnostic(JSON.stringify(report.slowClosedMs));
  assertNoProblems(report);
});

test('a request target no URL parser reads is a 400, not a 500', async () => {
  for (const target of ['http://[', 'http://', 'https://[::1']) {
    const o = await exchange({ host: '127.0.0.1', port, tls: true }, { bytes: Buffer.from(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`), complete: true });
    assert.equal(o.status, 400, `${target}: ${o.kind} ${o.status} ${o.body.toString('utf8')}`);
  }
});
