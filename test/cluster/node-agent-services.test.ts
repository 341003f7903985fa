// test: shared-addresses (binds the local cloud's machine, pod, cluster IP and node port addresses; run alone)
// Services through the node agents' proxy, over real TCP, on the local cluster's loopback service
// network (127.30.0.0/16, as `bosun start` runs the API server): a cluster IP reaches a ready
// bosun.local/echo pod, a connection with no ready endpoint is closed, a deleted Service's
// listener goes away, and the one listener all nodes on the host want moves to another node within
// seconds when the node holding it stops. externalTrafficPolicy Local: the API server's
// healthCheckNodePort answers 200 with the local endpoint count on the pod's node and 503 on the
// others, and a NodePort sends only to the node's own endpoints.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRef } from '../../src/kube/client.js';
import { request } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { Instance } from '../../src/cloud/types.js';
import type { Obj } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { bootstrapUserData, bootWorker, startNodeCluster, type NodeCluster } from './node-agent-fixture.js';

const PODS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const SERVICES: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'services', namespaced: true };

let c: NodeCluster;
/** The echo pod's node, booted last: the others hold the cluster IPs first. */
let podNode: Instance;
let others: Instance[];

/** What a client gets from host:port: an HTTP answer, a connection closed without one, or refused. */
type Outcome = { answer: { status: number; body: string } } | 'closed' | 'refused';

function exchange(host: string, port: number, path = '/'): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ answer: { status: res.statusCode ?? 0, body } }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED') resolve('refused');
      else if (e.code === 'ECONNRESET' || e.message === 'socket hang up') resolve('closed');
      else reject(e);
    });
    req.end();
  });
}

const answered = (o: Outcome) => (typeof o === 'object' ? o.answer : undefined);

before(async () => {
  c = await startNodeCluster();
  others = [await bootWorker(c, 'worker-s1', await bootstrapUserData(c)), await bootWorker(c, 'worker-s2', await bootstrapUserData(c))];
});
after(async () => {
  await c?.close();
});

async function service(name: string, spec: Obj): Promise<Obj> {
  return c.kube.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec });
}

