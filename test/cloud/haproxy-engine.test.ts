// test: shared-addresses (binds balancer and target addresses on loopback; run alone)
// The local cloud's load balancers on haproxy (src/cloud/haproxy.ts): the cloud runs one haproxy
// whose files are private and which it stops by pid; a change of targets goes through the runtime
// API (same worker) and any other change through a reload, both keeping the connections already
// open; a target that leaves has its connections drained (kept while the drain lasts, then shut),
// one failing its health check has them shut at once and gets no new ones; a cloud that crashed
// leaves its haproxy carrying traffic, and the next cloud on the data directory takes it over; and
// without haproxy the cloud falls back to its Node proxy, saying so in its log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { freePort } from '../../src/common/listen.js';
import { logger } from '../../src/common/log.js';
import { HaproxyBalancers } from '../../src/cloud/haproxy.js';
import { CloudService } from '../../src/cloud/service.js';
import { CloudClient } from '../../src/cloud/client.js';
import type { LoadBalancer } from '../../src/cloud/types.js';
import { Conn, echo, healthCheckedTargets, once, spreadOf } from '../helpers/balancer-targets.js';
import { eventually } from '../helpers/eventually.js';
import { HAPROXY, skipWithoutHaproxy } from '../helpers/haproxy.js';
import { bosunBin } from '../helpers/cli.js';

/** One line to haproxy's master CLI; its whole answer. */
function masterCli(socket: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect(socket);
    let out = '';
    c.on('connect', () => c.end(`${line}\n`));
    c.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('close', () => resolve(out));
  });
}

function balancer(name: string, address: string, port: number, targetPort: number, targets: string[], extra: Partial<LoadBalancer> = {}): LoadBalancer {
  const now = new Date().toISOString();
  return { name, address, ports: [{ protocol: 'TCP', port, targetPort }], targets, sourceRanges: [], createdAt: now, updatedAt: now, ...extra };
}

/** The pids of haproxy's workers (the master's children). */
function workers(master: number): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === master ? [Number(n)] : [];
    } catch {
      return [];
    }
  });
}

const alive = (pid: number) => { try { process.kill(pid, 0); return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); } catch { return false; } };

