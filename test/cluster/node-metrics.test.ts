// test: shared-addresses (binds the local cloud's machine and pod addresses; run alone)
// The node agent's metrics and the resource metrics API end to end: a node booted from its
// bootstrap token serves /metrics and /metrics/resource on <nodeIP>:10250 to a token allowed
// `get nodes/metrics` (200), and refuses no credentials (401) and a token without the right (403);
// kubelet_running_pods counts the pods running there; a busy process's CPU (spent in a child it
// started) shows in /metrics/resource while a simulated pod reports zero; and the metrics server,
// behind the APIService v1beta1.metrics.k8s.io with its caBundle checked, answers the real
// `kubectl top nodes` / `kubectl top pods` and `bosun adm top` through the API server's aggregation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as api from '../../src/api/index.js';
import type { Instance } from '../../src/cloud/types.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { logger } from '../../src/common/log.js';
import { KubeClient, loadKubeConfig, resources, type Obj } from '../../src/kube/index.js';
import { kubeletRequestOptions, readRequestHeaderAuth } from '../../src/metrics-server/run.js';
import { Scraper } from '../../src/metrics-server/scraper.js';
import { MetricsApiServer } from '../../src/metrics-server/server.js';
import { parseSamples, type Sample } from '../../src/metrics-server/prometheus-text.js';
import { eventually } from '../helpers/eventually.js';
import { runBosun } from '../helpers/cli.js';
import { bootstrapUserData, bootWorker, kubeconfigText, startNodeCluster, type NodeCluster } from './node-agent-fixture.js';

const COMPONENT = fileURLToPath(new URL('./node-agent-component.mjs', import.meta.url));
const BUSY = fileURLToPath(new URL('./node-metrics-busy.mjs', import.meta.url));
const NODE = 'worker-m';

let c: NodeCluster;
let machine: Instance;
let tmp: string;
const tokens: Record<string, string> = {};

