// The monitoring operator against the real API server: ServiceMonitors (with their Services,
// Endpoints and a CA bundle ConfigMap) become Prometheus's configuration in Secret
// openshift-monitoring/prometheus-k8s, which Debian's `promtool check config` accepts once mapped
// into a pod's sandbox as `bosun prometheus` maps it; PrometheusRules become the rule files
// ConfigMap; nodes become kube-system/kubelet's Endpoints; Deployment prometheus-k8s is created and
// ClusterOperator/monitoring follows it. Without the Prometheus binary: Degraded
// (PrometheusBinaryMissing), Available, and no Deployment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { KubeClient, Manager, loadKubeConfig, resources } from '../../src/kube/index.js';
import { addMonitoringOperator } from '../../src/monitoring/operator.js';
import { renderConfig } from '../../src/monitoring/prometheus-runner.js';
import { CONFIG_DIR } from '../../src/monitoring/scrape-config.js';

const PROMTOOL = '/usr/bin/promtool';
const MANIFESTS = new URL('../../release-payload/manifests/', import.meta.url).pathname;
const CRDS = ['0000_00_cluster-version-operator_01_clusteroperators.crd.yaml', '0000_50_cluster-monitoring-operator_00_servicemonitors.crd.yaml', '0000_50_cluster-monitoring-operator_00_prometheusrules.crd.yaml'];

async function cluster(): Promise<{ api: TestApiServer; client: KubeClient }> {
  const api = await startTestApiServer();
  for (const crd of CRDS) await api.kubectlOk(['apply', '-f', join(MANIFESTS, crd)]);
  await api.kubectlOk(['wait', '--for=condition=Established', '--timeout=20s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com', 'crd/clusteroperators.config.openshift.io']);
  for (const ns of ['openshift-monitoring', 'demo', 'kube-system']) await api.kubectl(['create', 'namespace', ns]);
  return { api, client: new KubeClient(loadKubeConfig(api.kubeconfigPath)) };
}

const DEMO = `
apiVersion: v1
kind: Service
metadata: {name: demo-metrics, namespace: demo, labels: {k8s-app: demo-metrics}}
spec:
  ports: [{name: metrics, port: 9443, targetPort: 9443}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: demo-metrics, namespace: demo}
subsets:
- addresses: [{ip: 127.1.1.7, targetRef: {kind: Pod, name: demo-0, namespace: demo}}]
  ports: [{name: metrics, port: 9443}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-ca, namespace: demo}
data: {ca.crt: "-----BEGIN CERTIFICATE-----\\nnot checked by promtool\\n-----END CERTIFICATE-----\\n"}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: demo, namespace: demo}
spec:
  selector: {matchLabels: {k8s-app: demo-metrics}}
  endpoints:
  - port: metrics
    scheme: https
    interval: 15s
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    tlsConfig: {ca: {configMap: {name: demo-ca, key: ca.crt}}, serverName: demo-metrics.demo.svc}
  - port: metrics
    path: /metrics/resource
    scheme: https
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    tlsConfig: {caFile: /etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt, serverName: demo-metrics.demo.svc}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: demo-rules, namespace: demo}
spec:
  groups:
  - name: demo
    rules:
    - alert: DemoDown
      expr: up{job="demo-metrics"} == 0
      for: 10m
      labels: {severity: warning}
---
apiVersion: v1
kind: Node
metadata: {name: master-0}
`;

