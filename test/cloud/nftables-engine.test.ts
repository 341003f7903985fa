// test: shared-addresses (changes the network namespace's nftables rules; as root the runner gives it a namespace of its own)
// The local cloud's load balancers in the kernel (src/cloud/nftables.ts): destination NAT spread
// round-robin over the targets, connections already open kept across every change (one atomic
// transaction per change), a target refusing connections or failing its health check taken out
// at its next check and the balancer failing open when none passes, clients outside the source
// ranges refused, the table replaced by the next cloud on the same data directory, written again
// when something else removed it, and deleted when the cloud stops; and the cloud service on it
// saying so through its API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/listen.js';
import { logger } from '../../src/common/log.js';
import { NftablesBalancers, findNft, nftablesUnusable, tableName } from '../../src/cloud/nftables.js';
import { CloudService } from '../../src/cloud/service.js';
import { CloudClient } from '../../src/cloud/client.js';
import type { LoadBalancer } from '../../src/cloud/types.js';
import { Conn, echo, healthCheckedTargets, once, spreadOf } from '../helpers/balancer-targets.js';
import { eventually } from '../helpers/eventually.js';

const NFT = findNft();
const probeDir = mkdtempSync(join(tmpdir(), 'bosun-nft-probe-'));
const unusable = nftablesUnusable(NFT, probeDir);
rmSync(probeDir, { recursive: true, force: true });
// Under CI (root, nftables installed by .ci/run) the engine must run: a failure, not a skip.
const skip = unusable && !process.env.CI ? unusable : false;

function balancer(name: string, address: string, port: number, targetPort: number, targets: string[], extra: Partial<LoadBalancer> = {}): LoadBalancer {
  const now = new Date().toISOString();
  return { name, address, ports: [{ protocol: 'TCP', port, targetPort }], targets, sourceRanges: [], createdAt: now, updatedAt: now, ...extra };
}

