// Conditional-update risks from OpenShift's graph data, evaluated by the CVO's code against a
// real Prometheus (Debian's /usr/bin/prometheus) that scrapes the metrics the CVO process
// exports — cluster_infrastructure_provider from Infrastructure/cluster on a real API server,
// through informers. Prometheus serves TLS (--web.config.file); in front of it a stand-in for
// thanos-querier's kube-rbac-proxy (HTTPS with a service-CA certificate for
// thanos-querier.openshift-monitoring.svc, a bearer token required) listens on the clusterIP of
// the Service openshift-monitoring/thanos-querier, which the CVO finds through the API.
//   NMStateServiceFailure (None or BareMetal clusters) applies to a platform-None cluster:
//     Recommended=False with its reason and message; AWSCustomDomainNodesNotReady does not:
//     Recommended=True, NotExposedToRisks; the other way round once the platform is AWS;
//   a wrong CA and a wrong token are Recommended=Unknown, EvaluationFailed, saying why;
//   Prometheus's own scalars, two-sample and non-0/1 answers are refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type * as api from '../../src/api/index.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { realClock } from '../../src/kube/clock.js';
import { KubeClient } from '../../src/kube/client.js';
import { InformerFactory } from '../../src/kube/informer.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';
import { UpdatePoller } from '../../src/cvo/available-updates.js';
import { createClusterConfigMetrics } from '../../src/cvo/cluster-config-metrics.js';
import { createCvoMetrics } from '../../src/cvo/metrics.js';
import { clusterPromQLCache, type PromQLSettings } from '../../src/cvo/promql-target.js';
import { promqlMatcher } from '../../src/cvo/updates/promql.js';
import { evaluateConditionalUpdate } from '../../src/cvo/updates/risks.js';
import { parseBlockedEdge } from '../../src/update-service/graph-data.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/cluster-objects.js';

const PROMETHEUS = '/usr/bin/prometheus';
/** Skipped without Prometheus outside CI; under CI a missing Prometheus fails. */
const skip = !existsSync(PROMETHEUS) && !process.env.CI ? 'prometheus not installed (apt-get install prometheus)' : false;

const root = fileURLToPath(new URL('../../', import.meta.url));
const blockedEdge = (file: string) => {
  const risk = parseBlockedEdge(readFileSync(join(root, 'test/fixtures/cincinnati-graph-data/blocked-edges', file), 'utf8'), file).risk;
  assert.ok(risk, `${file} is a conditional risk`);
  return risk;
};
/** Applies to platform None and BareMetal. */
const NMSTATE = blockedEdge('4.16.46-NMStateServiceFailure.yaml');
/** Applies to AWS. */
const AWS = blockedEdge('4.14.1-AWSCustomDomainNodesNotReady.yaml');

const SERVICE_HOST = 'thanos-querier.openshift-monitoring.svc';
const CLUSTER_IP = '127.77.0.9';
const IMAGE = (v: string) => `quay.io/openshift-release-dev/ocp-release@sha256:${v.replace(/\D/g, '').padEnd(64, '0')}`;

let apiServer: TestApiServer;
let client: KubeClient;
let informers: InformerFactory;
const informersStop = new AbortController();
let work: string;
let prometheus: ChildProcess | undefined;
let prometheusLog = '';
let prometheusPort: number;
let caPem: string;
let caFile: string;
let otherCaFile: string;
let querierPort: number;
const servers: Server[] = [];
/** What the thanos-querier stand-in was asked: method and Authorization header. */
const querierSeen: { method?: string; authorization?: string }[] = [];
/** The ClusterVersion whose status the poller writes; the CVO's metrics export it. */
let cvStatus: Partial<api.ClusterVersionStatus> = {};
let graphPort: number;

const listen = async (server: Server, host: string, port = 0) => {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
};