test('the kubernetes Service and every cluster IP come from the loopback service network; the API answers on https://127.30.0.1 through the nodes', async () => {
  const kubernetes = await c.kube.read(SERVICES, 'kubernetes', 'default');
  assert.equal(kubernetes?.spec.clusterIP, '127.30.0.1');
  // Through a node's proxy to the API server, whose certificate names the cluster IP.
  const version = await eventually('the API through the kubernetes Service', () => new Promise<Obj>((resolve, reject) => {
    httpsGet({ host: '127.30.0.1', port: 443, path: '/version', ca: c.api.caPem, headers: { authorization: `Bearer ${c.api.token}` }, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d)).on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${res.statusCode} ${body}`))));
    }).on('error', reject);
  }), 15_000);
  assert.match(version.gitVersion, /^v1\./);
  const svc = await service('plain', { selector: { app: 'nothing' }, ports: [{ port: 8081 }] });
  assert.match(svc.spec.clusterIP, /^127\.30\.\d+\.\d+$/);
  await c.kube.delete(SERVICES, 'plain', 'default');
});

test('a cluster IP reaches a ready echo pod over TCP; with no ready endpoint the connection is closed; a deleted Service is refused; the listener moves within seconds when its node stops', { timeout: 120_000 }, async (t) => {
  // The Service first: the nodes up now hold its cluster IP before the pod's node boots.
  const svc = await service('echo', { selector: { app: 'echo' }, ports: [{ name: 'http', port: 8081, targetPort: 'http' }] });
  const ip: string = svc.spec.clusterIP;
  await eventually('the cluster IP listened on (no endpoint yet: closed)', async () => (await exchange(ip, 8081)) === 'closed');

  podNode = await bootWorker(c, 'worker-s3', await bootstrapUserData(c));
  await c.kube.create(PODS, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'echo-1', namespace: 'default', labels: { app: 'echo' } },
    spec: { nodeName: 'worker-s3', terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'bosun.local/echo', ports: [{ name: 'http', containerPort: 9090 }] }] },
  });
  const viaClusterIP = await eventually('the echo pod answers through the cluster IP', async () => answered(await exchange(ip, 8081, '/via-cluster-ip')), 30_000);
  assert.deepEqual(viaClusterIP, { status: 200, body: 'echo-1\n' });

  // No ready endpoint (the selector matches nothing): the proxy closes the connection.
  await c.kube.mergePatch(SERVICES, 'echo', 'default', { spec: { selector: { app: 'none' } } });
  await eventually('no endpoint: the connection is closed', async () => (await exchange(ip, 8081)) === 'closed', 15_000);
  await c.kube.mergePatch(SERVICES, 'echo', 'default', { spec: { selector: { app: 'echo' } } });
  await eventually('the endpoint back', async () => answered(await exchange(ip, 8081)), 15_000);

  // The pod's node booted last, so one of the others holds the listener: stop them one by one;
  // after each, traffic flows again within seconds (the second stop leaves only the pod's node).
  for (const machine of others) {
    await c.client.operate('stop', machine.id);
    await eventually(`${machine.name} stopped`, async () => (await c.client.getInstance(machine.id)).state === 'stopped', 30_000);
    const stopped = Date.now();
    const again = await eventually(`the cluster IP served again after ${machine.name} stopped`, async () => answered(await exchange(ip, 8081, '/after-stop')), { timeoutMs: 15_000, intervalMs: 100 });
    assert.deepEqual(again, { status: 200, body: 'echo-1\n' });
    const tookMs = Date.now() - stopped;
    assert.ok(tookMs < 6_000, `served again ${tookMs} ms after ${machine.name} stopped`);
    t.diagnostic(`served again ${tookMs} ms after ${machine.name} stopped`);
  }

  await c.kube.delete(SERVICES, 'echo', 'default');
  await eventually('the deleted Service\'s cluster IP refused', async () => (await exchange(ip, 8081)) === 'refused', 15_000);
  for (const machine of others) await c.client.operate('start', machine.id);
  for (const machine of others) await eventually(`${machine.name} up again`, async () => (await c.client.getInstance(machine.id)).machine.phase === 'Up', 30_000);
});

test('externalTrafficPolicy Local: the healthCheckNodePort answers 200 with the local endpoint count on the pod\'s node, 503 on the others; NodePorts send only to local endpoints', { timeout: 60_000 }, async () => {
  const svc = await service('local', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', selector: { app: 'echo' }, ports: [{ name: 'http', port: 8082, targetPort: 'http' }] });
  const healthCheck: number = svc.spec.healthCheckNodePort;
  const nodePort: number = svc.spec.ports[0].nodePort;
  assert.ok(healthCheck >= 30000 && healthCheck <= 32767, `the API server allocates a healthCheckNodePort (${healthCheck})`);
  const other = others[0];

  // (The port may answer before the node has the Service's endpoints: 503 with none, then 200.)
  let last: { status: number; body: string } | undefined;
  const onPodNode = await eventually('the health check on the pod\'s node', async () => {
    last = answered(await exchange(podNode.privateIp, healthCheck, '/healthz'));
    return last?.status === 200 ? last : undefined;
  }, 15_000).catch(() => assert.fail(`the health check on the pod's node: ${JSON.stringify(last)}`));
  assert.deepEqual(JSON.parse(onPodNode.body), { service: { namespace: 'default', name: 'local' }, localEndpoints: 1, serviceProxyHealthy: true });
  const elsewhere = await eventually('the health check on another node', async () => answered(await exchange(other.privateIp, healthCheck, '/healthz')), 15_000);
  assert.equal(elsewhere.status, 503);
  assert.equal(JSON.parse(elsewhere.body).localEndpoints, 0);

  assert.deepEqual(await eventually('the NodePort on the pod\'s node', async () => answered(await exchange(podNode.privateIp, nodePort)), 15_000), { status: 200, body: 'echo-1\n' });
  assert.equal(await exchange(other.privateIp, nodePort), 'closed', 'no local endpoint: the NodePort sends nowhere');
  // Yet the cluster IP uses every endpoint, whatever the external policy.
  assert.deepEqual(answered(await exchange(svc.spec.clusterIP, 8082)), { status: 200, body: 'echo-1\n' });

  // Policy Cluster: every node's NodePort reaches the pod, and the health check port is gone.
  await c.kube.mergePatch(SERVICES, 'local', 'default', { spec: { externalTrafficPolicy: 'Cluster' } });
  assert.deepEqual(await eventually('the NodePort on another node, policy Cluster', async () => answered(await exchange(other.privateIp, nodePort)), 15_000), { status: 200, body: 'echo-1\n' });
  await eventually('the health check port closed', async () => (await exchange(podNode.privateIp, healthCheck)) === 'refused', 15_000);
  await c.kube.delete(SERVICES, 'local', 'default');
});
