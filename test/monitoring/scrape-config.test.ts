// The pure cores: which Services a ServiceMonitor selects, its targets and labels, relabel configs,
// the kubelet Endpoints, the alerts table; and the commands' --help and refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { age, alertsOf, alertsTable } from '../../src/monitoring/alerts-table.js';
import { kubeletEndpoints } from '../../src/monitoring/operator.js';
import { mapPodPath, renderConfig } from '../../src/monitoring/prometheus-runner.js';
import { generateScrapeConfig, relabelConfig, selectedServices, targetGroups } from '../../src/monitoring/scrape-config.js';
import { runBosun } from '../helpers/cli.js';

const svc = (ns: string, name: string, labels: Record<string, string>, ports: NonNullable<api.Service['spec']>['ports'] = [{ name: 'metrics', port: 9001 }]): api.Service =>
  ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns, labels }, spec: { ports } });
const eps = (ns: string, name: string, ips: string[], ports = [{ name: 'metrics', port: 9001 }]): api.Endpoints =>
  ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: ns }, subsets: [{ addresses: ips.map((ip, i) => ({ ip, targetRef: { kind: 'Pod', name: `${name}-${i}` } })), ports }] });
const sm = (ns: string, spec: api.ServiceMonitor['spec']): api.ServiceMonitor => ({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'm', namespace: ns }, spec });

test('a ServiceMonitor selects Services by labels in its own namespace, the namespaces it names, or any', () => {
  const services = [svc('a', 'x', { app: 'x' }), svc('b', 'x', { app: 'x' }), svc('a', 'y', { app: 'y' })];
  const names = (m: api.ServiceMonitor) => selectedServices(m, services).map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
  assert.deepEqual(names(sm('a', { selector: { matchLabels: { app: 'x' } }, endpoints: [] })), ['a/x']);
  assert.deepEqual(names(sm('mon', { selector: { matchLabels: { app: 'x' } }, namespaceSelector: { matchNames: ['b'] }, endpoints: [] })), ['b/x']);
  assert.deepEqual(names(sm('mon', { selector: { matchLabels: { app: 'x' } }, namespaceSelector: { any: true }, endpoints: [] })), ['a/x', 'b/x']);
  assert.deepEqual(names(sm('a', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['x', 'y'] }] }, endpoints: [] })), ['a/x', 'a/y']);
  assert.deepEqual(names(sm('a', { selector: {}, endpoints: [] })), ['a/x', 'a/y'], 'an empty selector selects every Service');
});

test('targets: the endpoint port by name or target port, job from jobLabel, pod and service labels', () => {
  const services = [svc('a', 'x', { app: 'x', component: 'apiserver', tier: 'cp' }, [{ name: 'metrics', port: 9001, targetPort: 'web' }, { name: 'other', port: 80 }])];
  const endpoints = [eps('a', 'x', ['127.1.1.2', '127.1.1.3'], [{ name: 'metrics', port: 9443 }, { name: 'other', port: 8080 }])];
  const m = sm('a', { selector: { matchLabels: { app: 'x' } }, jobLabel: 'component', targetLabels: ['tier'], endpoints: [] });
  assert.deepEqual(targetGroups(m, { port: 'metrics' }, services, endpoints), [
    { targets: ['127.1.1.2:9443'], labels: { job: 'apiserver', namespace: 'a', service: 'x', endpoint: 'metrics', tier: 'cp', pod: 'x-0' } },
    { targets: ['127.1.1.3:9443'], labels: { job: 'apiserver', namespace: 'a', service: 'x', endpoint: 'metrics', tier: 'cp', pod: 'x-1' } },
  ]);
  assert.deepEqual(targetGroups(m, { targetPort: 8080 }, services, endpoints).map((g) => g.targets[0]), ['127.1.1.2:8080', '127.1.1.3:8080']);
  assert.deepEqual(targetGroups(m, { targetPort: 'web' }, services, endpoints).map((g) => g.targets[0]), ['127.1.1.2:9443', '127.1.1.3:9443']);
  assert.deepEqual(targetGroups(m, { port: 'nope' }, services, endpoints), []);
});

test('the generated configuration: one job per endpoint, relabelings in Prometheus\'s spelling, problems reported', () => {
  const generated = generateScrapeConfig({
    serviceMonitors: [sm('a', { selector: { matchLabels: { app: 'x' } }, endpoints: [
      { port: 'metrics', metricRelabelings: [{ sourceLabels: ['__name__'], regex: 'go_.*', action: 'drop' }] },
      { targetPort: 9001, tlsConfig: { ca: { secret: { name: 'missing', key: 'ca.crt' } } } },
      {},
    ] })],
    services: [svc('a', 'x', { app: 'x' })], endpoints: [eps('a', 'x', ['127.1.1.2'])], configMaps: [], secrets: [],
  });
  assert.deepEqual(generated.config.scrape_configs.map((j) => j.job_name), ['serviceMonitor/a/m/0']);
  assert.deepEqual(generated.config.scrape_configs[0].metric_relabel_configs, [{ source_labels: ['__name__'], regex: 'go_.*', action: 'drop' }]);
  assert.deepEqual(generated.problems, ['ServiceMonitor a/m endpoint 1: Secret a/missing has no key ca.crt', 'ServiceMonitor a/m endpoint 2: neither port nor targetPort is set']);
  assert.deepEqual(relabelConfig({ targetLabel: 'x', replacement: 'y' }), { target_label: 'x', replacement: 'y' });
});

