// Debian's real Prometheus, run through `bosun prometheus` in a pod-like sandbox
// ($BOSUN_IN_CLUSTER_ROOT), with the configuration the monitoring operator generates from a
// ServiceMonitor: it scrapes a real HTTPS target that checks its bearer token with the API server
// (TokenReview + SubjectAccessReview on /metrics, as kube-rbac-proxy does) as the prometheus-k8s
// service account, evaluates the payload's rules (Watchdog fires; ClusterOperatorDown fires in
// seconds for an operator its target reports down, `for:` shortened as --alert-for-override does), reloads when its rule files
// change; thanos-querier's proxy answers 200 to a caller with cluster-monitoring-view, 401 to an
// anonymous one and 403 to an unprivileged one, and `bosun adm alerts`' table lists Watchdog.
// Skipped without /usr/bin/prometheus (failed under CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, request } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type * as api from '../../src/api/index.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { renderSource } from '../../src/cvo/payload/build.js';
import { DelegatedAuth, KubeClient, loadKubeConfig } from '../../src/kube/index.js';
import { alertsOf, alertsTable } from '../../src/monitoring/alerts-table.js';
import { QuerierProxy } from '../../src/monitoring/querier-proxy.js';
import { ruleFiles } from '../../src/monitoring/rule-files.js';
import { CONFIG_DIR, CONFIG_FILE, RULES_DIR, generateScrapeConfig } from '../../src/monitoring/scrape-config.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { bosunBin } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import * as k8s from '@kubernetes/client-node';