const RBAC = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: prom, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: nobody, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: metrics-server, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: test-node-metrics-reader}
rules:
- {apiGroups: [""], resources: [nodes/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: test-node-metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test-node-metrics-reader}
subjects: [{kind: ServiceAccount, name: prom, namespace: default}, {kind: ServiceAccount, name: metrics-server, namespace: default}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: test-metrics-server}
rules:
- {apiGroups: [""], resources: [nodes, pods], verbs: [get, list]}
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: test-metrics-server}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test-metrics-server}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: default}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: test-metrics-server-auth-delegator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects: [{kind: ServiceAccount, name: metrics-server, namespace: default}]
`;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'bosun-node-metrics-'));
  c = await startNodeCluster({
    agent: { componentCommand: (argv) => (argv[0] === 'busy' ? [process.execPath, BUSY] : [process.execPath, COMPONENT, ...argv]) },
  });
  machine = await bootWorker(c, NODE, await bootstrapUserData(c));
  await c.api.kubectlOk(['apply', '-f', '-'], RBAC);
  for (const sa of ['prom', 'nobody', 'metrics-server']) tokens[sa] = (await c.api.kubectlOk(['create', 'token', sa, '-n', 'default'])).trim();
});
after(async () => {
  await c?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A GET to the node's :10250 with a bearer token (none: anonymous). */
function kubeletGet(path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: machine.privateIp, port: 10250, path, agent: false, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function samples(path: string): Promise<Sample[]> {
  const r = await kubeletGet(path, tokens.prom);
  assert.equal(r.status, 200, r.body);
  return parseSamples(r.body);
}

const value = (all: Sample[], name: string, labels: Record<string, string> = {}) =>
  all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

function pod(name: string, image: string, args: string[] = []): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: name } }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image, args }] } };
}

test('the node agent serves /metrics and /metrics/resource on :10250 to a token allowed get nodes/metrics (200), 401 without credentials, 403 without the right', { timeout: 60_000 }, async () => {
  for (const path of ['/metrics', '/metrics/resource']) {
    const allowed = await kubeletGet(path, tokens.prom);
    assert.equal(allowed.status, 200, `${path}: ${allowed.body}`);
    assert.equal((await kubeletGet(path)).status, 401, `${path} anonymous`);
    const forbidden = await kubeletGet(path, tokens.nobody);
    assert.equal(forbidden.status, 403, `${path} without nodes/metrics`);
    assert.match(forbidden.body, /nodes\/metrics|metrics/);
    assert.equal((await kubeletGet(path, 'not-a-token')).status, 401, `${path} with an unknown token`);
  }
  // The metrics token does not open the logs (nodes/proxy).
  assert.equal((await kubeletGet('/containerLogs/default/x/main', tokens.prom)).status, 403);
  const all = await samples('/metrics');
  assert.equal(value(all, 'kubelet_node_name', { node: NODE }), 1);
  const buckets = all.filter((s) => s.name === 'kubelet_pod_start_duration_seconds_bucket').map((s) => s.labels.le);
  assert.deepEqual(buckets, ['0.5', '1', '2', '3', '4', '5', '6', '8', '10', '20', '30', '45', '60', '120', '180', '240', '300', '360', '480', '600', '900', '1200', '1800', '2700', '3600', '+Inf']);
});

test('kubelet_running_pods counts the pods running on the node; a busy process tree shows CPU in /metrics/resource, a simulated pod zero', { timeout: 90_000 }, async () => {
  await c.kube.create(resources.pods, pod('busy', 'bosun.local/busy', ['busy']) as api.Pod);
  await c.kube.create(resources.pods, pod('simulated', 'registry.example/nginx:1') as api.Pod);
  await eventually('both pods Running', async () => {
    const pods = await c.kube.list(resources.pods, 'default');
    return ['busy', 'simulated'].every((n) => pods.items.some((p) => p.metadata.name === n && p.status?.phase === 'Running'));
  }, 30_000);
  const running = (await c.kube.list(resources.pods, undefined, { fieldSelector: `spec.nodeName=${NODE}` })).items.filter((p) => p.status?.phase === 'Running').length;
  const all = await samples('/metrics');
  assert.equal(value(all, 'kubelet_running_pods'), running);
  assert.equal(value(all, 'kubelet_running_containers', { container_state: 'running' }), running);
  assert.ok((value(all, 'kubelet_pod_start_duration_seconds_count') ?? 0) >= 2, 'the two pods\' start durations are observed');

  const busy = { namespace: 'default', pod: 'busy' };
  const cpu = (s: Sample[]) => value(s, 'container_cpu_usage_seconds_total', { ...busy, container: 'main' }) ?? 0;
  // The pod's own process only waits; its child spins 60% of the time: the CPU grows only if children count.
  // (On a loaded machine the child gets less of a core: wait for 0.3 s of CPU, however long it takes.)
  const first = await samples('/metrics/resource');
  let last = first;
  const resource = await eventually('the busy child\'s CPU counted in its container', async () => {
    last = await samples('/metrics/resource');
    return cpu(last) - cpu(first) > 0.3 ? last : undefined;
  }, 30_000).catch(() => assert.fail(`the busy child's CPU is counted in its container: ${cpu(first)} s, then ${cpu(last)} s`));
  assert.ok((value(resource, 'container_memory_working_set_bytes', { ...busy, container: 'main' }) ?? 0) > 1024 * 1024, 'the process tree has a working set');
  assert.ok((value(resource, 'pod_cpu_usage_seconds_total', busy) ?? 0) > 0.1);
  assert.equal(value(resource, 'container_cpu_usage_seconds_total', { namespace: 'default', pod: 'simulated', container: 'main' }), 0);
  assert.equal(value(resource, 'container_memory_working_set_bytes', { namespace: 'default', pod: 'simulated', container: 'main' }), 0);
  assert.ok((value(resource, 'node_cpu_usage_seconds_total') ?? 0) >= (value(resource, 'pod_cpu_usage_seconds_total', busy) ?? Infinity));
  assert.equal(value(resource, 'resource_scrape_error'), 0);
  assert.ok(resource.find((s) => s.name === 'container_cpu_usage_seconds_total')?.timestampMs, 'samples carry their time');
});

