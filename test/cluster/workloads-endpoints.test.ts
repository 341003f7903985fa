// The endpoint controller against the embedded API server with the scheduler/kubelet stand-ins:
// a Service's Endpoints list its ready pods under addresses and the others under
// notReadyAddresses, resolve named target ports per pod (packing pods with the same ports into one
// subset), follow pods coming and going, mark headless Services, leave selector-less Services
// alone, and go with their Service; `kubectl get endpoints` shows them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { loadKubeConfig } from '../../src/kube/index.js';
import type { EndpointAddress } from '../../src/cluster/workloads/endpoints.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { ENDPOINT_SLICES, ENDPOINTS, PODS, SERVICES } from '../../src/cluster/workloads/resources.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';

const pod = (name: string, ports: api.Container['ports'] = [{ name: 'http', containerPort: 8080 }]): api.Pod => ({
  metadata: { name, namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'echo', ports }] },
});

test("a Service's Endpoints follow its pods: ready and not ready, named ports, headless, deleted with it", async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const standIns = startStandIns(client, { holdReady: (p) => p.metadata.name === 'web-warming' });
  try {
    await createNode(client, 'node-1');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['endpoint'], leaderElection: false });
    for (const name of ['web-a', 'web-b', 'web-warming']) await client.create(PODS, pod(name));
    await client.create(PODS, pod('web-noport', [])); // serves only the numbered port
    await client.create(SERVICES, {
      metadata: { name: 'web', namespace: 'default', labels: { tier: 'front' } },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'metrics', port: 9090, targetPort: 9090 }] },
    });
    await client.create(SERVICES, { metadata: { name: 'manual', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    await client.create(SERVICES, { metadata: { name: 'web-headless', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ name: 'metrics', port: 9090 }] } });

    const podsByName = async () => Object.fromEntries(((await client.list(PODS, 'default')).items).map((p) => [p.metadata.name, p]));
    const ep = await eventually('the endpoints of web', async () => {
      const e = await client.read(ENDPOINTS, 'web', 'default');
      const count = (e?.subsets ?? []).reduce((n: number, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
      return count === 4 && e;
    });
    const byName = await podsByName();
    const addr = (name: string) => ({ ip: byName[name].status!.podIP!, nodeName: 'node-1', targetRef: { kind: 'Pod', namespace: 'default', name, uid: byName[name].metadata.uid } });
    const sortByIp = (list: EndpointAddress[]) => list.sort((a, b) => (a.ip < b.ip ? -1 : 1));
    assert.deepEqual(ep.metadata.labels, { tier: 'front' });
    assert.deepEqual(ep.subsets, [
      { addresses: sortByIp([addr('web-a'), addr('web-b')]), notReadyAddresses: [addr('web-warming')], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'metrics', port: 9090, protocol: 'TCP' }] },
      { addresses: [addr('web-noport')], ports: [{ name: 'metrics', port: 9090, protocol: 'TCP' }] },
    ]);
    const table = await api.kubectlOk(['get', 'endpoints', 'web']);
    assert.match(table, new RegExp(`web\\s+\\S*${byName['web-a'].status!.podIP!.replace(/\./g, '\\.')}:`));

    const headless = await eventually('headless endpoints', async () => client.read(ENDPOINTS, 'web-headless', 'default'));
    assert.deepEqual(headless.metadata.labels, { 'service.kubernetes.io/headless': '' });
    assert.equal(await client.read(ENDPOINTS, 'manual', 'default'), undefined, 'a Service without a selector gets no Endpoints from the controller');

    await client.delete(PODS, 'web-a', 'default');
    await eventually('web-a gone from the endpoints', async () => {
      const e = await client.get(ENDPOINTS, 'web', 'default');
      return !JSON.stringify(e.subsets).includes('"web-a"');
    });
    await client.delete(SERVICES, 'web', 'default');
    await eventually('the endpoints deleted with the Service', async () => (await client.read(ENDPOINTS, 'web', 'default')) === undefined);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});

test("a Service's EndpointSlices: kube's conditions, zones, ports, reuse, at most 100 endpoints each, gone with the Service", async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const standIns = startStandIns(client, { holdReady: (p) => p.metadata.name === 'web-warming', readyAfterMs: 10 });
  try {
    await createNode(client, 'node-1', { labels: { 'topology.kubernetes.io/zone': 'local-a' } });
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['endpointslice'], leaderElection: false });
    const service = await client.create(SERVICES, { metadata: { name: 'web', namespace: 'default', labels: { tier: 'front' } }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });
    for (const name of ['web-a', 'web-warming']) await client.create(PODS, pod(name));
    const slicesOf = async () => ((await client.list(ENDPOINT_SLICES, 'default', { labelSelector: 'kubernetes.io/service-name=web' })).items);
    const [slice] = await eventually('one slice with two endpoints', async () => {
      const list = await slicesOf();
      return list.length === 1 && list[0].endpoints?.length === 2 && list;
    });
    assert.match(slice.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(slice.metadata.labels, { tier: 'front', 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    assert.deepEqual(slice.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    assert.equal(slice.addressType, 'IPv4');
    assert.deepEqual(slice.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const byPod = Object.fromEntries(slice.endpoints.map((e) => [e.targetRef!.name, e]));
    assert.deepEqual(byPod['web-a'].conditions, { ready: true, serving: true, terminating: false });
    assert.deepEqual(byPod['web-warming'].conditions, { ready: false, serving: false, terminating: false });
    assert.equal(byPod['web-a'].zone, 'local-a');
    assert.equal(byPod['web-a'].nodeName, 'node-1');

    // 150 more pods: two slices, the first one kept (same name), none over 100.
    for (let i = 0; i < 150; i++) await client.create(PODS, pod(`web-${i}`));
    const two = await eventually('152 endpoints in two slices', async () => {
      const list = await slicesOf();
      return list.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0) === 152 && list.every((s) => s.endpoints.every((e) => e.addresses.length === 1)) && list;
    }, 60_000);
    assert.equal(two.length, 2);
    assert.ok(two.every((s) => s.endpoints.length <= 100));
    assert.ok(two.some((s) => s.metadata.name === slice.metadata.name), 'the existing slice was reused');

    await client.delete(SERVICES, 'web', 'default');
    await eventually('slices gone with the Service', async () => (await slicesOf()).length === 0);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});
