// test: shared-addresses (binds the local cloud's machine and balancer addresses; run alone)
// A local cloud without haproxy carries its balancers on its Node proxy: the cloud's API says so
// for each balancer (engine: node, with the reason), and the cloud-controller-manager tells the
// Service, with a Warning event LoadBalancerEngineFallback beside Ensured, while traffic flows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createServer, get, type Server } from 'node:http';
import { rootCredentialPath } from '../src/cloud/client.js';
import type { ResourceRef } from '../src/kube/client.js';
import { Manager, type Obj, loadKubeConfig, KubeClient } from '../src/kube/index.js';
import { addCloudControllers } from '../src/ccm-operator/ccm.js';
import { LOAD_BALANCER_ENGINE_FALLBACK } from '../src/ccm-operator/local-provider.js';
import { NODES, SERVICES, UNINITIALIZED_TAINT } from '../src/ccm-operator/context.js';
import { startTestApiServer, type TestApiServer } from './helpers/apiserver.js';
import { eventually } from './helpers/eventually.js';
import { isUp, startCloud, waitForInstance, type CloudFixture } from './cloud/cloud-fixture.js';

const EVENTS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'events', namespaced: true };
const CLUSTER = `fallback${randomBytes(3).toString('hex')}`;

let api: TestApiServer;
let cloud: CloudFixture;
let client: KubeClient;
const stop = new AbortController();
let backend: Server | undefined;

before(async () => {
  api = await startTestApiServer();
  cloud = await startCloud({ haproxyBinary: join('/nonexistent', 'haproxy') });
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const instance = await waitForInstance(cloud.client, (await cloud.client.createInstance({ name: 'fallback-node' })).id, 'up', isUp);
  await client.create(NODES, { metadata: { name: instance.name }, spec: { taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.mergePatch(NODES, instance.name, undefined, { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastHeartbeatTime: now, lastTransitionTime: now }] } }, 'status');
  const manager = new Manager({ name: 'cloud-controller-manager', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
  await addCloudControllers(manager, {
    cloudProvider: 'local', cloudConfig: `[Global]\nurl = ${cloud.service.url}\n`, cloudCredentialsFile: rootCredentialPath(cloud.dataDir), clusterName: CLUSTER, clusterCidr: '127.1.0.0/16',
    periods: { nodeMonitorMs: 300, routesMs: 500, nodeStatusMs: 1000 },
  });
  void manager.start(stop.signal);
});

after(async () => {
  stop.abort();
  backend?.closeAllConnections();
  backend?.close();
  await cloud.close();
  await api.stop();
});

test('the cloud on its Node proxy: the API names the engine and why, the Service gets a LoadBalancerEngineFallback warning, traffic flows', { timeout: 60_000 }, async () => {
  assert.equal(cloud.service.proxies.name, 'node');
  await eventually('the node initialised', async () => ((await client.get(NODES, 'fallback-node')).spec?.providerID ? true : undefined), 15_000);
  const created = await client.create(SERVICES, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port: 18090, targetPort: 8080 }] },
  });
  const [instance] = await cloud.client.listInstances();
  backend = createServer((_req, res) => res.end('served'));
  await new Promise<void>((resolve) => backend!.listen(created.spec!.ports![0].nodePort as number, instance.privateIp, () => resolve()));
  const svc = await eventually('ingress IP', async () => {
    const s = await client.get(SERVICES, 'web', 'default');
    return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
  }, 15_000);
  const [lb] = (await cloud.client.listLoadBalancers()).filter((b) => b.name.startsWith(`${CLUSTER}-`));
  assert.equal(lb.engine?.name, 'node');
  assert.match(lb.engine?.reason ?? '', /haproxy is not installed/);
  const warning = await eventually('the fallback warning', async () => (await client.list(EVENTS, 'default')).items.find((e: Obj) => e.involvedObject?.name === 'web' && e.reason === LOAD_BALANCER_ENGINE_FALLBACK));
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message, /^the local cloud carries this load balancer on its Node proxy: haproxy is not installed/);
  const body = await new Promise<string>((resolve, reject) => get({ host: svc.status!.loadBalancer!.ingress![0].ip as string, port: 18090, path: '/', agent: false }, (res) => {
    let b = '';
    res.on('data', (d) => (b += d));
    res.on('end', () => resolve(b));
  }).on('error', reject));
  assert.equal(body, 'served');
});