test('kube-system/kubelet lists every node with an InternalIP on its kubelet port', () => {
  const node = (name: string, ip?: string): api.Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, uid: `u-${name}` }, status: ip ? { addresses: [{ type: 'InternalIP', address: ip }] } : {} });
  const e = kubeletEndpoints([node('w-1', '127.0.1.5'), node('m-0', '127.0.1.1'), node('new')]);
  assert.deepEqual(e.subsets?.[0]?.addresses?.map((a) => `${a.nodeName}=${a.ip}`), ['m-0=127.0.1.1', 'w-1=127.0.1.5']);
  assert.deepEqual(e.subsets?.[0]?.ports, [{ name: 'https-metrics', port: 10250, protocol: 'TCP' }]);
  assert.deepEqual(kubeletEndpoints([]).subsets, []);
});

test('bosun prometheus maps the pod\'s paths into its sandbox and leaves out jobs whose files are missing', () => {
  assert.equal(mapPodPath('/root/pod', '/etc/x'), '/root/pod/etc/x');
  assert.equal(mapPodPath(undefined, '/etc/x'), '/etc/x');
  const text = 'rule_files: [/etc/prometheus/rules/*.yaml]\nscrape_configs:\n- job_name: a\n  authorization: {credentials_file: /t}\n  file_sd_configs: [{files: [/etc/c/a.json]}]\n- job_name: b\n  tls_config: {ca_file: /missing}\n';
  const r = renderConfig(text, '/sb', (p) => p !== '/sb/missing');
  assert.deepEqual(r.leftOut, [{ job: 'b', file: '/missing' }]);
  assert.match(r.text, /credentials_file: \/sb\/t/);
  assert.match(r.text, /- \/sb\/etc\/c\/a\.json/);
  assert.match(r.text, /- \/sb\/etc\/prometheus\/rules\/\*\.yaml/);
  assert.doesNotMatch(r.text, /job_name: b/);
  assert.throws(() => renderConfig('- a list', '/sb'), /not a YAML mapping/);
});

test('the alerts table: firing alerts oldest first, pending ones with --pending, ages as kubectl prints them', () => {
  const now = Date.parse('2026-11-27T03:00:00Z');
  const alerts = alertsOf({ status: 'success', data: { alerts: [
    { labels: { alertname: 'B', severity: 'warning' }, annotations: { message: 'second' }, state: 'firing', activeAt: '2026-11-27T02:59:00Z' },
    { labels: { alertname: 'A', severity: 'critical' }, annotations: { summary: 'first\n  line' }, state: 'firing', activeAt: '2026-11-27T00:00:00Z' },
    { labels: { alertname: 'P', severity: 'info' }, annotations: {}, state: 'pending', activeAt: '2026-11-27T02:59:50Z' },
  ] } });
  assert.equal(alertsTable(alerts, now), 'NAME   SEVERITY   STATE    SINCE   MESSAGE\nA      critical   firing   3h      first line\nB      warning    firing   60s     second\n');
  assert.match(alertsTable(alerts, now, { pending: true }), /\nP\s+info\s+pending\s+10s$/m);
  assert.equal(alertsTable([], now), 'No firing alerts.\n');
  assert.equal(age(90 * 60_000), '90m');
  assert.equal(age(3 * 86_400_000), '3d');
  assert.throws(() => alertsOf({ status: 'error', error: 'bad query' }), /answered error: bad query/);
  assert.throws(() => alertsOf({ status: 'success', data: {} }), /no data.alerts/);
});

test('bosun adm alerts --help, and a clear error when monitoring is not there', { timeout: 60_000 }, async () => {
  const help = await runBosun(['adm', 'alerts', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /list the cluster's firing alerts/);
  assert.match(help.stdout, /NAME\s+SEVERITY\s+STATE\s+SINCE\s+MESSAGE/);
  const bad = await runBosun(['adm', 'alerts', '--timeout', 'soon']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--timeout must be seconds, got "soon"/);
  const { startTestApiServer } = await import('../helpers/apiserver.js');
  const api = await startTestApiServer();
  try {
    const missing = await runBosun(['adm', 'alerts', '--kubeconfig', api.kubeconfigPath]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /error: Service openshift-monitoring\/thanos-querier does not exist: is monitoring running\?/);
  } finally {
    await api.stop();
  }
  const operator = await runBosun(['cluster-monitoring-operator', '--help']);
  assert.match(operator.stdout, /--alert-for-override <duration>\s+TESTS ONLY/);
  const querier = await runBosun(['thanos-querier', '--help']);
  assert.match(querier.stdout, /prometheuses\/api "k8s"/);
});
