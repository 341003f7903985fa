// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The local cloud's load balancer proxies (src/cloud/load-balancer-proxy.ts) on their own: a
// stored balancer listens on its VIP, spreads connections round-robin over its targets' private
// IPs on the target port, skips a target that refuses, comes back after the cloud restarts (it is
// the cloud's, not the CCM's), and stops listening when deleted; and splices each connection with
// half-closes, so neither an ended request nor a backend closing after its answer loses bytes; with
// a health check, only targets passing it get traffic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { selfSignedServing } from '../src/cluster/node-agent/certificates.js';
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
      const server = createServer((c) => c.on('error', () => undefined).end(t.name));
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

/** Sends `request` (ending the write side when `halfClose`), reads (pausing `readDelayMs` after each chunk) until the proxy closes; the bytes read. */
function transfer(host: string, port: number, request: string, options: { halfClose: boolean; readDelayMs?: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      // A slow reader: the proxy has to hold the answer's tail while the backend is already gone.
      if (options.readDelayMs) {
        s.pause();
        setTimeout(() => s.resume(), options.readDelayMs);
      }
    });
    s.on('end', () => s.end());
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
    s.setTimeout(10_000, () => s.destroy(new Error('no progress for 10 s')));
    s.on('connect', () => {
      if (options.halfClose) s.end(request);
      else s.write(request);
    });
  });
}

test('connections are spliced with half-closes: an ended request still gets its answer, a backend closing after a large answer has every byte delivered', { timeout: 30_000 }, async () => {
  const cloud = await startCloud();
  const big = randomBytes(2 * 1024 * 1024);
  const port = 30000 + Math.floor(Math.random() * 2000);
  let server: Server | undefined;
  try {
    const target = await waitForInstance(cloud.client, (await cloud.client.createInstance({ name: 'px-half' })).id, 'up', isUp);
    // "big": the whole answer at once, then the backend closes; anything else: answered once the client has ended its request.
    server = createServer({ allowHalfOpen: true }, (c) => {
      let request = '';
      c.on('data', (d) => {
        request += d;
        if (request === 'big') c.end(big);
      });
      c.on('end', () => {
        if (request !== 'big') c.end(`got ${request}`);
      });
    });
    await new Promise<void>((resolve) => server!.listen(port, target.privateIp, () => resolve()));
    const lb = await cloud.client.ensureLoadBalancer('half-close-lb', { ports: [{ protocol: 'TCP', port: 18201, targetPort: port }], targets: [target.id], sourceRanges: [] });
    const answer = await eventually('the balancer listening', () => transfer(lb.address, 18201, 'ping', { halfClose: true }).catch(() => undefined));
    assert.equal(answer.toString(), 'got ping', 'a half-closed request is answered');
    const received = await transfer(lb.address, 18201, 'big', { halfClose: false, readDelayMs: 20 });
    assert.equal(received.length, big.length, 'every byte of the answer arrives');
    assert.ok(received.equals(big), 'the same bytes');
  } finally {
    server?.close();
    await cloud.close();
  }
});

test('a balancer with a health check sends only to targets answering 200 there, following them as they change, and fails open when none does', { timeout: 30_000 }, async () => {
  const cloud = await startCloud();
  const servers: Array<Server | HttpServer> = [];
  try {
    const targets = [];
    for (const name of ['hc-a', 'hc-b']) targets.push(await waitForInstance(cloud.client, (await cloud.client.createInstance({ name })).id, 'up', isUp));
    const port = 30000 + Math.floor(Math.random() * 2000);
    const healthPort = port + 2000;
    // Each target: its name on the traffic port; /healthz answering as kube-proxy does for a node with (200) or without (503) a local endpoint.
    const local = new Map(targets.map((t) => [t.name, true]));
    local.set('hc-b', false);
    for (const t of targets) {
      // A target marked down has its connections shut by the balancer: a reset while answering is expected here.
      const traffic = createServer((c) => c.on('error', () => undefined).end(t.name));
      await new Promise<void>((resolve) => traffic.listen(port, t.privateIp, () => resolve()));
      const health = createHttpServer((req, res) => {
        const ok = req.url === '/healthz' && local.get(t.name);
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ localEndpoints: ok ? 1 : 0 }));
      });
      await new Promise<void>((resolve) => health.listen(healthPort, t.privateIp, () => resolve()));
      servers.push(traffic, health);
    }
    await assert.rejects(
      cloud.client.ensureLoadBalancer('hc-lb', { ports: [{ protocol: 'TCP', port: 18202, targetPort: port }], targets: targets.map((t) => t.id), sourceRanges: [], healthCheck: { port: 0, path: 'healthz' } }),
      /healthCheck.port must be an integer from 1 to 65535.*healthCheck.path must be a path starting with \//s,
    );
    const lb = await cloud.client.ensureLoadBalancer('hc-lb', { ports: [{ protocol: 'TCP', port: 18202, targetPort: port }], targets: targets.map((t) => t.id), sourceRanges: [], healthCheck: { port: healthPort, path: '/healthz' } });
    assert.deepEqual(lb.healthCheck, { port: healthPort, path: '/healthz' });
    const answers = async (n: number) => { const out = []; for (let i = 0; i < n; i++) out.push(await exchange(lb.address, 18202)); return out.join(); };
    await eventually('only the healthy target answers', async () => (await answers(4)) === 'hc-a,hc-a,hc-a,hc-a', 10_000);

    local.set('hc-a', false);
    local.set('hc-b', true);
    await eventually('traffic follows the health checks', async () => (await answers(4)) === 'hc-b,hc-b,hc-b,hc-b', 10_000);

    local.set('hc-b', false);
    await eventually('no healthy target: the balancer fails open, to every target', async () => [...(await answers(4)).split(',')].sort().join() === 'hc-a,hc-a,hc-b,hc-b', 10_000);

    // HTTPS, as an API server's /readyz is checked (the certificate, self-signed here, is not verified).
    const readyPort = healthPort + 1;
    const ready = new Map(targets.map((t) => [t.name, t.name === 'hc-b']));
    for (const t of targets) {
      const { certPem, keyPem } = await selfSignedServing(t.name, [t.privateIp]);
      const readyz = createHttpsServer({ cert: certPem, key: keyPem }, (req, res) => res.writeHead(req.url === '/readyz' && ready.get(t.name) ? 200 : 500).end());
      await new Promise<void>((resolve) => readyz.listen(readyPort, t.privateIp, () => resolve()));
      servers.push(readyz);
    }
    await assert.rejects(
      cloud.client.ensureLoadBalancer('hc-lb', { ports: [{ protocol: 'TCP', port: 18202, targetPort: port }], targets: targets.map((t) => t.id), sourceRanges: [], healthCheck: { port: readyPort, path: '/readyz', protocol: 'TCP' as 'HTTPS' } }),
      /healthCheck.protocol must be HTTP or HTTPS/,
    );
    const https = await cloud.client.ensureLoadBalancer('hc-lb', { ports: [{ protocol: 'TCP', port: 18202, targetPort: port }], targets: targets.map((t) => t.id), sourceRanges: [], healthCheck: { port: readyPort, path: '/readyz', protocol: 'HTTPS' } });
    assert.deepEqual(https.healthCheck, { port: readyPort, path: '/readyz', protocol: 'HTTPS' });
    await eventually('an HTTPS check: only the ready target answers', async () => (await answers(4)) === 'hc-b,hc-b,hc-b,hc-b', 10_000);
  } finally {
    for (const s of servers) s.close();
    await cloud.close();
  }
});
