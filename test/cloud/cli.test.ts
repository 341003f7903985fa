// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// `bosun cloud …` as a user runs it: `serve` as its own process, the other subcommands finding it
// through the data directory (or --cloud-url), printing cloud-CLI tables, failing clearly on bad
// input; and the service killed outright (SIGKILL) comes back with every acknowledged instance.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudClient, rootCredentialPath } from '../../src/cloud/client.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { waitForBoot } from './cloud-fixture.js';

let dataDir: string;
let serve: ChildProcess | undefined;

/** Starts `bosun cloud serve` and resolves with the URL it prints. */
function startServe(): Promise<string> {
  const child = spawn(process.execPath, [bosunBin, 'cloud', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--boot-delay', '200ms', '--ignition', 'builtin'], { env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' } });
  serve = child;
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => reject(new Error(`bosun cloud serve exited ${code}: ${out}`)));
  });
}

async function killServe(signal: NodeJS.Signals): Promise<void> {
  const child = serve!;
  serve = undefined;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

before(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'bosun-cloud-cli-'));
  chmodSync(dataDir, 0o755);
});
after(async () => {
  if (serve) await killServe('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

const cloud = (...args: string[]) => runBosun(['cloud', ...args, '--data-dir', dataDir]);
const HEADER = /^INSTANCE ID\s+NAME\s+TYPE\s+ZONE\s+STATE\s+PRIVATE IP\s+LAUNCHED$/m;

test('serve, create, instances, reboot, stop: tables as a cloud CLI prints them', { timeout: 120_000 }, async () => {
  const url = await startServe();
  const userData = join(dataDir, 'worker.ign');
  writeFileSync(userData, JSON.stringify({ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/role', contents: { source: 'data:,worker%0A' } }] } }));

  const created = await cloud('create', 'worker-0', '--type', 'local.small', '--zone', 'local-b', '--user-data-file', userData);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, HEADER);
  const row = /^(i-[0-9a-f]{17})\s+worker-0\s+local\.small\s+local-b\s+pending\s+127\.0\.1\.1\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m.exec(created.stdout);
  assert.ok(row, created.stdout);
  const id = row[1];
  await waitForBoot(CloudClient.withCredentialFile(url, rootCredentialPath(dataDir)), id);

  const listed = await cloud('instances');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, HEADER);
  assert.match(listed.stdout, new RegExp(`^${id}\\s+worker-0\\s+local\\.small\\s+local-b\\s+running\\s+127\\.0\\.1\\.1\\s`, 'm'));

  const rebooted = await runBosun(['cloud', 'reboot', 'worker-0', '--cloud-url', url, '--cloud-credentials-file', rootCredentialPath(dataDir)]);
  assert.equal(rebooted.code, 0, rebooted.stderr);
  assert.match(rebooted.stdout, /^INSTANCE ID\s+NAME\s+PREVIOUS STATE\s+CURRENT STATE$/m);
  assert.match(rebooted.stdout, new RegExp(`^${id}\\s+worker-0\\s+running\\s+running$`, 'm'));

  const stopped = await cloud('stop', id);
  assert.match(stopped.stdout, new RegExp(`^${id}\\s+worker-0\\s+running\\s+stopping$`, 'm'));
  const json = await cloud('instances', '--state', 'stopping,stopped', '-o', 'json');
  assert.deepEqual((JSON.parse(json.stdout) as { id: string }[]).map((i) => i.id), [id]);
  const started = await cloud('start', 'worker-0');
  assert.match(started.stdout, new RegExp(`^${id}\\s+worker-0\\s+stopped\\s+pending$`, 'm'));
  await waitForBoot(CloudClient.withCredentialFile(url, rootCredentialPath(dataDir)), id);
});

test('bad input: a clear message and a non-zero exit', { timeout: 60_000 }, async () => {
  const cases: [string[], RegExp][] = [
    [['create', 'x', '--type', 'local.huge'], /instance type "local.huge" does not exist \(types: local.small/],
    [['create', 'x', '--user-data-file', '/nonexistent.ign'], /--user-data-file: cannot read \/nonexistent.ign: ENOENT/],
    [['reboot', 'nobody'], /no instance named "nobody"/],
    [['instances', '--state', 'sleeping'], /--state: "sleeping" is not an instance state/],
  ];
  const results = await Promise.all(cases.map(([args]) => cloud(...args)));
  cases.forEach(([args, message], n) => {
    assert.notEqual(results[n].code, 0, args.join(' '));
    assert.match(results[n].stderr, message);
  });
  const nowhere = await runBosun(['cloud', 'instances', '--data-dir', join(dataDir, 'nothing-here')]);
  assert.notEqual(nowhere.code, 0);
  assert.match(nowhere.stderr, /no local cloud is running for .*nothing-here.*start it with: bosun cloud serve --data-dir/);
});

test('killed with SIGKILL, the cloud comes back with every acknowledged instance, running ones booted again', { timeout: 120_000 }, async () => {
  const before = (await cloud('instances', '-o', 'json'));
  const instances = JSON.parse(before.stdout) as { id: string; privateIp: string; bootId: string }[];
  assert.ok(instances.length > 0);
  await killServe('SIGKILL');
  const stale = await cloud('instances');
  assert.notEqual(stale.code, 0);
  assert.match(stale.stderr, /is not running; start it with/);
  const url = await startServe();
  for (const i of instances) {
    const back = await waitForBoot(CloudClient.withCredentialFile(url, rootCredentialPath(dataDir)), i.id);
    assert.equal(back.privateIp, i.privateIp);
    assert.notEqual(back.bootId, i.bootId);
  }
});

test('every subcommand\'s --help says what it prints and gives an example', { timeout: 60_000 }, async () => {
  const subs = ['serve', 'instances', 'create', 'start', 'stop', 'reboot', 'terminate'];
  const results = await Promise.all(subs.map((sub) => runBosun(['cloud', sub, '--help'])));
  subs.forEach((sub, n) => {
    assert.equal(results[n].code, 0);
    assert.match(results[n].stdout, /Prints/, sub);
    assert.match(results[n].stdout, new RegExp(`Example:\\n  bosun cloud ${sub}`));
  });
});