/** The namespace's table, as nft lists it ('' when there is none). */
function listTable(table: string): string {
  const r = spawnSync(NFT!, ['list', 'table', 'ip', table], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : '';
}


test('connections are spread round-robin; open ones survive every change; the next engine on the data directory replaces the table; closing deletes it', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-nft-'));
  const servers: Server[] = [];
  const engine = new NftablesBalancers({ binary: NFT!, dir, resolve: (id) => ({ 'i-a': '127.0.0.2', 'i-b': '127.0.0.3' })[id], log: logger('test') });
  let next: NftablesBalancers | undefined;
  try {
    const targetPort = await freePort('127.0.0.2');
    servers.push(await echo('a', '127.0.0.2', targetPort), await echo('b', '127.0.0.3', targetPort));
    const [p1, p2] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['i-a'])]);
    assert.deepEqual(engine.listening(), [`127.0.0.1:${p1}`]);
    const kept = new Conn('127.0.0.1', p1);
    assert.equal(await kept.target(), 'a');

    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['i-a', 'i-b'])]);
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push(await once('127.0.0.1', p1));
    assert.ok(order.every((t, i) => i === 0 || t !== order[i - 1]), `round-robin over both targets: ${order.join()}`);
    assert.equal(await kept.say('still'), 'a:still', 'the open connection kept across a change of targets');

    // A change while connections are being made: every one answered.
    let stop = false;
    const during: string[] = [];
    const hammer = (async () => { while (!stop) during.push(await once('127.0.0.1', p1)); })();
    for (let i = 0; i < 5; i++) await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['i-a', 'i-b']), balancer('two', '127.0.0.1', p2, targetPort, i % 2 ? ['i-a', 'i-b'] : ['i-b'])]);
    stop = true;
    await hammer;
    assert.ok(during.length > 0 && during.every((t) => t === 'a' || t === 'b'), `every connection during the changes answered: ${during.join()}`);
    assert.equal(await once('127.0.0.1', p2), 'b');
    assert.deepEqual(engine.listening(), [`127.0.0.1:${p1}`, `127.0.0.1:${p2}`].sort());

    // The instance of a target gone (terminated: no address): left out.
    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['i-a', 'i-gone'])]);
    assert.equal(await spreadOf('127.0.0.1', p1), 'a');

    // A cloud that crashed left its table; the next one on the same data directory replaces it.
    next = new NftablesBalancers({ binary: NFT!, dir, resolve: () => undefined, log: logger('test') });
    assert.equal(next.table, engine.table);
    await next.sync([balancer('other', '127.0.0.1', p2, targetPort, ['127.0.0.3'])]);
    const rules = listTable(tableName(dir));
    assert.ok(rules.includes(`tcp dport ${p2}`) && !rules.includes(`tcp dport ${p1}`), rules);
    assert.equal(await kept.say('after takeover'), 'a:after takeover', 'open connections survive the replacement');
    kept.socket.destroy();

    await next.closeAll();
    assert.equal(listTable(tableName(dir)), '', 'the table is deleted when the engine closes');
    assert.equal(await once('127.0.0.1', p2), 'ECONNREFUSED', 'nothing is balanced any more');
  } finally {
    await next?.closeAll();
    await engine.closeAll();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a target that refuses is taken out at its next check and back when it listens again; clients outside the source ranges are refused', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-nft-'));
  const engine = new NftablesBalancers({ binary: NFT!, dir, resolve: () => undefined, log: logger('test'), verifyIntervalMs: 0 });
  const targetPort = await freePort('127.0.0.2');
  const a = await echo('a', '127.0.0.2', targetPort);
  let b = await echo('b', '127.0.0.3', targetPort);
  try {
    const port = await freePort('127.0.0.1');
    await engine.sync([balancer('tcp', '127.0.0.1', port, targetPort, ['127.0.0.2', '127.0.0.3'])]);
    await eventually('both targets in use', async () => (await spreadOf('127.0.0.1', port)) === 'a,b', 10_000);
    await new Promise((r) => b.close(r));
    await eventually('the refusing target taken out', async () => (await spreadOf('127.0.0.1', port)) === 'a', 10_000);
    b = await echo('b', '127.0.0.3', targetPort);
    await eventually('back once it listens', async () => (await spreadOf('127.0.0.1', port)) === 'a,b', 10_000);

    const ranged = await freePort('127.0.0.1');
    await engine.sync([balancer('ranged', '127.0.0.1', ranged, targetPort, ['127.0.0.2'], { sourceRanges: ['127.0.0.9/32'] })]);
    assert.equal(await once('127.0.0.1', ranged, '127.0.0.9'), 'a', 'a client inside the ranges');
    assert.equal(await once('127.0.0.1', ranged, '127.0.0.8'), 'ECONNREFUSED', 'a client outside is refused');

    // The table removed behind the cloud's back (as a flushed ruleset would): the next sync writes it again.
    assert.equal(spawnSync(NFT!, ['delete', 'table', 'ip', engine.table]).status, 0);
    assert.equal(listTable(engine.table), '');
    await engine.sync([balancer('ranged', '127.0.0.1', ranged, targetPort, ['127.0.0.2'], { sourceRanges: ['127.0.0.9/32'] })]);
    assert.ok(listTable(engine.table).includes(`tcp dport ${ranged}`), 'the table is back');
    assert.equal(await once('127.0.0.1', ranged, '127.0.0.9'), 'a');
  } finally {
    await engine.closeAll();
    a.close();
    b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a target failing its health check gets no new connections; all failing, the balancer fails open', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-nft-'));
  const servers: Array<Server | HttpServer> = [];
  const engine = new NftablesBalancers({ binary: NFT!, dir, resolve: () => undefined, log: logger('test') });
  try {
    const targetPort = await freePort('127.0.0.2');
    const healthPort = await freePort('127.0.0.2');
    const targets = await healthCheckedTargets(targetPort, healthPort);
    servers.push(...targets.servers);
    const { healthy } = targets;
    const port = await freePort('127.0.0.1');
    await engine.sync([balancer('hc', '127.0.0.1', port, targetPort, ['127.0.0.2', '127.0.0.3'], { healthCheck: { port: healthPort, path: '/healthz' } })]);
    await eventually('only the healthy target gets connections', async () => (await spreadOf('127.0.0.1', port)) === 'a', 10_000);
    healthy.set('b', true);
    await eventually('both healthy: both in use', async () => (await spreadOf('127.0.0.1', port)) === 'a,b', 10_000);
    healthy.set('a', false);
    await eventually('only b', async () => (await spreadOf('127.0.0.1', port)) === 'b', 10_000);
    healthy.set('b', false);
    await eventually('none healthy: every target, failing open', async () => (await spreadOf('127.0.0.1', port)) === 'a,b', 10_000);
  } finally {
    await engine.closeAll();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the cloud asked for the kernel engine carries its balancers on it and says so in its API; a bad engine name is an error', { skip, timeout: 30_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-cloud-'));
  chmodSync(dataDir, 0o755);
  const target = await echo('a', '127.0.0.2', await freePort('127.0.0.2'));
  const targetPort = (target.address() as { port: number }).port;
  const service = new CloudService({ dataDir, ignition: 'builtin', host: '127.0.0.1', port: 0, loadBalancerEngine: 'nftables' });
  try {
    const client = new CloudClient(await service.start(), service.rootCredential);
    assert.equal(service.proxies.name, 'nftables');
    const lb = await client.ensureLoadBalancer('kernel-lb', { ports: [{ protocol: 'TCP', port: 18302, targetPort, targets: ['127.0.0.2'] }], targets: [], sourceRanges: [] });
    assert.equal(lb.engine?.name, 'nftables');
    assert.equal(await once(lb.address, 18302), 'a', 'the kernel carries the balancer');
  } finally {
    await service.close();
    target.close();
  }
  assert.equal(listTable(tableName(join(dataDir, 'cloud', 'haproxy'))), '', 'the cloud deletes its table when it stops');
  const old = process.env.BOSUN_LB_ENGINE;
  process.env.BOSUN_LB_ENGINE = 'ipvs';
  try {
    assert.throws(() => new CloudService({ dataDir, ignition: 'builtin', host: '127.0.0.1', port: 0 }), /BOSUN_LB_ENGINE must be auto, haproxy, nftables or node, got "ipvs"/);
  } finally {
    if (old === undefined) delete process.env.BOSUN_LB_ENGINE;
    else process.env.BOSUN_LB_ENGINE = old;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