/** A query straight to Prometheus (TLS verified with the CA), for the test's own waits. */
function queryPrometheus(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: prometheusPort, path: `/api/v1/query?query=${encodeURIComponent(promql)}`, ca: caPem, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        try {
          const body = JSON.parse(text);
          if (body.status !== 'success') reject(new Error(`${promql}: ${text}`));
          else resolve(body.data.result);
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'bosun-prometheus-risks-'));
  // The cluster: an API server whose service network holds the thanos-querier Service's clusterIP.
  apiServer = await startTestApiServer({ serviceClusterIPRange: '127.77.0.0/16' });
  client = new KubeClient(loadKubeConfig(apiServer.kubeconfigPath));
  for (const file of ['0000_10_config-operator_01_infrastructures.crd.yaml', '0000_10_config-operator_01_featuregates.crd.yaml', '0000_03_config-operator_01_proxies.crd.yaml']) {
    for (const doc of parseAllDocuments(readFileSync(join(root, 'release-payload/manifests', file), 'utf8'))) await client.create(resources.customResourceDefinitions, doc.toJS());
  }
  // Infrastructure/cluster as the installer writes it for a cluster without machines: platform None.
  await eventually('Infrastructure/cluster created', () =>
    client.create(resources.infrastructures, { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'None' } } }).then(() => true),
  );
  await client.mergePatch(resources.infrastructures, 'cluster', undefined, { status: { infrastructureName: 'bosun-local', platform: 'None', platformStatus: { type: 'None' }, controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'HighlyAvailable' } }, 'status');
  await eventually('FeatureGate/cluster created', () => client.create(resources.featureGates, { apiVersion: 'config.openshift.io/v1', kind: 'FeatureGate', metadata: { name: 'cluster' }, spec: {} }).then(() => true));
  await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openshift-monitoring' } });

  // The CVO process's metrics, from informers on that API server.
  informers = new InformerFactory(client);
  const infrastructure = informers.forResource(resources.infrastructures);
  const featureGate = informers.forResource(resources.featureGates);
  const proxy = informers.forResource(resources.proxies);
  informers.start(informersStop.signal);
  const config = createClusterConfigMetrics({ infrastructure: () => infrastructure.get('cluster'), featureGate: () => featureGate.get('cluster'), proxy: () => proxy.get('cluster') });
  const cvo = createCvoMetrics({
    clusterVersion: () => ({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: 'c' }, status: cvStatus }) as unknown as api.ClusterVersion,
    clusterOperators: () => [],
    lastPayloadApplied: () => undefined,
  });
  const exporter = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': config.contentType }).end((await config.metrics()) + (await cvo.registry.metrics()));
  });
  const exporterPort = await listen(exporter, '127.0.0.1');

  // The service CA, Prometheus's serving certificate, and the querier's.
  const ca = await createCA('openshift-service-serving-signer');
  caPem = ca.certPem;
  caFile = join(work, 'service-ca.crt');
  writeFileSync(caFile, caPem);
  otherCaFile = join(work, 'other-ca.crt');
  writeFileSync(otherCaFile, (await createCA('not-the-service-ca')).certPem);
  const promServing = await issueServingCert(ca, 'prometheus-k8s', ['127.0.0.1']);
  writeFileSync(join(work, 'tls.crt'), promServing.certPem);
  writeFileSync(join(work, 'tls.key'), promServing.keyPem);
  writeFileSync(join(work, 'web.yml'), `tls_server_config:\n  cert_file: ${join(work, 'tls.crt')}\n  key_file: ${join(work, 'tls.key')}\n`);
  writeFileSync(
    join(work, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n- job_name: cluster-version-operator\n  static_configs:\n  - targets: ['127.0.0.1:${exporterPort}']\n`,
  );
  prometheusPort = await freePort();
  prometheus = spawn(
    PROMETHEUS,
    [`--config.file=${join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${join(work, 'data')}`, `--web.listen-address=127.0.0.1:${prometheusPort}`, `--web.config.file=${join(work, 'web.yml')}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout!.on('data', (c) => (prometheusLog += c));
  prometheus.stderr!.on('data', (c) => (prometheusLog += c));
  const exited = new Promise<never>((_, reject) => {
    prometheus!.once('exit', (code) => reject(new Error(`prometheus exited with ${code}:\n${prometheusLog}`)));
    prometheus!.once('error', (e) => reject(new Error(`could not start ${PROMETHEUS}: ${e.message}`)));
  });
  exited.catch(() => undefined);
  await Promise.race([
    exited,
    eventually('Prometheus to scrape cluster_infrastructure_provider', async () => (await queryPrometheus('cluster_infrastructure_provider{type="None"}')).length === 1, { timeoutMs: 60_000, intervalMs: 250, detail: () => prometheusLog }),
  ]);

  // thanos-querier: kube-rbac-proxy's part played here (a token required, GET only), Prometheus behind it.
  const querierServing = await issueServingCert(ca, SERVICE_HOST, [SERVICE_HOST, `${SERVICE_HOST}.cluster.local`]);
  const querier = createHttpsServer({ cert: querierServing.certPem, key: querierServing.keyPem }, (req, res) => {
    querierSeen.push({ method: req.method, authorization: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${apiServer.token}`) return void res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized');
    if (req.method !== 'GET') return void res.writeHead(403, { 'content-type': 'text/plain' }).end(`Forbidden (verb=create)`);
    const upstream = httpsRequest({ host: '127.0.0.1', port: prometheusPort, path: req.url, ca: caPem }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (e) => res.writeHead(502).end(e.message));
    upstream.end();
  });
  querierPort = await listen(querier, CLUSTER_IP);
  await client.create(resources.services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'thanos-querier', namespace: 'openshift-monitoring' },
    spec: { clusterIP: CLUSTER_IP, ports: [{ name: 'web', port: 9091, targetPort: 9091 }], selector: { app: 'thanos-query' } },
  });

  // An update service offering two conditional updates from the current 4.16.45, with the real risks.
  const graph = {
    nodes: ['4.16.45', '4.16.46', '4.16.47'].map((version) => ({ version, payload: IMAGE(version), metadata: {} })),
    edges: [],
    conditionalEdges: [
      { edges: [{ from: '4.16.45', to: '4.16.46' }], risks: [NMSTATE] },
      { edges: [{ from: '4.16.45', to: '4.16.47' }], risks: [AWS] },
    ],
  };
  graphPort = await listen(
    createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(graph))),
    '127.0.0.1',
  );
});

after(async () => {
  if (prometheus?.pid !== undefined && prometheus.exitCode === null) {
    const exit = new Promise((resolve) => prometheus!.once('exit', resolve));
    process.kill(prometheus.pid, 'SIGTERM');
    const killed = await Promise.race([exit.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
    if (!killed) process.kill(prometheus.pid, 'SIGKILL');
  }
  for (const server of servers) server.close();
  informersStop.abort();
  await informers?.stop();
  await apiServer?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The CVO's settings: the Service's DNS name (looked up through the API), the service CA, the kubeconfig's token. */
const settings = (over: Partial<PromQLSettings> = {}): PromQLSettings => ({ url: `https://${SERVICE_HOST}:${querierPort}`, caFile, ...over });

/** Polls as the CVO's status loop does (every 250 ms) until `done` says the conditional updates are settled. */
async function pollUntil(poller: UpdatePoller, done: (byVersion: Record<string, { status: string; reason?: string; message?: string }>) => boolean) {
  const cv = () => ({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: 'c', upstream: `http://127.0.0.1:${graphPort}/graph`, channel: 'stable-4.16' }, status: cvStatus }) as unknown as api.ClusterVersion;
  const byVersion = () => Object.fromEntries((cvStatus.conditionalUpdates ?? []).map((u) => [u.release.version, u.conditions!.find((c) => c.type === 'Recommended')!]));
  return eventually(
    'the conditional updates to be evaluated',
    async () => {
      const change = await poller.poll(cv());
      if (change) cvStatus = change(cvStatus);
      return done(byVersion()) ? byVersion() : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250, detail: () => JSON.stringify(byVersion(), null, 2) },
  );
}

const initialStatus = (): Partial<api.ClusterVersionStatus> => ({ history: [{ state: 'Completed', startedTime: '2026-01-01T00:00:00Z', completionTime: '2026-01-01T00:01:00Z', version: '4.16.45', image: IMAGE('4.16.45'), verified: true }] });
const settled = (u: Record<string, { status: string }>) => Object.keys(u).length === 2 && Object.values(u).every((c) => c.status !== 'Unknown');

test('real risks against a live Prometheus: the one matching this platform-None cluster blocks its update, the other does not', { skip, timeout: 120_000 }, async () => {
  cvStatus = initialStatus();
  const cache = clusterPromQLCache(settings(), client, loadKubeConfig(apiServer.kubeconfigPath), realClock)!;
  const poller = new UpdatePoller({ clock: realClock, promql: (rule) => cache.match(rule) });
  const updates = await pollUntil(poller, settled);
  assert.equal(updates['4.16.46'].status, 'False');
  assert.equal(updates['4.16.46'].reason, 'NMStateServiceFailure');
  assert.equal(updates['4.16.46'].message, `${NMSTATE.message} ${NMSTATE.url}`);
  assert.match(updates['4.16.46'].message!, /The NMState service can fail on baremetal cluster nodes/);
  assert.equal(updates['4.16.47'].status, 'True');
  assert.equal(updates['4.16.47'].reason, 'NotExposedToRisks');
  assert.deepEqual(cvStatus.availableUpdates?.map((u) => u.version), ['4.16.47'], 'the update whose risk does not apply is offered');
  assert.ok(querierSeen.length >= 2, 'asked through thanos-querier');
  assert.ok(querierSeen.every((s) => s.method === 'GET' && s.authorization === `Bearer ${apiServer.token}`), `GET with the kubeconfig's token: ${JSON.stringify(querierSeen)}`);
  assert.equal(cache.evaluations, 2, 'one query per risk');
  // The CVO exports the outcome, and Prometheus has it from a later scrape (earlier ones saw the risk throttled).
  const expected = JSON.stringify([['4.16.46', 'False', 'NMStateServiceFailure'], ['4.16.47', 'True', 'NotExposedToRisks']]);
  let seen = '';
  await eventually('cluster_version_conditional_update_condition_seconds in Prometheus', async () => {
    const r = await queryPrometheus('cluster_version_conditional_update_condition_seconds');
    seen = JSON.stringify(r.map((s) => [s.metric.version, s.metric.status, s.metric.reason]).sort());
    return seen === expected;
  }, { timeoutMs: 20_000, intervalMs: 250, detail: () => `last seen: ${seen}` });
});

test('once the platform is AWS, the AWS risk applies and the NMState one does not', { skip, timeout: 120_000 }, async () => {
  await client.mergePatch(resources.infrastructures, 'cluster', undefined, { status: { platform: 'AWS', platformStatus: { type: 'AWS' } } }, 'status');
  await eventually('Prometheus to see platform AWS only', async () => {
    const [aws, none] = await Promise.all([queryPrometheus('cluster_infrastructure_provider{type="AWS"}'), queryPrometheus('cluster_infrastructure_provider{type="None"}')]);
    return aws.length === 1 && none.length === 0;
  }, { timeoutMs: 20_000, intervalMs: 250 });
  cvStatus = initialStatus();
  const cache = clusterPromQLCache(settings(), client, loadKubeConfig(apiServer.kubeconfigPath), realClock)!;
  const updates = await pollUntil(new UpdatePoller({ clock: realClock, promql: (rule) => cache.match(rule) }), settled);
  assert.deepEqual([updates['4.16.46'].status, updates['4.16.46'].reason], ['True', 'NotExposedToRisks']);
  assert.deepEqual([updates['4.16.47'].status, updates['4.16.47'].reason], ['False', 'AWSCustomDomainNodesNotReady']);
  assert.match(updates['4.16.47'].message!, /Nodes on AWS with custom domain names will go to NotReady state\.\s+https:\/\/issues\.redhat\.com\/browse\/MCO-1031/);
});

test('a wrong CA or a wrong token: Recommended=Unknown, EvaluationFailed, saying why', { skip, timeout: 60_000 }, async () => {
  const update = { release: { version: '4.16.46', image: IMAGE('4.16.46') }, risks: [NMSTATE] };
  const kubeconfig = loadKubeConfig(apiServer.kubeconfigPath);
  const wrongCa = clusterPromQLCache(settings({ caFile: otherCaFile }), client, kubeconfig, realClock)!;
  const r1 = await evaluateConditionalUpdate(update, (rule) => wrongCa.match(rule));
  assert.deepEqual([r1.status, r1.reason], ['Unknown', 'EvaluationFailed']);
  assert.match(r1.message, new RegExp(`^Could not evaluate exposure to update risk NMStateServiceFailure \\(could not query the PromQL service https://thanos-querier\\.openshift-monitoring\\.svc:${querierPort} \\(127\\.77\\.0\\.9\\): .*the server certificate is not signed by the configured CA bundle\\)`));
  const tokenFile = join(work, 'wrong-token');
  writeFileSync(tokenFile, 'not-the-cvo-token\n');
  const wrongToken = clusterPromQLCache(settings({ tokenFile }), client, kubeconfig, realClock)!;
  const r2 = await evaluateConditionalUpdate(update, (rule) => wrongToken.match(rule));
  assert.deepEqual([r2.status, r2.reason], ['Unknown', 'EvaluationFailed']);
  assert.match(r2.message, /answered HTTP 401 Unauthorized to topk by \(_id\) \(1, group by \(_id, type\) \(cluster_infrastructure_provider/);
  assert.equal(querierSeen[querierSeen.length - 1].authorization, 'Bearer not-the-cvo-token', 'the token file is what is sent');
  const noFile = clusterPromQLCache(settings({ tokenFile: join(work, 'missing-token') }), client, kubeconfig, realClock)!;
  const r3 = await evaluateConditionalUpdate(update, (rule) => noFile.match(rule));
  assert.deepEqual([r3.status, r3.reason], ['Unknown', 'EvaluationFailed']);
  assert.match(r3.message, /the token file .*missing-token for the PromQL service does not exist/);
});

test("Prometheus's scalars, two samples and values other than 0 or 1 are refused, naming the query", { skip, timeout: 60_000 }, async () => {
  // Straight to Prometheus's own TLS listener.
  const match = promqlMatcher({ url: `https://127.0.0.1:${prometheusPort}`, ca: async () => caPem });
  assert.equal(await match('group(cluster_infrastructure_provider) or vector(0)'), true);
  await assert.rejects(match('scalar(cluster_infrastructure_provider)'), /invalid PromQL result for scalar\(cluster_infrastructure_provider\): a scalar, not a vector/);
  await assert.rejects(match('group by (type) (cluster_infrastructure_provider) or vector(0)'), /2 samples, must be exactly one/);
  await assert.rejects(match('vector(2)'), /invalid PromQL result for vector\(2\): 2, must be 0 or 1/);
  await assert.rejects(match('cluster_infrastructure_provider{type="GCP"}'), /0 samples, must be exactly one/);
  await assert.rejects(match('cluster_infrastructure_provider{'), /answered HTTP 400 Bad Request to cluster_infrastructure_provider\{: .*parse error/);
});
