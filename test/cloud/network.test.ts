// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// Load balancers and routes in the local cloud: stored, listed, updated and deleted through the
// HTTP API, with addresses that stay put and requests refused whole when anything is wrong.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloudError } from '../../src/cloud/errors.js';
import { startCloud, waitForBoot, type CloudFixture } from './cloud-fixture.js';

let f: CloudFixture;
let nodes: string[];
before(async () => {
  f = await startCloud();
  nodes = [];
  for (const name of ['lb-node-a', 'lb-node-b']) nodes.push((await waitForBoot(f.client, (await f.client.createInstance({ name })).id)).id);
});
after(async () => { await f.close(); });

const rejects = (p: Promise<unknown>, status: number, message: RegExp) =>
  assert.rejects(p, (e: CloudError) => { assert.equal(e.status, status); assert.match(e.message, message); return true; });

test('a load balancer is created with a stable address, updated in place, and deleted', async () => {
  const spec = { ports: [{ name: 'http', protocol: 'TCP' as const, port: 80, targetPort: 30080 }], targets: [nodes[0]], sourceRanges: [] };
  const created = await f.client.ensureLoadBalancer('default-echo', spec);
  assert.match(created.address, /^127\.0\.200\.\d+$/);
  const updated = await f.client.ensureLoadBalancer('default-echo', { ...spec, targets: nodes, ports: [...spec.ports, { protocol: 'TCP', port: 443, targetPort: 30443 }] });
  assert.equal(updated.address, created.address, 'the address never changes');
  assert.equal(updated.createdAt, created.createdAt);
  assert.deepEqual(updated.targets, nodes);
  assert.deepEqual((await f.client.listLoadBalancers()).map((lb) => lb.name), ['default-echo']);
  await f.client.deleteLoadBalancer('default-echo');
  await rejects(f.client.deleteLoadBalancer('default-echo'), 404, /load balancer "default-echo" does not exist/);
  // The same name gets the same address again: it is derived from the name.
  assert.equal((await f.client.ensureLoadBalancer('default-echo', spec)).address, created.address);
});

test('a requested address is honoured, and one held by another balancer refused', async () => {
  const spec = { ports: [{ protocol: 'TCP' as const, port: 8080, targetPort: 31000 }], targets: [], sourceRanges: ['10.0.0.0/8'] };
  const lb = await f.client.ensureLoadBalancer('pinned', { ...spec, address: '127.0.200.77' });
  assert.equal(lb.address, '127.0.200.77');
  await rejects(f.client.ensureLoadBalancer('other', { ...spec, address: '127.0.200.77' }), 409, /address 127.0.200.77 is held by load balancer "pinned"/);
  await rejects(f.client.ensureLoadBalancer('pinned', { ...spec, address: '127.0.200.78' }), 409, /has address 127.0.200.77/);
});

test('bad load balancers are refused whole, naming each problem', async () => {
  const before = await f.client.listLoadBalancers();
  await rejects(f.client.request('PUT', '/v1/loadbalancers/bad', { ports: [{ port: 0, targetPort: 70000 }, { port: 80, targetPort: 1, protocol: 'UDP' }], sourceRanges: ['10.0.0.1/8'], address: '10.0.0.1' }), 400,
    /ports\[0\].port must be an integer.*ports\[0\].targetPort.*ports\[1\].protocol "UDP" is not supported.*sourceRanges\[0\] "10.0.0.1\/8".*address "10.0.0.1" is not in 127.0.200.0\/24/);
  await rejects(f.client.request('PUT', '/v1/loadbalancers/bad', { ports: [] }), 400, /ports must be a non-empty list/);
  await rejects(f.client.request('PUT', '/v1/loadbalancers/bad', { ports: [{ port: 80, targetPort: 80 }], targets: ['i-00000000000000000'] }), 400, /targets: instance i-00000000000000000 does not exist/);
  assert.deepEqual(await f.client.listLoadBalancers(), before);
});

test('routes: created, listed, refused when overlapping or aimed at no instance, deleted', async () => {
  const route = await f.client.createRoute({ name: 'node-a-pods', destinationCidr: '127.1.1.0/24', targetInstance: nodes[0] });
  assert.equal(route.targetInstance, nodes[0]);
  await rejects(f.client.createRoute({ name: 'overlap', destinationCidr: '127.1.0.0/16', targetInstance: nodes[1] }), 409, /overlaps route "node-a-pods"/);
  await rejects(f.client.createRoute({ name: 'node-a-pods', destinationCidr: '127.1.9.0/24', targetInstance: nodes[1] }), 409, /route "node-a-pods" already exists/);
  await rejects(f.client.createRoute({ name: 'ghost', destinationCidr: '127.1.2.0/24', targetInstance: 'i-00000000000000000' }), 400, /does not exist/);
  await rejects(f.client.request('POST', '/v1/routes', { name: 'bad', destinationCidr: '127.1.2.1/24' }), 400, /destinationCidr "127.1.2.1\/24" is not an IPv4 network.*targetInstance is required/);
  await f.client.createRoute({ name: 'node-b-pods', destinationCidr: '127.1.2.0/24', targetInstance: nodes[1] });
  assert.deepEqual((await f.client.listRoutes()).map((r) => `${r.name} ${r.destinationCidr}`), ['node-a-pods 127.1.1.0/24', 'node-b-pods 127.1.2.0/24']);
  await f.client.deleteRoute('node-a-pods');
  await rejects(f.client.request('GET', '/v1/routes/node-a-pods'), 404, /route "node-a-pods" does not exist/);
});

test('load balancers and routes survive a restart', async () => {
  const lbs = await f.client.listLoadBalancers();
  const routes = await f.client.listRoutes();
  assert.ok(lbs.length > 0 && routes.length > 0);
  await f.restart();
  assert.deepEqual(await f.client.listLoadBalancers(), lbs);
  assert.deepEqual(await f.client.listRoutes(), routes);
});