const PROMETHEUS = '/usr/bin/prometheus';
const MANIFESTS = new URL('../../release-payload/manifests/', import.meta.url).pathname;
const skip = !existsSync(PROMETHEUS) && process.env.CI !== 'true' ? `${PROMETHEUS} is not installed (apt-get install prometheus)` : false;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function get(url: string, ca: string, token?: string, method = 'GET', body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const req = request(url, { method, ca, servername: 'thanos-querier.openshift-monitoring.svc', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function payloadObjects<T extends api.KubeObject>(kind: string): T[] {
  return readdirSync(MANIFESTS).filter((f) => f.endsWith('.yaml')).flatMap((f) => parseAllDocuments(renderSource(f, readFileSync(join(MANIFESTS, f), 'utf8'), '1.0.0')).map((d) => d.toJS() as T)).filter((o) => o?.kind === kind);
}

test('real Prometheus scrapes an authenticated target as prometheus-k8s and answers through thanos-querier: 200 authorised, 401 anonymous, 403 unprivileged', { skip, timeout: 180_000 }, async () => {
  const apiServer = await startTestApiServer();
  const access = await enableAccessControl(apiServer.server, apiServer.dataDir);
  const root = mkdtempSync(join(tmpdir(), 'bosun-prom-pod-'));
  let prometheus: ChildProcess | undefined;
  let output = '';
  const servers: Array<{ close(): void }> = [];
  let querier: QuerierProxy | undefined;
  try {
    await apiServer.kubectlOk(['create', 'namespace', 'openshift-monitoring']);
    await apiServer.kubectlOk(['apply', '-f', join(MANIFESTS, '0000_50_cluster-monitoring-operator_02_rbac.yaml')]);
    await apiServer.kubectlOk(['create', 'serviceaccount', 'viewer']);
    await apiServer.kubectlOk(['create', 'serviceaccount', 'nobody']);
    await apiServer.kubectlOk(['create', 'clusterrolebinding', 'viewer-monitoring', '--clusterrole=cluster-monitoring-view', '--serviceaccount=default:viewer']);
    const token = async (ns: string, sa: string) => (await apiServer.kubectlOk(['-n', ns, 'create', 'token', sa])).trim();
    const promToken = await token('openshift-monitoring', 'prometheus-k8s');
    const viewer = await token('default', 'viewer');
    const nobody = await token('default', 'nobody');
    const asPrometheus = new k8s.KubeConfig();
    asPrometheus.loadFromOptions({
      clusters: [{ name: 'c', server: apiServer.url, caData: Buffer.from(apiServer.caPem).toString('base64') }],
      users: [{ name: 'prometheus-k8s', token: promToken }], contexts: [{ name: 'c', cluster: 'c', user: 'prometheus-k8s' }], currentContext: 'c',
    });
    const promClient = new KubeClient(asPrometheus);

    // The scraped component: HTTPS with a serving certificate from "the service CA", /metrics behind delegated auth.
    const ca = await createCA('test-service-ca');
    const serving = await issueServingCert(ca, 'demo-metrics.demo.svc', ['demo-metrics.demo.svc', 'thanos-querier.openshift-monitoring.svc', '127.0.0.1']);
    const auth = new DelegatedAuth(new KubeClient(loadKubeConfig(apiServer.kubeconfigPath)));
    const scrapes: number[] = [];
    const target = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      void auth.check(req.headers.authorization, { nonResource: { path: req.url ?? '/', verb: 'get' } }).then((d) => {
        scrapes.push(d.allowed ? 200 : d.status);
        if (!d.allowed) { res.writeHead(d.status); res.end(); return; }
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end('# TYPE demo_requests_total counter\ndemo_requests_total 42\n# TYPE cluster_operator_up gauge\ncluster_operator_up{name="demo",version="1.0.0",reason="DeploymentUnavailable"} 0\n');
      });
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
    servers.push(target);
    const targetPort = (target.address() as { port: number }).port;

    // The operator's configuration for a ServiceMonitor selecting that component's Service.
    const sm: api.ServiceMonitor = {
      apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'demo', namespace: 'demo' },
      spec: {
        selector: { matchLabels: { 'k8s-app': 'demo-metrics' } },
        jobLabel: 'app',
        endpoints: [{ port: 'metrics', scheme: 'https', interval: '1s', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token', tlsConfig: { caFile: '/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt', serverName: 'demo-metrics.demo.svc' } }],
      },
    };
    const generated = generateScrapeConfig({
      serviceMonitors: [sm],
      services: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'demo-metrics', namespace: 'demo', labels: { 'k8s-app': 'demo-metrics', 'app': 'cluster-version-operator' } }, spec: { ports: [{ name: 'metrics', port: targetPort }] } }],
      endpoints: [{ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'demo-metrics', namespace: 'demo' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'metrics', port: targetPort }] }] }],
      configMaps: [], secrets: [], scrapeInterval: '1s', evaluationInterval: '1s',
    });
    assert.deepEqual(generated.problems, []);
    // The pod's files, as the node agent lays out its volumes.
    const put = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    put(`${CONFIG_DIR}/${CONFIG_FILE}`, stringify(generated.config));
    for (const [k, v] of Object.entries(generated.files)) put(`${CONFIG_DIR}/${k}`, v);
    put('/var/run/secrets/kubernetes.io/serviceaccount/token', promToken);
    put('/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt', ca.certPem);
    for (const [k, v] of Object.entries(ruleFiles(payloadObjects<api.PrometheusRule>('PrometheusRule'), { forOverride: '1s' }))) put(`${RULES_DIR}/${k}`, v);

    const promPort = await freePort();
    prometheus = spawn(process.execPath, [bosunBin, 'prometheus', `--listen=127.0.0.1:${promPort}`, '--poll-interval=300'], { env: { ...process.env, BOSUN_IN_CLUSTER_ROOT: root } });
    prometheus.stdout!.on('data', (d) => (output += d));
    prometheus.stderr!.on('data', (d) => (output += d));

    const querierPort = await freePort();
    put('/etc/tls/private/tls.crt', serving.certPem);
    put('/etc/tls/private/tls.key', serving.keyPem);
    querier = new QuerierProxy({ client: promClient, upstream: `http://127.0.0.1:${promPort}`, listen: { host: '127.0.0.1', port: querierPort }, certFile: join(root, '/etc/tls/private/tls.crt'), keyFile: join(root, '/etc/tls/private/tls.key'), log: () => undefined });
    await querier.start();
    const base = `https://127.0.0.1:${querierPort}`;
    const query = (q: string, t?: string) => get(`${base}/api/v1/query?query=${encodeURIComponent(q)}`, ca.certPem, t);

    // Prometheus scraped the target as prometheus-k8s (the target said 200 to it).
    const up = await eventually('the target up', async () => {
      const r = await query('up{job="cluster-version-operator"}', viewer);
      const body = JSON.parse(r.text);
      return body.data?.result?.[0]?.value?.[1] === '1' ? body.data.result[0] : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500, detail: () => output });
    assert.equal(up.metric.namespace, 'demo');
    assert.equal(up.metric.service, 'demo-metrics');
    assert.equal(up.metric.endpoint, 'metrics');
    assert.ok(scrapes.includes(200));
    assert.ok(!scrapes.some((s) => s !== 200), `the target refused a scrape: ${scrapes.join(',')}`);
    const series = JSON.parse((await query('demo_requests_total', viewer)).text);
    assert.equal(series.data.result[0].value[1], '42');

    // 401 anonymous, 403 unprivileged, 200 with cluster-monitoring-view; POST is `create`, which it grants too.
    const anonymous = await query('up');
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.text, /Unauthorized/);
    const forbidden = await query('up', nobody);
    assert.equal(forbidden.status, 403);
    assert.match(JSON.parse(forbidden.text).message, /system:serviceaccount:default:nobody.*prometheuses\/api\.monitoring\.coreos\.com "k8s" in namespace "openshift-monitoring"/);
    assert.equal((await get(`${base}/api/v1/query`, ca.certPem, viewer, 'POST', 'query=up')).status, 200);
    assert.equal((await get(`${base}/graph`, ca.certPem, viewer)).status, 404);

    // The payload's rules are loaded; Watchdog fires, and adm alerts' table shows it.
    const alerts = await eventually('Watchdog firing', async () => {
      const r = await get(`${base}/api/v1/alerts`, ca.certPem, viewer);
      const list = alertsOf(JSON.parse(r.text));
      return list.some((a) => a.labels.alertname === 'Watchdog' && a.state === 'firing') ? list : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500, detail: () => output });
    const table = alertsTable(alerts, Date.now());
    assert.match(table, /^NAME\s+SEVERITY\s+STATE\s+SINCE\s+MESSAGE\n/);
    assert.match(table, /Watchdog\s+none\s+firing\s+\d+s\s+An alert that should always be firing/);

    // An operator reported down (cluster_operator_up 0 from the job "cluster-version-operator") fires
    // ClusterOperatorDown within seconds: the rules were written with --alert-for-override's 1s.
    await eventually('ClusterOperatorDown firing for demo', async () => {
      const list = alertsOf(JSON.parse((await get(`${base}/api/v1/alerts`, ca.certPem, viewer)).text));
      return list.some((a) => a.labels.alertname === 'ClusterOperatorDown' && a.labels.name === 'demo' && a.labels.reason === 'DeploymentUnavailable' && a.state === 'firing');
    }, { timeoutMs: 30_000, intervalMs: 500, detail: () => output });

    // A changed rule file reloads Prometheus.
    put(`${RULES_DIR}/demo-extra.yaml`, stringify({ groups: [{ name: 'demo', rules: [{ alert: 'DemoScraped', expr: 'demo_requests_total > 0', labels: { severity: 'info' } }] }] }));
    await eventually('DemoScraped loaded after the reload', async () => {
      const r = JSON.parse((await get(`${base}/api/v1/rules`, ca.certPem, viewer)).text);
      return r.data.groups.some((g: { name: string }) => g.name === 'demo');
    }, { timeoutMs: 20_000, intervalMs: 300, detail: () => output });
  } finally {
    await querier?.stop();
    for (const s of servers) s.close();
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    access.stop();
    await apiServer.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('bosun prometheus without the binary fails saying so', { timeout: 60_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-prom-pod-'));
  try {
    mkdirSync(join(root, CONFIG_DIR), { recursive: true });
    writeFileSync(join(root, CONFIG_DIR, CONFIG_FILE), 'scrape_configs: []\n');
    const child = spawn(process.execPath, [bosunBin, 'prometheus', '--binary=/nonexistent/prometheus'], { env: { ...process.env, BOSUN_IN_CLUSTER_ROOT: root } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.on('exit', r));
    assert.equal(code, 1);
    assert.match(stderr, /error: \/nonexistent\/prometheus is not installed: install Debian's prometheus package/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