test('targets change through the runtime API and listeners through a reload, both keeping open connections; the files are private; stopped by pid', { skip: skipWithoutHaproxy, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-haproxy-'));
  const servers: Server[] = [];
  const engine = new HaproxyBalancers({ binary: HAPROXY!, dir: join(dir, 'haproxy'), resolve: () => undefined, log: logger('test') });
  try {
    const targetPort = await freePort('127.0.0.2');
    servers.push(await echo('a', '127.0.0.2', targetPort), await echo('b', '127.0.0.3', targetPort));
    const [p1, p2] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['127.0.0.2'])]);
    const master = engine.masterPid!;
    assert.ok(readFileSync(`/proc/${master}/cmdline`, 'utf8').includes('haproxy'));
    const [worker] = workers(master);
    const kept = new Conn('127.0.0.1', p1);
    assert.equal(await kept.target(), 'a');

    // Only targets change: the same worker, no reload; the open connection goes on.
    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['127.0.0.2', '127.0.0.3'])]);
    assert.deepEqual(workers(master), [worker], 'no reload for a change of targets');
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add(await once('127.0.0.1', p1));
    assert.deepEqual([...seen].sort(), ['a', 'b'], 'the added target gets connections');
    assert.equal(await kept.say('still'), 'a:still');

    // A new balancer: a reload, with connections made all through it answered, the open one kept.
    let stop = false;
    const during: string[] = [];
    const hammer = (async () => { while (!stop) during.push(await once('127.0.0.1', p1)); })();
    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['127.0.0.2', '127.0.0.3']), balancer('two', '127.0.0.1', p2, targetPort, ['127.0.0.3'])]);
    stop = true;
    await hammer;
    assert.notDeepEqual(workers(master).sort(), [worker], 'a new worker after the reload');
    assert.ok(during.length > 0 && during.every((t) => t === 'a' || t === 'b'), `every connection during the reload answered: ${during.join()}`);
    assert.equal(await kept.say('after reload'), 'a:after reload', 'the open connection survives the reload');
    assert.equal(await once('127.0.0.1', p2), 'b');
    assert.deepEqual(engine.listening(), [`127.0.0.1:${p1}`, `127.0.0.1:${p2}`].sort());

    // Private files: the directory 0700, everything in it closed to group and others.
    const hdir = join(dir, 'haproxy');
    assert.equal(statSync(hdir).mode & 0o777, 0o700);
    const files = readdirSync(hdir);
    for (const f of ['haproxy.cfg', 'haproxy.pid', 'master.sock', 'haproxy.log']) assert.ok(files.includes(f), `${f} in ${files.join()}`);
    for (const f of files) assert.equal(statSync(join(hdir, f)).mode & 0o077, 0, `${f} is private`);
    kept.socket.destroy();

    // No balancer left: haproxy is stopped (master and workers).
    const all = [master, ...workers(master)];
    await engine.sync([]);
    assert.equal(engine.masterPid, undefined);
    for (const pid of all) await eventually(`haproxy ${pid} gone`, () => !alive(pid), 5_000);
    await engine.sync([balancer('one', '127.0.0.1', p1, targetPort, ['127.0.0.2'])]);
    const again = engine.masterPid!;
    assert.equal(await once('127.0.0.1', p1), 'a', 'started again for a new balancer');
    await engine.closeAll();
    await eventually('haproxy stopped with the engine', () => !alive(again), 5_000);
  } finally {
    await engine.closeAll();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a change of many targets at once, longer than one line of the runtime API, is applied whole by the same worker; removed targets are deleted once drained', { skip: skipWithoutHaproxy, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-haproxy-'));
  const servers: Server[] = [];
  const engine = new HaproxyBalancers({ binary: HAPROXY!, dir: join(dir, 'haproxy'), resolve: () => undefined, log: logger('test'), drainMaxMs: 200 });
  try {
    const targetPort = await freePort('127.0.0.2');
    servers.push(await echo('a', '127.0.0.2', targetPort));
    const port = await freePort('127.0.0.1');
    // 80 targets: some 20 KiB of commands, more than one line of the master CLI takes.
    const many = ['127.0.0.2', ...Array.from({ length: 79 }, (_, i) => `127.0.3.${i + 1}`)];
    const check = { path: '/healthz', port: targetPort, protocol: 'HTTP' as const };
    await engine.sync([balancer('one', '127.0.0.1', port, targetPort, ['127.0.0.2'], { healthCheck: check })]);
    const master = engine.masterPid!;
    const [worker] = workers(master);
    await engine.sync([balancer('one', '127.0.0.1', port, targetPort, many, { healthCheck: check })]);
    assert.deepEqual(workers(master), [worker], 'no reload for a change of targets');
    const state = async () => [...(await masterCli(join(dir, 'haproxy', 'master.sock'), '@1 show servers state')).matchAll(/^\d+ \S+ \d+ (\S+) /gm)].map((m) => m[1]).sort();
    const names = (targets: string[]) => targets.flatMap((t) => [`open-${t}`, `t-${t}`]).sort();
    assert.deepEqual(await state(), names(many), 'every target (checked, with its fail-open backup) is on the worker');
    assert.equal((readFileSync(join(dir, 'haproxy', 'haproxy.cfg'), 'utf8').match(/^ {2}server /gm) ?? []).length, many.length * 2, 'and in the configuration');
    // All but one leave: drained (nothing is connected) and deleted from the worker.
    await engine.sync([balancer('one', '127.0.0.1', port, targetPort, ['127.0.0.2'], { healthCheck: check })]);
    await eventually('the removed targets deleted', async () => JSON.stringify(await state()) === JSON.stringify(names(['127.0.0.2'])), 10_000);
    assert.deepEqual(workers(master), [worker]);
  } finally {
    await engine.closeAll();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a target that leaves is drained: its open connections kept for the drain time, then shut; new ones go to the others', { skip: skipWithoutHaproxy, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-haproxy-'));
  const servers: Server[] = [];
  const engine = new HaproxyBalancers({ binary: HAPROXY!, dir: join(dir, 'haproxy'), resolve: () => undefined, log: logger('test'), drainMaxMs: 2_000 });
  try {
    const targetPort = await freePort('127.0.0.2');
    servers.push(await echo('a', '127.0.0.2', targetPort), await echo('b', '127.0.0.3', targetPort));
    const port = await freePort('127.0.0.1');
    await engine.sync([balancer('drain', '127.0.0.1', port, targetPort, ['127.0.0.2', '127.0.0.3'])]);
    const conns = [new Conn('127.0.0.1', port), new Conn('127.0.0.1', port)];
    const byTarget = new Map<string, Conn>();
    for (const c of conns) byTarget.set(await c.target(), c);
    assert.deepEqual([...byTarget.keys()].sort(), ['a', 'b']);

    const removedAt = Date.now();
    await engine.sync([balancer('drain', '127.0.0.1', port, targetPort, ['127.0.0.3'])]);
    assert.equal(await byTarget.get('a')!.say('in flight'), 'a:in flight', 'a leaving target keeps its connections while draining');
    for (let i = 0; i < 3; i++) assert.equal(await once('127.0.0.1', port), 'b', 'new connections go to the remaining target');
    await byTarget.get('a')!.closed;
    assert.ok(Date.now() - removedAt >= 1_500, 'shut only once the drain time is over');
    assert.equal(await byTarget.get('b')!.say('stays'), 'b:stays', 'the remaining target keeps its connections');
    for (const c of conns) c.socket.destroy();
  } finally {
    await engine.closeAll();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a target failing its health check gets no new connections and has its open ones shut; all failing, the balancer fails open', { skip: skipWithoutHaproxy, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-haproxy-'));
  const servers: Array<Server | HttpServer> = [];
  const engine = new HaproxyBalancers({ binary: HAPROXY!, dir: join(dir, 'haproxy'), resolve: () => undefined, log: logger('test') });
  try {
    const targetPort = await freePort('127.0.0.2');
    const healthPort = await freePort('127.0.0.2');
    const targets = await healthCheckedTargets(targetPort, healthPort);
    servers.push(...targets.servers);
    const { healthy } = targets;
    const port = await freePort('127.0.0.1');
    const lb = balancer('hc', '127.0.0.1', port, targetPort, ['127.0.0.2', '127.0.0.3'], { healthCheck: { port: healthPort, path: '/healthz' } });
    await engine.sync([lb]);
    const spread = () => spreadOf('127.0.0.1', port, 4);
    await eventually('only the healthy target gets connections', async () => (await spread()) === 'a', 10_000);
    healthy.set('b', true);
    await eventually('both healthy: both in use', async () => (await spread()) === 'a,b', 10_000);
    let onA = new Conn('127.0.0.1', port);
    while (await onA.target() !== 'a') {
      onA.socket.destroy();
      onA = new Conn('127.0.0.1', port);
    }

    healthy.set('a', false);
    await Promise.race([onA.closed, new Promise((_r, reject) => setTimeout(() => reject(new Error('the connection to the failing target was not shut')), 10_000))]);
    await eventually('only b gets new connections', async () => (await spread()) === 'b', 10_000);

    healthy.set('b', false);
    await eventually('none healthy: every target, failing open', async () => (await spread()) === 'a,b', 10_000);
  } finally {
    await engine.closeAll();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cloud that crashed leaves haproxy carrying traffic; the next cloud on its data directory takes it over, then stops it', { skip: skipWithoutHaproxy, timeout: 90_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-cloud-'));
  chmodSync(dataDir, 0o755);
  const target = await echo('a', '127.0.0.2', await freePort('127.0.0.2'));
  const targetPort = (target.address() as { port: number }).port;
  const child = spawn(process.execPath, [bosunBin, 'cloud', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--ignition', 'builtin'], { env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' } });
  let service: CloudService | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => { out += d; const m = /listening on (\S+)/.exec(out); if (m) resolve(m[1]); });
      child.on('exit', (code) => reject(new Error(`bosun cloud serve exited ${code}: ${out}`)));
    });
    const client = CloudClient.withCredentialFile(url, join(dataDir, 'cloud', 'root.credential'));
    const lb = await client.ensureLoadBalancer('crash-lb', { ports: [{ protocol: 'TCP', port: 18300, targetPort, targets: ['127.0.0.2'] }], targets: [], sourceRanges: [] });
    const kept = new Conn(lb.address, 18300);
    assert.equal(await kept.target(), 'a');
    const pid = Number(readFileSync(join(dataDir, 'cloud', 'haproxy', 'haproxy.pid'), 'utf8'));

    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.equal(await kept.say('cloud gone'), 'a:cloud gone', 'haproxy carries on without the cloud');

    service = new CloudService({ dataDir, ignition: 'builtin', host: '127.0.0.1', port: 0 });
    await service.start();
    assert.equal(service.proxies.name, 'haproxy');
    assert.equal((service.proxies as HaproxyBalancers).masterPid, pid, 'the same haproxy, taken over');
    assert.equal(await kept.say('taken over'), 'a:taken over', 'the connection survives the takeover');
    assert.equal(await once(lb.address, 18300), 'a');
    kept.socket.destroy();
    await service.close();
    service = undefined;
    await eventually('haproxy stopped with the cloud', () => !alive(pid), 5_000);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await service?.close();
    target.close();
    // A haproxy left by a failed run of this test is stopped by its pid.
    let left = 0;
    try { left = Number(readFileSync(join(dataDir, 'cloud', 'haproxy', 'haproxy.pid'), 'utf8').trim()); } catch { /* stopped */ }
    if (left && alive(left)) process.kill(left, 'SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('without haproxy the cloud carries its balancers on the Node proxy and says so in its log', { timeout: 30_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-cloud-'));
  chmodSync(dataDir, 0o755);
  const lines: string[] = [];
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
  const target = await echo('a', '127.0.0.2', await freePort('127.0.0.2'));
  const targetPort = (target.address() as { port: number }).port;
  const service = new CloudService({ dataDir, ignition: 'builtin', host: '127.0.0.1', port: 0, haproxyBinary: join(dataDir, 'no-such-haproxy'), log });
  try {
    const client = new CloudClient(await service.start(), service.rootCredential);
    assert.equal(service.proxies.name, 'node');
    assert.ok(lines.some((l) => l.includes('"level":40') && l.includes('haproxy is not installed') && l.includes('Node proxy')), lines.join(''));
    const lb = await client.ensureLoadBalancer('fallback-lb', { ports: [{ protocol: 'TCP', port: 18301, targetPort, targets: ['127.0.0.2'] }], targets: [], sourceRanges: [] });
    assert.equal(await once(lb.address, 18301), 'a', 'the Node proxy carries the balancer');
  } finally {
    await service.close();
    target.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
