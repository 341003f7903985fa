// The metrics endpoints fuzzed on the wire (test/helpers/fuzz.ts), side by side on one API server
// as a cluster runs it: a component Manager's /metrics (HTTPS, delegated auth) and health (HTTP)
// listeners, the thanos-querier proxy in front of Debian's real Prometheus, and the metrics
// server (metrics.k8s.io). Malformed requests, broken TLS handshakes and slow clients: every
// request is answered or the connection closed, slow clients are cut off, the querier lets go of
// its connections to Prometheus, and each keeps serving an authorised caller.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { startClusterServer, type ClusterServer } from '../../src/apiserver/cluster-server.js';
import { freePort } from '../../src/common/listen.js';
import { logger } from '../../src/common/log.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { KubeClient, loadKubeConfig, Manager } from '../../src/kube/index.js';
import { MetricsApiServer } from '../../src/metrics-server/server.js';
import { kubeletRequestOptions } from '../../src/metrics-server/run.js';
import { Scraper } from '../../src/metrics-server/scraper.js';
import { QuerierProxy } from '../../src/monitoring/querier-proxy.js';
import { eventually } from '../helpers/eventually.js';
import { assertNoProblems, connectionsTo, exchange, fuzzSeed, fuzzServer, type FuzzReport, type Target } from '../helpers/fuzz.js';

const PROMETHEUS = '/usr/bin/prometheus';
const skip = !existsSync(PROMETHEUS) && process.env.CI !== 'true' ? `${PROMETHEUS} is not installed (apt-get install prometheus)` : false;

let dir: string;
let cluster: ClusterServer;
let token: string;
let manager: Manager;
let running: Promise<void>;
let prometheus: ChildProcess | undefined;
let promPort: number;
let querier: QuerierProxy;
let querierPort: number;
let metricsServer: MetricsApiServer;
const stopMetricsServer = new AbortController();

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'bosun-metrics-fuzz-'));
  cluster = await startClusterServer({ dataDir: join(dir, 'apiserver'), host: '127.0.0.1', port: 0, logLevel: 'warn' });
  token = cluster.server.token;
  const kubeconfig = loadKubeConfig(cluster.server.kubeconfigPath);
  const client = new KubeClient(kubeconfig);

  manager = new Manager({ name: 'fuzzed-component', kubeconfig, metricsListen: { host: '127.0.0.1', port: 0 }, healthListen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn' });
  running = manager.start();
  await manager.ready;

  // Prometheus as the querier's upstream, with nothing to scrape: only its HTTP API is asked.
  promPort = await freePort();
  writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 1m\n');
  prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdio: 'ignore' });
  await eventually('Prometheus ready', () => plainGet(promPort, '/-/ready').then((r) => r.status === 200, () => false), 30_000);
  const ca = await createCA('fuzz-ca');
  const serving = await issueServingCert(ca, 'localhost', ['127.0.0.1', 'localhost']);
  writeFileSync(join(dir, 'tls.crt'), serving.certPem);
  writeFileSync(join(dir, 'tls.key'), serving.keyPem);
  querierPort = await freePort();
  querier = new QuerierProxy({ client, upstream: `http://127.0.0.1:${promPort}`, listen: { host: '127.0.0.1', port: querierPort }, certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), log: () => undefined });
  await querier.start();

  const log = logger('metrics-server');
  log.level = 'warn';
  const scraper = new Scraper(client, { log, kubeletRequestOptions: kubeletRequestOptions(kubeconfig, { insecure: true }) });
  metricsServer = new MetricsApiServer(client, scraper, { host: '127.0.0.1', port: 0, tls: serving, log });
  await metricsServer.start(stopMetricsServer.signal);
});

