// The cloud-controller-manager's service controller metrics (src/ccm-operator/metrics.ts) as
// Prometheus reads them from the component manager's /metrics: the real service controller against
// the embedded API server, over a cloud provider registered here that keeps its balancers in
// memory and fails host updates on demand (fault injection). Ensuring a LoadBalancer Service's
// balancer is not a node sync (as upstream); a change in the set of eligible nodes is — it counts
// in service_controller_loadbalancer_sync_total and the two latency histograms (upstream's
// buckets), and a failed one in service_controller_nodesync_error_total.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { addCloudControllers } from '../../src/ccm-operator/ccm.js';
import { type CloudProvider, type LoadBalancer, registerCloudProvider } from '../../src/ccm-operator/cloud-provider.js';
import { NODES, SERVICES } from '../../src/ccm-operator/context.js';
import { KubeClient, Manager, loadKubeConfig, rfc3339 } from '../../src/kube/index.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { samplesUntil, scrapeSamples, series, withDelegatedAuth, valueOf, type Sample } from '../helpers/metrics.js';

/** The in-memory cloud: balancer name → the nodes it sends to; `failUpdates` makes host updates fail. */
const cloud = { balancers: new Map<string, string[]>(), failUpdates: false };
const memoryBalancers: LoadBalancer = {
  getLoadBalancerName: (cluster, s) => `${cluster}-${s.metadata.uid}`,
  async getLoadBalancer(cluster, s) { return cloud.balancers.has(`${cluster}-${s.metadata.uid}`) ? { ingress: [{ ip: '192.0.2.10' }] } : undefined; },
  async ensureLoadBalancer(cluster, s, nodes) {
    cloud.balancers.set(`${cluster}-${s.metadata.uid}`, nodes.map((n) => n.metadata.name));
    return { ingress: [{ ip: '192.0.2.10' }] };
  },
  async updateLoadBalancer(cluster, s, nodes) {
    if (cloud.failUpdates) throw new Error('the cloud refuses the update (test fault)');
    cloud.balancers.set(`${cluster}-${s.metadata.uid}`, nodes.map((n) => n.metadata.name));
  },
  async ensureLoadBalancerDeleted(cluster, s) { cloud.balancers.delete(`${cluster}-${s.metadata.uid}`); },
};
const provider: CloudProvider = {
  initialize() {}, loadBalancer: () => memoryBalancers, instances: () => undefined, instancesV2: () => undefined,
  zones: () => undefined, clusters: () => undefined, routes: () => undefined, providerName: () => 'metrics-test', hasClusterID: () => true,
};
registerCloudProvider('metrics-test', () => provider);

let apiServer: TestApiServer;
let client: KubeClient;
let manager: Manager;
let running: Promise<void>;

const metrics = () => scrapeSamples(manager.metricsAddress!, apiServer.token);

async function addNode(name: string): Promise<void> {
  await client.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID: `metrics-test://${name}` } });
  await setReady(name, 'True');
}

async function setReady(name: string, status: 'True' | 'False'): Promise<void> {
  await client.mergePatch(NODES, name, undefined, { status: { conditions: [{ type: 'Ready', status, reason: 'Test', message: '', lastHeartbeatTime: rfc3339(), lastTransitionTime: rfc3339() }] } }, 'status');
}

const until = (what: string, check: (s: Sample[]) => string | undefined, timeoutMs = 15_000) => samplesUntil(metrics, what, check, timeoutMs);

const count = (s: Sample[], histogram: string) => valueOf(s, `${histogram}_count`) ?? 0;

before(async () => {
  apiServer = await startTestApiServer();
  await withDelegatedAuth(apiServer);
  client = new KubeClient(loadKubeConfig(apiServer.kubeconfigPath));
  await addNode('lb-node-a');
  await addNode('lb-node-b');
  manager = new Manager({ name: 'cloud-controller-manager', kubeconfig: loadKubeConfig(apiServer.kubeconfigPath), metricsListen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn' });
  await addCloudControllers(manager, { cloudProvider: 'metrics-test', controllers: ['service'], clusterName: 'metrics' });
  running = manager.start();
  await manager.ready;
});

after(async () => {
  manager?.stop();
  await running?.catch(() => undefined);
  await apiServer?.stop();
});

test('the families are there from the start, with upstream\'s buckets (1 s to 16384 s)', async () => {
  const s = await metrics();
  assert.equal(valueOf(s, 'service_controller_loadbalancer_sync_total'), 0);
  assert.equal(valueOf(s, 'service_controller_nodesync_error_total'), 0);
  for (const h of ['service_controller_nodesync_latency_seconds', 'service_controller_update_loadbalancer_host_latency_seconds']) {
    assert.deepEqual(series(s, `${h}_bucket`).map((b) => b.labels.le), [...Array.from({ length: 15 }, (_, i) => String(2 ** i)), '+Inf'], h);
  }
});

test('a LoadBalancer Service\'s node syncs count in loadbalancer_sync_total and the latencies; a failed one in nodesync_error_total', { timeout: 40_000 }, async () => {
  const created = await client.create(SERVICES, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
    spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  }) as api.Service;
  await eventually('the balancer ensured and its address in status', async () => ((await client.get(SERVICES, 'web', 'default')).status?.loadBalancer?.ingress ?? []).length > 0);
  let s = await metrics();
  assert.equal(valueOf(s, 'service_controller_loadbalancer_sync_total'), 0, 'ensuring a balancer is not a node sync');

  // A third node becomes eligible: the balancer's hosts are updated.
  await addNode('lb-node-c');
  s = await until('one node sync', (s) => (valueOf(s, 'service_controller_loadbalancer_sync_total') === 1 && count(s, 'service_controller_update_loadbalancer_host_latency_seconds') === 1 ? undefined : `sync_total ${valueOf(s, 'service_controller_loadbalancer_sync_total')}`));
  assert.equal(count(s, 'service_controller_nodesync_latency_seconds'), 1);
  assert.equal(valueOf(s, 'service_controller_update_loadbalancer_host_latency_seconds_bucket', { le: '1' }), 1, 'a memory update takes under a second');
  assert.equal(valueOf(s, 'service_controller_nodesync_error_total'), 0);
  assert.deepEqual(cloud.balancers.get(`metrics-${created.metadata.uid}`), ['lb-node-a', 'lb-node-b', 'lb-node-c']);

  // The cloud refuses the next update: an error counted (and retried, each attempt a sync).
  cloud.failUpdates = true;
  await setReady('lb-node-c', 'False');
  s = await until('a node sync error', (s) => (valueOf(s, 'service_controller_nodesync_error_total')! >= 1 ? undefined : 'no error yet'));
  const attempts = valueOf(s, 'service_controller_loadbalancer_sync_total')!;
  assert.ok(attempts >= 2, `sync_total ${attempts}`);
  assert.equal(valueOf(s, 'service_controller_nodesync_error_total'), attempts - 1, 'every attempt after the first failed');
  assert.equal(count(s, 'service_controller_update_loadbalancer_host_latency_seconds'), attempts);

  // The cloud takes updates again: the retry succeeds and no more errors are counted.
  cloud.failUpdates = false;
  await eventually('the balancer on a and b', async () => JSON.stringify(cloud.balancers.get(`metrics-${created.metadata.uid}`)) === JSON.stringify(['lb-node-a', 'lb-node-b']), 20_000);
  s = await metrics();
  assert.equal(valueOf(s, 'service_controller_loadbalancer_sync_total'), valueOf(s, 'service_controller_nodesync_error_total')! + 2);
});