test('the metrics server behind the APIService v1beta1.metrics.k8s.io answers kubectl top nodes/pods and bosun adm top through the aggregator; a wrong caBundle is a 503', { timeout: 120_000 }, async () => {
  const kubeconfigPath = join(tmp, 'metrics-server.kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfigText(c.api.url, c.api.caPem, { token: tokens['metrics-server'] }));
  const kc = loadKubeConfig(kubeconfigPath);
  const client = new KubeClient(kc);
  const log = logger('metrics-server');
  log.level = 'warn';
  const scraper = new Scraper(client, { resolutionMs: 1000, log, kubeletRequestOptions: kubeletRequestOptions(kc, { insecure: true }) });
  const ca = await createCA('test-metrics-server-ca');
  const tls = await issueServingCert(ca, 'metrics-server', ['metrics-server.openshift-monitoring.svc']);
  const requestHeader = await readRequestHeaderAuth(client);
  assert.ok(requestHeader, 'the API server publishes its front-proxy CA');
  const server = new MetricsApiServer(client, scraper, { host: '127.0.0.1', port: 0, tls, requestHeader, log });
  const stop = new AbortController();
  await server.start(stop.signal);
  void scraper.start(stop.signal);
  try {
    const wrongCa = await createCA('not-the-server-ca');
    await c.api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'List', items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openshift-monitoring' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics-server', namespace: 'openshift-monitoring' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 'https' }] } },
        { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'metrics-server', namespace: 'openshift-monitoring' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: server.port }] }] },
        apiService(wrongCa.certPem),
      ],
    }));
    const refused = await c.api.kubectl(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /ServiceUnavailable|unable to handle the request/, 'a server whose certificate the caBundle did not sign is not trusted');

    await c.api.kubectlOk(['apply', '-f', '-'], JSON.stringify(apiService(ca.certPem)));
    let last = '';
    const nodes = await eventually('kubectl top nodes shows the node', async () => {
      const r = await c.api.kubectl(['top', 'nodes']);
      last = `${r.stdout}${r.stderr}`;
      return r.code === 0 && new RegExp(`^${NODE}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`, 'm').test(r.stdout) ? r.stdout : undefined;
    }, 60_000).catch((e: Error) => assert.fail(`${e.message}; kubectl said: ${last}`));
    assert.match(nodes, /^NAME\s+CPU\(cores\)\s+CPU\(%\)\s+MEMORY\(bytes\)\s+MEMORY\(%\)/);
    const pods = await eventually('kubectl top pods shows the busy pod using CPU', async () => {
      const r = await c.api.kubectl(['top', 'pods', '-n', 'default']);
      last = `${r.stdout}${r.stderr}`;
      const m = /^busy\s+(\d+)m\s+(\d+)Mi/m.exec(r.stdout);
      return r.code === 0 && m && Number(m[1]) > 0 ? r.stdout : undefined;
    }, 60_000).catch((e: Error) => assert.fail(`${e.message}; kubectl said: ${last}`));
    assert.match(pods, /^simulated\s+0m\s+0Mi/m, 'a simulated pod uses nothing');

    const raw = JSON.parse(await c.api.kubectlOk(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy']));
    assert.equal(raw.kind, 'PodMetrics');
    assert.match(raw.containers[0].usage.cpu, /^\d+n$/);
    assert.match(raw.containers[0].usage.memory, /^\d+Ki$/);
    assert.match(raw.window, /^\d+(\.\d+)?s$/);
    // The aggregator passes the user on; RBAC decided first in the API server.
    const nobody = await c.api.kubectl(['--token', tokens.nobody, 'get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes']);
    assert.match(nobody.stderr, /Forbidden|forbidden/);
    const groups = JSON.parse(await c.api.kubectlOk(['get', '--raw', '/apis']));
    assert.ok(groups.groups.some((g: Obj) => g.name === 'metrics.k8s.io' && g.preferredVersion.version === 'v1beta1'));

    const adm = await runBosun(['adm', 'top', 'nodes', '--kubeconfig', c.api.kubeconfigPath]);
    assert.equal(adm.code, 0, adm.stderr);
    assert.match(adm.stdout, new RegExp(`^NAME\\s+CPU\\(cores\\)\\s+CPU\\(%\\)\\s+MEMORY\\(bytes\\)\\s+MEMORY\\(%\\)\\s*\\n${NODE}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`));
    const admPods = await runBosun(['adm', 'top', 'pods', '-A', '--kubeconfig', c.api.kubeconfigPath]);
    assert.equal(admPods.code, 0, admPods.stderr);
    assert.match(admPods.stdout, /^NAMESPACE\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(admPods.stdout, /^default\s+busy\s+\d+m\s+\d+Mi/m);
  } finally {
    stop.abort();
    await server.stop();
  }
});

function apiService(caPem: string): Obj {
  return {
    apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: { group: 'metrics.k8s.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, service: { namespace: 'openshift-monitoring', name: 'metrics-server', port: 443 }, caBundle: Buffer.from(caPem).toString('base64') },
  };
}
