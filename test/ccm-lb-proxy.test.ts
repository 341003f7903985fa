// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The local cloud's load balancer proxies (src/cloud/load-balancer-proxy.ts) on their own: a
// stored balancer listens on its VIP, spreads connections round-robin over its targets' private
// IPs on the target port, skips a target that refuses, comes back after the cloud restarts (it is
// the cloud's, not the CCM's), and stops listening when deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { isUp, startCloud, waitForInstance } from './cloud/cloud-fixture.js';
import { eventually } from './helpers/eventually.js';

/** One TCP exchange: connect, read until the server closes; the error code when refused/reset. */
function exchange(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    let data = '';
    s.on('data', (d) => (data += d));
    s.on('close', () => resolve(data || 'closed'));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

test('a stored balancer carries TCP round-robin, skips refusing targets, survives a cloud restart, stops when deleted', { timeout: 60_000 }, async () => {
  const cloud = await startCloud();
  const servers: Server[] = [];
  try {
    const targets = [];
    for (const name of ['px-a', 'px-b']) targets.push(await waitForInstance(cloud.client, (await cloud.client.createInstance({ name })).id, 'up', isUp));
    const port = 30000 + Math.floor(Math.random() * 2000);
    for (const t of targets) {
      const server = createServer((c) => c.end(t.name));
      await new Promise<void>((resolve) => server.listen(port, t.privateIp, () => resolve()));
      servers.push(server);
    }
    const lb = await cloud.client.ensureLoadBalancer('proxy-test-lb', { ports: [{ protocol: 'TCP', port: 18200, targetPort: port }], targets: targets.map((t) => t.id), sourceRanges: [] });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await exchange(lb.address, 18200));
    assert.deepEqual([...answers].sort(), ['px-a', 'px-a', 'px-b', 'px-b'], 'round-robin over both targets');

    servers[0].close();
    for (let i = 0; i < 3; i++) assert.equal(await exchange(lb.address, 18200), 'px-b', 'a refusing target is skipped');

    await cloud.restart();
    assert.equal(await exchange(lb.address, 18200), 'px-b', 'the balancer listens again after the cloud restarts');

    await cloud.client.ensureLoadBalancer('proxy-test-lb', { ports: [{ protocol: 'TCP', port: 18200, targetPort: port }], targets: targets.map((t) => t.id), sourceRanges: ['10.0.0.0/8'] });
    assert.equal(await exchange(lb.address, 18200), 'closed', 'a client outside the source ranges is cut off');

    await cloud.client.deleteLoadBalancer('proxy-test-lb');
    await eventually('nothing listens on the VIP', async () => (await exchange(lb.address, 18200)) === 'ECONNREFUSED');
  } finally {
    for (const s of servers) s.close();
    await cloud.close();
  }
});
