// test: shared-addresses (binds the local cloud's machine and balancer addresses; run alone)
// A local cloud without haproxy carries its balancers on its Node proxy: the cloud's API says so
// for each balancer (engine: node, with the reason), and the cloud-controller-manager tells the
// Service, with a Warning event LoadBalancerEngineFallback beside Ensured, while traffic flows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { KubeClient, Obj } from '../src/kube/index.js';
import { LOAD_BALANCER_ENGINE_FALLBACK } from '../src/ccm-operator/local-provider.js';
import { NODES, SERVICES } from '../src/ccm-operator/context.js';
import { eventually } from './helpers/eventually.js';
import { isUp, waitForInstance, type CloudFixture } from './cloud/cloud-fixture.js';
import { EVENTS, httpGet, startCcmFixture, type CcmFixture } from './ccm-operator/ccm-fixture.js';

let f: CcmFixture;
let cloud: CloudFixture;
let client: KubeClient;

before(async () => {
  f = await startCcmFixture({ clusterPrefix: 'fallback', cloud: { haproxyBinary: join('/nonexistent', 'haproxy') } });
  ({ cloud, client } = f);
  await f.registerNode(await waitForInstance(cloud.client, (await cloud.client.createInstance({ name: 'fallback-node' })).id, 'up', isUp));
  await f.startCcm();
});

after(() => f.close());

test('the cloud on its Node proxy: the API names the engine and why, the Service gets a LoadBalancerEngineFallback warning, traffic flows', { timeout: 60_000 }, async () => {
  assert.equal(cloud.service.proxies.name, 'node');
  await eventually('the node initialised', async () => ((await client.get(NODES, 'fallback-node')).spec?.providerID ? true : undefined), 15_000);
  const created = await client.create(SERVICES, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port: 18090, targetPort: 8080 }] },
  });
  const [instance] = await cloud.client.listInstances();
  await f.serveNodePort('served', instance.privateIp, created.spec!.ports![0].nodePort as number);
  const svc = await eventually('ingress IP', async () => {
    const s = await client.get(SERVICES, 'web', 'default');
    return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
  }, 15_000);
  const [lb] = await f.balancers();
  assert.equal(lb.engine?.name, 'node');
  assert.match(lb.engine?.reason ?? '', /haproxy is not installed/);
  const warning = await eventually('the fallback warning', async () => (await client.list(EVENTS, 'default')).items.find((e: Obj) => e.involvedObject?.name === 'web' && e.reason === LOAD_BALANCER_ENGINE_FALLBACK));
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message ?? '', /^the local cloud carries this load balancer on its Node proxy: haproxy is not installed/);
  assert.equal(await httpGet(svc.status!.loadBalancer!.ingress![0].ip as string, 18090), 'served');
});