after(async () => {
  if (skip) return;
  stopMetricsServer.abort();
  await metricsServer?.stop();
  await querier?.stop();
  if (prometheus?.pid && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus!.once('exit', r));
    process.kill(prometheus.pid, 'SIGTERM');
    await exited;
  }
  manager?.stop();
  await running?.catch(() => undefined);
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function plainGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function authorisedGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const portOf = (address: string | undefined) => Number(address!.split(':').pop());
const SLOW_TLS = ['tls-silent', 'tls-partial-hello', 'headers', 'held-after-error'] as const;

test('fuzzed requests on the Manager\'s metrics and health listeners, the thanos-querier proxy and the metrics server: answered or closed, slow clients cut off, still serving', { skip, timeout: 150_000 }, async (t) => {
  const seed = fuzzSeed();
  const auth = { Authorization: `Bearer ${token}` };
  const metricsPort = portOf(manager.metricsAddress);
  const healthPort = portOf(manager.healthAddress);
  const promTarget: Target = { host: '127.0.0.1', port: promPort };
  const reports: FuzzReport[] = await Promise.all([
    fuzzServer({
      name: 'Manager /metrics', seed, target: { host: '127.0.0.1', port: metricsPort, tls: true }, slow: [...SLOW_TLS],
      profile: { paths: ['/metrics', '/metrics?x=1', '/healthz', '/readyz?verbose', '/livez'], methods: ['GET', 'HEAD'], headers: auth },
      good: async () => {
        const r = await authorisedGet(metricsPort, '/metrics');
        assert.equal(r.status, 200, r.body);
        assert.match(r.body, /^# HELP /m);
      },
    }),
    fuzzServer({
      name: 'Manager health', seed: seed + 1, target: { host: '127.0.0.1', port: healthPort }, slow: ['silent', 'headers', 'request-line', 'held-after-error'],
      profile: { paths: ['/healthz', '/readyz', '/livez?verbose', '/metrics'], methods: ['GET', 'HEAD'] },
      good: async () => assert.equal((await plainGet(healthPort, '/readyz')).status, 200),
    }),
    fuzzServer({
      name: 'thanos-querier proxy', seed: seed + 2, target: { host: '127.0.0.1', port: querierPort, tls: true }, upstream: promTarget, slow: [...SLOW_TLS],
      profile: { paths: ['/api/v1/query?query=up', '/api/v1/query_range?query=1&start=0&end=60&step=15', '/api/v1/labels', '/api/v1/series?match[]=up', '/api/v1/rules', '/api/v1/alerts', '/federate'], methods: ['GET', 'HEAD', 'POST'], headers: auth },
      good: async () => {
        const r = await authorisedGet(querierPort, '/api/v1/query?query=1%2B1');
        assert.equal(r.status, 200, r.body);
        assert.deepEqual(JSON.parse(r.body).data.result[1], '2');
      },
    }),
    fuzzServer({
      name: 'metrics-server', seed: seed + 3, target: { host: '127.0.0.1', port: metricsServer.port, tls: true }, slow: [...SLOW_TLS],
      profile: { paths: ['/apis/metrics.k8s.io/v1beta1/nodes', '/apis/metrics.k8s.io/v1beta1/nodes/n1', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3Db', '/apis/metrics.k8s.io', '/healthz'], methods: ['GET', 'HEAD'], headers: auth },
      good: async () => {
        const r = await authorisedGet(metricsServer.port, '/apis/metrics.k8s.io/v1beta1/nodes');
        assert.equal(r.status, 200, r.body);
        assert.equal(JSON.parse(r.body).kind, 'NodeMetricsList');
      },
    }),
  ]);
  for (const report of reports) {
    t.diagnostic(report.summary);
    t.diagnostic(JSON.stringify(report.slowClosedMs));
  }
  for (const report of reports) assertNoProblems(report);
});

test('a request target no URL parser reads is a 400 from the querier and the metrics server, not a 5xx', { skip }, async () => {
  for (const port of [querierPort, metricsServer.port]) {
    for (const target of ['http://[', 'http://']) {
      const o = await exchange({ host: '127.0.0.1', port, tls: true }, { bytes: Buffer.from(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`), complete: true });
      assert.equal(o.status, 400, `${port} ${target}: ${o.kind} ${o.status} ${o.body.toString('utf8')}`);
    }
  }
});

test('a client that goes with its request half sent takes the querier\'s request to Prometheus with it', { skip }, async () => {
  const prom: Target = { host: '127.0.0.1', port: promPort };
  await eventually('no connections to Prometheus left from before', () => connectionsTo(prom) === 0, 15_000);
  const socket = tlsConnect({ host: '127.0.0.1', port: querierPort, rejectUnauthorized: false });
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  socket.write(`POST /api/v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nquery=`);
  await eventually('the querier passing the request on', () => connectionsTo(prom) > 0, 15_000);
  socket.destroy();
  await eventually('the querier closing its connection to Prometheus', () => connectionsTo(prom) === 0, 5_000);
});
