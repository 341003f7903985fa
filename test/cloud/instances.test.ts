// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The local cloud's instances through its HTTP API, on a random loopback port: creation and what
// an instance records, filters, reboots (a new boot ID, after the boot delay, without Ignition),
// stop/start, terminate (root removed, address released), restarts of the service, and the
// runtime hook seeing every boot and shutdown in order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CloudError } from '../../src/cloud/errors.js';
import type { Instance } from '../../src/cloud/types.js';
import { isUp, startCloud, waitForBoot, waitForInstance, type CloudFixture } from './cloud-fixture.js';

const BOOT_DELAY_MS = 400;
let f: CloudFixture;
before(async () => { f = await startCloud({ bootDelayMs: BOOT_DELAY_MS }); });
after(async () => { await f.close(); });

// A full config inline (no fetch): its file shows whether Ignition ran on a boot.
const USER_DATA = JSON.stringify({ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/first-boot', contents: { source: 'data:,ignition%20ran%0A' } }] } });

const root = (i: Instance) => join(f.dataDir, 'machines', i.id, 'root');
const bootIdOnDisk = (i: Instance) => readFileSync(join(root(i), 'proc/sys/kernel/random/boot_id'), 'utf8').trim();

async function create(name: string, extra: Record<string, string> = {}): Promise<Instance> {
  const created = await f.client.createInstance({ name, userData: USER_DATA, ...extra });
  return waitForBoot(f.client, created.id);
}

test('a created instance is pending, then running with everything a cloud records', async () => {
  const created = await f.client.createInstance({ name: 'worker-a', type: 'local.large', zone: 'local-c', userData: USER_DATA });
  assert.match(created.id, /^i-[0-9a-f]{17}$/);
  assert.equal(created.state, 'pending');
  assert.deepEqual([created.name, created.type, created.zone, created.region, created.userData], ['worker-a', 'local.large', 'local-c', 'local', USER_DATA]);
  assert.match(created.privateIp, /^127\.0\.1\.\d+$/);
  assert.ok(Date.now() - Date.parse(created.launchTime) < 10_000);
  const up = await waitForBoot(f.client, created.id);
  assert.equal(up.state, 'running');
  assert.match(up.bootId!, /^[0-9a-f-]{36}$/);
  assert.equal(bootIdOnDisk(up), up.bootId);
  assert.equal(readFileSync(join(root(up), 'etc/first-boot'), 'utf8'), 'ignition ran\n');
  assert.deepEqual(f.runtime.of(up.id), [`boot ${up.bootId}`]);
  assert.equal(f.runtime.events.find((e) => e.instance === up.id)?.firstBoot, true);
});

test('addresses are distinct while held; zones spread when none is asked for; filters select', async () => {
  const made = [await create('spread-1'), await create('spread-2'), await create('spread-3')];
  const all = await f.client.listInstances();
  const live = all.filter((i) => i.state !== 'terminated');
  assert.equal(new Set(live.map((i) => i.privateIp)).size, live.length, 'no address held twice');
  const perZone = ['local-a', 'local-b', 'local-c'].map((z) => live.filter((i) => i.zone === z).length);
  assert.ok(Math.max(...perZone) - Math.min(...perZone) <= 1, `instances spread over the zones: ${perZone}`);
  assert.deepEqual((await f.client.listInstances({ names: ['spread-2'] })).map((i) => i.id), [made[1].id]);
  assert.ok((await f.client.listInstances({ states: ['running'] })).every((i) => i.state === 'running'));
  assert.deepEqual(await f.client.listInstances({ states: ['stopped'], names: ['spread-1'] }), []);
});

test('twenty concurrent creates get twenty distinct addresses and IDs', async () => {
  const made = await Promise.all(Array.from({ length: 20 }, (_, n) => f.client.createInstance({ name: `burst-${n}` })));
  assert.equal(new Set(made.map((i) => i.privateIp)).size, 20);
  assert.equal(new Set(made.map((i) => i.id)).size, 20);
  const held = (await f.client.listInstances()).filter((i) => i.state !== 'terminated').map((i) => i.privateIp);
  assert.equal(new Set(held).size, held.length, 'no address held twice');
  for (const i of made) await waitForBoot(f.client, i.id);
  for (const i of made) await f.client.operate('terminate', i.id);
});

test('reboot: the machine goes down for the boot delay and comes back with a new boot ID, without Ignition', async () => {
  const i = await create('reboot-me');
  rmSync(join(root(i), 'etc/first-boot'));
  const started = Date.now();
  const answered = await f.client.operate('reboot', i.id);
  assert.equal(answered.state, 'running', 'a rebooting instance stays running, as on EC2');
  await waitForInstance(f.client, i.id, 'down', (x) => x.machine.phase === 'Down' || x.bootId !== i.bootId);
  const back = await waitForInstance(f.client, i.id, 'rebooted', (x) => isUp(x) && x.bootId !== i.bootId);
  assert.ok(Date.now() - started >= BOOT_DELAY_MS, `down at least the boot delay (${Date.now() - started} ms)`);
  assert.equal(bootIdOnDisk(back), back.bootId);
  assert.equal(back.machine.bootCount, 2);
  assert.equal(existsSync(join(root(back), 'etc/first-boot')), false, 'Ignition did not run again');
  assert.deepEqual(f.runtime.of(i.id), [`boot ${i.bootId}`, `shutdown ${i.bootId}`, `boot ${back.bootId}`]);
  assert.equal(f.runtime.events.filter((e) => e.instance === i.id).at(-1)?.firstBoot, false);
});

test('stop then start: stopped keeps the root; start boots it again with a new boot ID', async () => {
  const i = await create('stop-me');
  assert.equal((await f.client.operate('stop', i.id)).state, 'stopping');
  const stopped = await waitForInstance(f.client, i.id, 'stopped', (x) => x.state === 'stopped');
  assert.equal(stopped.machine.phase, 'Down');
  assert.deepEqual(f.runtime.of(i.id), [`boot ${i.bootId}`, `shutdown ${i.bootId}`]);
  assert.equal(readFileSync(join(root(i), 'etc/first-boot'), 'utf8'), 'ignition ran\n', 'the root is kept');
  assert.equal((await f.client.operate('stop', i.id)).state, 'stopped', 'stopping a stopped instance changes nothing');
  assert.equal((await f.client.operate('start', i.id)).state, 'pending');
  const up = await waitForBoot(f.client, i.id);
  assert.notEqual(up.bootId, i.bootId);
  assert.equal(bootIdOnDisk(up), up.bootId);
  assert.equal(up.privateIp, i.privateIp, 'a stopped instance keeps its address');
});

test('terminate: the machine shuts down, its directory goes, its address is free again', async () => {
  const i = await create('terminate-me');
  const dir = join(f.dataDir, 'machines', i.id);
  assert.ok(existsSync(dir));
  const gone = await f.client.operate('terminate', i.id);
  assert.equal(gone.state, 'terminated');
  assert.equal(existsSync(dir), false);
  assert.deepEqual(f.runtime.of(i.id), [`boot ${i.bootId}`, `shutdown ${i.bootId}`]);
  assert.equal((await f.client.operate('terminate', i.id)).state, 'terminated', 'terminating twice changes nothing');
  assert.ok((await f.client.listInstances({ states: ['terminated'] })).some((x) => x.id === i.id), 'terminated instances stay listed');
  const next = await f.client.createInstance({ name: 'terminate-me' });
  assert.equal(next.privateIp, i.privateIp, 'the lowest free address is the released one');
  await waitForBoot(f.client, next.id);
});

test('bad requests get a 4xx naming the problem, and nothing is created', async () => {
  const before = await f.client.listInstances();
  const dirsBefore = readdirSync(join(f.dataDir, 'machines')).sort();
  const cases: { body: unknown; status: number; code: string; message: RegExp }[] = [
    { body: { name: 'x', type: 'local.huge' }, status: 400, code: 'InvalidInstanceType', message: /instance type "local.huge" does not exist \(types: local.small, local.medium/ },
    { body: { name: 'x', zone: 'local-z' }, status: 400, code: 'InvalidZone', message: /zone "local-z" does not exist in region local \(zones: local-a, local-b, local-c\)/ },
    { body: { name: 'x', userData: '{"ignition":' }, status: 400, code: 'InvalidUserData', message: /userData is not a valid Ignition config: not valid JSON/ },
    { body: { name: 'x', userData: '{"ignition":{"version":"9.9.9"}}' }, status: 400, code: 'InvalidUserData', message: /ignition.version: unsupported config version "9.9.9"/ },
    { body: { name: 'x', userData: JSON.stringify({ ignition: { version: '3.2.0' }, storage: { files: [{ path: 'relative' }] } }) }, status: 400, code: 'InvalidUserData', message: /storage.files\[0\].path: "relative" is not absolute/ },
    { body: { name: 'x', userData: 'x'.repeat(70_000) }, status: 400, code: 'InvalidUserData', message: /userData is 70000 bytes; at most 65536/ },
    { body: { type: 'local.small' }, status: 400, code: 'MissingParameter', message: /name is required/ },
    { body: { name: 'Bad_Name' }, status: 400, code: 'InvalidParameter', message: /name "Bad_Name" must be a DNS subdomain/ },
    { body: { name: 'x', cpu: 4 }, status: 400, code: 'UnknownParameter', message: /unknown field "cpu"/ },
    { body: [1, 2], status: 400, code: 'InvalidParameter', message: /the body must be a JSON object/ },
    { body: { name: 'worker-a' }, status: 409, code: 'InstanceNameInUse', message: /an instance named "worker-a" already exists/ },
  ];
  for (const c of cases) {
    await assert.rejects(f.client.request('POST', '/v1/instances', c.body), (e: CloudError) => {
      assert.equal(e.status, c.status, JSON.stringify(c.body).slice(0, 80));
      assert.equal(e.code, c.code);
      assert.match(e.message, c.message);
      return true;
    });
  }
  // Several problems at once are all named.
  await assert.rejects(f.client.request('POST', '/v1/instances', { name: 'x', type: 'nope', zone: 'nope' }), /instance type "nope".*; zone "nope"/);
  assert.deepEqual(await f.client.listInstances(), before);
  assert.deepEqual(readdirSync(join(f.dataDir, 'machines')).sort(), dirsBefore);
});

test('operations on unknown instances are 404, in the wrong state 409, unknown paths 404 — all JSON', async () => {
  await assert.rejects(f.client.operate('reboot', 'i-0123456789abcdef0'), (e: CloudError) => e.status === 404 && e.code === 'InvalidInstanceID.NotFound' && /i-0123456789abcdef0 does not exist/.test(e.message));
  const i = await create('wrong-state');
  await f.client.operate('stop', i.id);
  await waitForInstance(f.client, i.id, 'stopped', (x) => x.state === 'stopped');
  await assert.rejects(f.client.operate('reboot', i.id), (e: CloudError) => e.status === 409 && e.code === 'IncorrectInstanceState' && /it is stopped; only a running instance can be rebooted/.test(e.message));
  await f.client.operate('terminate', i.id);
  await assert.rejects(f.client.operate('start', i.id), (e: CloudError) => e.status === 409 && /terminated and cannot be started/.test(e.message));
  await assert.rejects(f.client.request('POST', `/v1/instances/${i.id}/explode`), (e: CloudError) => e.status === 404 && /no such instance operation "explode"/.test(e.message));
  await assert.rejects(f.client.request('GET', '/v2/nothing'), (e: CloudError) => e.status === 404 && e.code === 'NotFound');
  await assert.rejects(f.client.request('GET', '/v1/instances?state=sleeping'), (e: CloudError) => e.status === 400 && /state "sleeping" is not an instance state/.test(e.message));
  await assert.rejects(f.client.request('GET', '/v1/instances?colour=red'), (e: CloudError) => e.status === 400 && /unknown filter "colour"/.test(e.message));
});

test('a restart sweeps machine directories that belong to no live instance (a crash mid-create or mid-terminate)', async () => {
  const orphan = join(f.dataDir, 'machines', 'i-0000000000000dead');
  mkdirSync(join(orphan, 'root/etc'), { recursive: true });
  const live = await create('keep-me');
  await f.restart();
  assert.equal(existsSync(orphan), false);
  assert.ok(existsSync(root(live)));
});

test('state survives a restart: records as they were, running machines boot again, stopped ones stay down', async () => {
  const running = await create('survivor');
  const stopped = await create('sleeper');
  await f.client.operate('stop', stopped.id);
  await waitForInstance(f.client, stopped.id, 'stopped', (x) => x.state === 'stopped');
  const before = await f.client.listInstances();
  await f.restart();
  const after = await f.client.listInstances();
  const strip = (list: Instance[]) => list.map((i) => ({ id: i.id, name: i.name, type: i.type, zone: i.zone, privateIp: i.privateIp, userData: i.userData, launchTime: i.launchTime }));
  assert.deepEqual(strip(after), strip(before));
  assert.equal(after.find((i) => i.id === stopped.id)?.state, 'stopped');
  const back = await waitForBoot(f.client, running.id);
  assert.notEqual(back.bootId, running.bootId, 'a fresh boot after the restart');
  assert.equal(existsSync(join(root(back), 'boot/ignition.firstboot')), false, 'no Ignition after the restart');
  // The restarted cloud allocates around what is held.
  const fresh = await f.client.createInstance({ name: 'after-restart' });
  assert.ok(!after.filter((i) => i.state !== 'terminated').some((i) => i.privateIp === fresh.privateIp));
});