test('ServiceMonitors and PrometheusRules become Prometheus\'s configuration and rule files; the Deployment and ClusterOperator follow', { timeout: 90_000 }, async () => {
  const { api, client } = await cluster();
  const stop = new AbortController();
  const root = mkdtempSync(join(tmpdir(), 'bosun-prom-root-'));
  try {
    await api.kubectlOk(['apply', '-f', '-'], DEMO);
    await client.mergePatch(resources.nodes, 'master-0', undefined, { status: { addresses: [{ type: 'InternalIP', address: '127.0.1.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } } }, 'status');
    const manager = new Manager({ name: 'cluster-monitoring-operator', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
    addMonitoringOperator(manager, { releaseVersion: '1.0.0', prometheusBinary: process.execPath, alertForOverride: '5s' });
    void manager.start(stop.signal);

    const secret = await eventually('Secret prometheus-k8s', () => client.read(resources.secrets, 'prometheus-k8s', 'openshift-monitoring'));
    const files = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    const config = parse(files['prometheus.yaml']);
    const jobs = config.scrape_configs.map((j: { job_name: string }) => j.job_name);
    assert.deepEqual(jobs, ['serviceMonitor/demo/demo/0', 'serviceMonitor/demo/demo/1']);
    const job0 = config.scrape_configs[0];
    assert.equal(job0.scheme, 'https');
    assert.equal(job0.scrape_interval, '15s');
    assert.deepEqual(job0.authorization, { type: 'Bearer', credentials_file: '/var/run/secrets/kubernetes.io/serviceaccount/token' });
    assert.deepEqual(job0.tls_config, { ca_file: `${CONFIG_DIR}/configmap_demo_demo-ca_ca.crt`, server_name: 'demo-metrics.demo.svc' });
    assert.equal(config.scrape_configs[1].metrics_path, '/metrics/resource');
    const targets = JSON.parse(files['targets_demo_demo_0.json']);
    assert.deepEqual(targets, [{ targets: ['127.1.1.7:9443'], labels: { job: 'demo-metrics', namespace: 'demo', service: 'demo-metrics', endpoint: 'metrics', pod: 'demo-0' } }]);
    assert.match(files['configmap_demo_demo-ca_ca.crt'], /BEGIN CERTIFICATE/);

    // What `bosun prometheus` runs with: the pod's paths mapped into a sandbox; promtool accepts it.
    for (const [k, v] of Object.entries(files)) {
      mkdirSync(join(root, CONFIG_DIR), { recursive: true });
      writeFileSync(join(root, CONFIG_DIR, k), v);
    }
    for (const f of ['/var/run/secrets/kubernetes.io/serviceaccount/token', '/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt']) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), 'x');
    }
    const rules = await eventually('the rule files', () => client.read(resources.configMaps, 'prometheus-k8s-rulefiles-0', 'openshift-monitoring'));
    assert.match(rules.data?.['demo-demo-rules.yaml'] ?? '', /alert: DemoDown[\s\S]*for: 5s/);
    mkdirSync(join(root, '/etc/prometheus/rules'), { recursive: true });
    for (const [k, v] of Object.entries(rules.data ?? {})) writeFileSync(join(root, '/etc/prometheus/rules', k), v);
    const rendered = renderConfig(files['prometheus.yaml'], root);
    assert.deepEqual(rendered.leftOut, []);
    writeFileSync(join(root, 'out.yaml'), rendered.text);
    if (existsSync(PROMTOOL) || process.env.CI === 'true') {
      const check = spawnSync(PROMTOOL, ['check', 'config', join(root, 'out.yaml')], { encoding: 'utf8' });
      assert.equal(check.status, 0, `promtool check config:\n${check.stdout}\n${check.stderr}`);
      assert.match(check.stdout, /SUCCESS/);
    }
    // Without the injected CA file, that job is left out rather than failing the whole configuration.
    rmSync(join(root, '/etc/prometheus/configmaps'), { recursive: true });
    assert.deepEqual(renderConfig(files['prometheus.yaml'], root).leftOut, [{ job: 'serviceMonitor/demo/demo/1', file: '/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt' }]);

    // The kubelets, for the kubelet ServiceMonitor.
    const kubelet = await eventually('kube-system/kubelet endpoints', () => client.read(resources.endpoints, 'kubelet', 'kube-system'));
    assert.deepEqual(kubelet.subsets?.[0]?.addresses?.map((a) => [a.ip, a.nodeName]), [['127.0.1.1', 'master-0']]);
    assert.equal(kubelet.subsets?.[0]?.ports?.[0]?.port, 10250);

    // Prometheus's Deployment; ClusterOperator/monitoring Available once it has a ready replica.
    const deployment = await eventually('Deployment prometheus-k8s', () => client.read(resources.deployments, 'prometheus-k8s', 'openshift-monitoring'));
    const containers = deployment.spec?.template.spec?.containers ?? [];
    assert.deepEqual(containers.map((c) => c.image), ['bosun.local/prometheus:1.0.0', 'bosun.local/thanos-querier:1.0.0']);
    assert.equal(deployment.spec?.template.spec?.serviceAccountName, 'prometheus-k8s');
    // Found ready as soon as it is while it starts (every second), then looked at every 5 s.
    assert.deepEqual([containers[0].startupProbe?.httpGet?.path, containers[0].startupProbe?.periodSeconds, containers[0].readinessProbe?.periodSeconds], ['/-/ready', 1, 5]);
    const co = await eventually('ClusterOperator monitoring not yet Available', async () => {
      const o = await client.read(resources.clusterOperators, 'monitoring');
      return o?.status?.conditions?.find((c) => c.type === 'Available')?.reason === 'PrometheusNotReady' ? o : undefined;
    });
    assert.equal(co.status?.conditions?.find((c) => c.type === 'Available')?.status, 'False');
    await client.mergePatch(resources.deployments, 'prometheus-k8s', 'openshift-monitoring', { status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 } }, 'status');
    const ready = await eventually('ClusterOperator monitoring Available at 1.0.0', async () => {
      const o = await client.read(resources.clusterOperators, 'monitoring');
      return o?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') && o.status.versions?.some((v) => v.version === '1.0.0') ? o : undefined;
    });
    assert.equal(ready.status?.conditions?.find((c) => c.type === 'Degraded')?.status, 'False');

    // A ServiceMonitor naming a ConfigMap that does not exist: left out, and Degraded says so.
    await api.kubectlOk(['apply', '-f', '-'], `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: broken, namespace: demo}
spec:
  selector: {matchLabels: {k8s-app: demo-metrics}}
  endpoints: [{port: metrics, tlsConfig: {ca: {configMap: {name: nowhere, key: ca.crt}}}}]
`);
    const degraded = await eventually('Degraded ServiceMonitorsInvalid', async () => (await client.read(resources.clusterOperators, 'monitoring'))?.status?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'ServiceMonitorsInvalid'));
    assert.match(degraded.message ?? '', /ServiceMonitor demo\/broken endpoint 0: ConfigMap demo\/nowhere has no key ca.crt/);
  } finally {
    stop.abort();
    rmSync(root, { recursive: true, force: true });
    await api.stop();
  }
});

test('without the Prometheus binary ClusterOperator/monitoring is Degraded (PrometheusBinaryMissing) and no Prometheus is deployed', { timeout: 60_000 }, async () => {
  const { api, client } = await cluster();
  const stop = new AbortController();
  try {
    const manager = new Manager({ name: 'cluster-monitoring-operator', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
    addMonitoringOperator(manager, { releaseVersion: '1.0.0', prometheusBinary: '/nonexistent/bin/prometheus' });
    void manager.start(stop.signal);
    const co = await eventually('Degraded PrometheusBinaryMissing', async () => {
      const o = await client.read(resources.clusterOperators, 'monitoring');
      return o?.status?.conditions?.some((c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'PrometheusBinaryMissing') ? o : undefined;
    });
    const degraded = co.status?.conditions?.find((c) => c.type === 'Degraded');
    assert.match(degraded?.message ?? '', /\/nonexistent\/bin\/prometheus is not installed: install Debian's prometheus package/);
    assert.equal(co.status?.conditions?.find((c) => c.type === 'Available')?.status, 'True');
    assert.equal(await client.read(resources.deployments, 'prometheus-k8s', 'openshift-monitoring'), undefined);
    // The configuration is still written: installing the package is all it takes.
    assert.ok(await client.read(resources.secrets, 'prometheus-k8s', 'openshift-monitoring'));
  } finally {
    stop.abort();
    await api.stop();
  }
});
