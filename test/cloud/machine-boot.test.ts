// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// A machine's first boot from a pointer config, against a real machine-config server (TLS, its
// CA in the pointer) serving a rendered config that uses what Ignition can do: files from data
// URLs and http, gzip with verification, append, modes, owners by name, directories, symbolic
// and hard links, units with contents, dropins, enabled/disabled/masked, a user with ssh keys,
// kernel arguments. One machine boots through the real Ignition client, one through bosun's own
// applier; both roots must hold exactly the same tree, and that tree what the config says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { encodeDataUrl } from '../../src/ignition/data-url.js';
import type { IgnitionConfig } from '../../src/ignition/types.js';
import { FileRenderedConfigSource } from '../../src/mco/server/rendered-config-source.js';
import { MachineConfigServer } from '../../src/mco/server/server.js';
import { generateCa, issueServingCert } from '../../src/mco/server/serving-tls.js';
import { skipWithoutIgnition } from '../helpers/ignition.js';
import { writeRendered } from '../mco/mcs-fixture.js';
import { isUp, startCloud, tree, waitForBoot, waitForInstance, type CloudFixture, type TreeNode } from './cloud-fixture.js';

const HTTP_FILE = '#!/bin/sh\necho served over http\n';
const MOTD = 'welcome to a bosun machine\n'.repeat(20);
const KEYS = ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBosunTestKeyOne core@one', 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQBosunKeyTwo core@two'];

let http: Server;
let mcs: MachineConfigServer;
let configDir: string;
let source: FileRenderedConfigSource;
let ca: string;

function renderedConfig(httpPort: number): IgnitionConfig {
  const gz = gzipSync(Buffer.from(MOTD));
  return {
    ignition: { version: '3.3.0' },
    passwd: { users: [{ name: 'core', sshAuthorizedKeys: KEYS }] },
    storage: {
      files: [
        { path: '/etc/hello.conf', mode: 420, overwrite: true, contents: { source: 'data:,hello%20world%0A' } },
        { path: '/etc/secret.conf', mode: 384, contents: { source: encodeDataUrl('secret\n') } },
        { path: '/etc/motd.d/bosun', contents: { source: encodeDataUrl(gz), compression: 'gzip', verification: { hash: `sha512-${createHash('sha512').update(MOTD).digest('hex')}` } }, append: [{ source: 'data:,appended%0A' }] },
        { path: '/usr/local/bin/from-http', mode: 493, contents: { source: `http://127.0.0.1:${httpPort}/from-http`, verification: { hash: `sha256-${createHash('sha256').update(HTTP_FILE).digest('hex')}` } } },
        { path: '/etc/core-owned.conf', mode: 416, user: { name: 'core' }, group: { id: 100 }, contents: { source: 'data:,mine%0A' } },
      ],
      directories: [{ path: '/etc/bosun.d', mode: 488 }],
      links: [
        { path: '/etc/hello-link', target: '/etc/hello.conf' },
        { path: '/etc/hello-hard', target: '/etc/hello.conf', hard: true },
      ],
    },
    systemd: {
      units: [
        { name: 'hello.service', enabled: true, contents: '[Unit]\nDescription=hello\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' },
        { name: 'kubelet.service', dropins: [{ name: '10-bosun.conf', contents: '[Service]\nEnvironment=BOSUN=1\n' }] },
        { name: 'off.service', enabled: false, contents: '[Service]\nExecStart=/bin/false\n' },
        { name: 'masked.service', mask: true },
      ],
    },
    kernelArguments: { shouldExist: ['nosmt', 'bosun.test=1'] },
  };
}

function pointer(): string {
  return JSON.stringify({
    ignition: {
      version: '3.2.0',
      config: { merge: [{ source: `https://127.0.0.1:${mcs.port('tls')}/config/worker` }] },
      security: { tls: { certificateAuthorities: [{ source: encodeDataUrl(ca) }] } },
    },
  });
}

before(async () => {
  http = createServer((req, res) => {
    if (req.url === '/from-http') res.end(HTTP_FILE);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  configDir = mkdtempSync(join(tmpdir(), 'bosun-cloud-mcs-'));
  writeRendered(configDir, 'worker', 'rendered-worker-1', renderedConfig((http.address() as { port: number }).port));
  source = new FileRenderedConfigSource(configDir);
  const authority = await generateCa();
  ca = authority.cert;
  mcs = new MachineConfigServer({
    source, tls: await issueServingCert(authority, ['127.0.0.1']),
    listenTls: { host: '127.0.0.1', port: 0 }, listenHttp: { host: '127.0.0.1', port: 0 },
  });
  await mcs.start();
});

after(async () => {
  await mcs.close();
  await new Promise((r) => http.close(r));
  rmSync(configDir, { recursive: true, force: true });
});

async function bootOne(ignition: 'binary' | 'builtin'): Promise<{ cloud: CloudFixture; root: string; bootId: string }> {
  const cloud = await startCloud({ ignition });
  try {
    const created = await cloud.client.createInstance({ name: `worker-${ignition}`, type: 'local.small', zone: 'local-b', userData: pointer() });
    const up = await waitForBoot(cloud.client, created.id);
    return { cloud, root: join(cloud.dataDir, 'machines', created.id, 'root'), bootId: up.bootId! };
  } catch (e) {
    await cloud.close();
    throw e;
  }
}

// What differs by nature between two machines: their identities and this boot.
const PER_BOOT = ['etc/machine-id', 'proc/sys/kernel/random/boot_id', 'etc/.ignition-result.json'];
// useradd's lock file, left by the real client's useradd; bosun's applier takes no lock.
const USERADD_LOCK = 'etc/.pwd.lock';

// Ignition writes its preset lines from a Go map, in no fixed order.
const PRESETS = 'etc/systemd/system-preset/20-ignition.preset';

function comparable(t: Map<string, TreeNode>): Record<string, TreeNode> {
  const out: Record<string, TreeNode> = {};
  for (const [path, node] of t) {
    if (path === USERADD_LOCK) continue;
    out[path] = PER_BOOT.includes(path) ? { ...node, content: '(per boot)' } : node;
    if (path === PRESETS) out[path] = { ...node, content: node.content!.split('\n').sort().join('\n') };
  }
  return out;
}

test('the real Ignition client and bosun\'s applier boot a pointer config into the same root, holding exactly the rendered config', { skip: skipWithoutIgnition, timeout: 120_000 }, async () => {
  const real = await bootOne('binary');
  const own = await bootOne('builtin').catch(async (e) => { await real.cloud.close(); throw e; });
  try {
    const realTree = tree(real.root);
    const ownTree = tree(own.root);
    assert.deepEqual(comparable(ownTree), comparable(realTree));

    // And the tree is the rendered config, not merely the same on both sides.
    for (const { root, bootId } of [real, own]) {
      const read = (p: string) => readFileSync(join(root, p), 'utf8');
      const mode = (p: string) => statSync(join(root, p)).mode & 0o7777;
      assert.equal(read('etc/hello.conf'), 'hello world\n');
      assert.equal(read('etc/secret.conf'), 'secret\n');
      assert.equal(mode('etc/secret.conf'), 0o600);
      assert.equal(read('etc/motd.d/bosun'), `${MOTD}appended\n`);
      assert.equal(mode('etc/motd.d/bosun'), 0o644);
      assert.equal(read('usr/local/bin/from-http'), HTTP_FILE);
      assert.equal(mode('usr/local/bin/from-http'), 0o755);
      assert.equal(mode('etc/bosun.d'), 0o750);
      assert.equal(statSync(join(root, 'etc/core-owned.conf')).uid, 1000);
      assert.equal(statSync(join(root, 'etc/hello-hard')).ino, statSync(join(root, 'etc/hello.conf')).ino);
      assert.match(read('etc/passwd'), /^core:x:1000:1000:CoreOS Admin:\/var\/home\/core:\/bin\/bash$/m, 'the image\'s core, given keys');
      assert.equal(read('home/core/.ssh/authorized_keys.d/ignition'), KEYS.map((k) => `${k}\n`).join(''));
      assert.equal(mode('home/core/.ssh/authorized_keys.d/ignition'), 0o600);
      assert.equal(read('etc/systemd/system/hello.service'), renderedConfig(0).systemd!.units![0].contents);
      assert.equal(read('etc/systemd/system/kubelet.service.d/10-bosun.conf'), '[Service]\nEnvironment=BOSUN=1\n');
      assert.equal(ownTree.get('etc/systemd/system/masked.service')?.target, '/dev/null');
      assert.deepEqual(read('etc/systemd/system-preset/20-ignition.preset').trim().split('\n').sort(), ['disable off.service', 'enable hello.service']);
      assert.equal(read('etc/kernel/cmdline'), 'nosmt bosun.test=1\n');
      assert.equal(read('proc/cmdline'), 'nosmt bosun.test=1\n');
      assert.equal(read('proc/sys/kernel/random/boot_id'), `${bootId}\n`);
      assert.equal(existsSync(join(root, 'boot/ignition.firstboot')), false, 'the first-boot flag is gone');
      assert.deepEqual(Object.keys(JSON.parse(read('etc/.ignition-result.json'))).sort(), ['provisioningBootID', 'provisioningDate', 'userConfigProvided']);
    }
    assert.equal(JSON.parse(readFileSync(join(own.root, 'etc/.ignition-result.json'), 'utf8')).provisioningBootID, own.bootId);
  } finally {
    await real.cloud.close();
    await own.cloud.close();
  }
});

test('a machine waits for its machine-config server: Booting with the reason, then boots when the pool is served', { timeout: 60_000 }, async () => {
  const cloud = await startCloud({ ignition: 'builtin' });
  try {
    const pointerToInfra = pointer().replace('/config/worker', '/config/infra');
    const created = await cloud.client.createInstance({ name: 'infra-0', userData: pointerToInfra });
    const waiting = await waitForInstance(cloud.client, created.id, 'retrying the fetch', (i) => /config\/infra: 404/.test(i.machine.message ?? ''));
    assert.equal(waiting.state, 'pending');
    assert.equal(waiting.machine.phase, 'Booting');
    writeRendered(configDir, 'infra', 'rendered-infra-1', { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/infra', contents: { source: 'data:,infra%0A' } }] } });
    source.reload();
    const up = await waitForInstance(cloud.client, created.id, 'booted', isUp);
    assert.equal(up.machine.message, undefined);
    assert.equal(readFileSync(join(cloud.dataDir, 'machines', created.id, 'root/etc/infra'), 'utf8'), 'infra\n');
  } finally {
    await cloud.close();
  }
});

test('a machine stuck fetching its config can be stopped and terminated at once', { timeout: 60_000 }, async () => {
  const cloud = await startCloud({ ignition: 'builtin' });
  try {
    const created = await cloud.client.createInstance({ name: 'stuck-0', userData: pointer().replace('/config/worker', '/config/nowhere') });
    await waitForInstance(cloud.client, created.id, 'retrying the fetch', (i) => /config\/nowhere: 404/.test(i.machine.message ?? ''));
    assert.equal((await cloud.client.operate('stop', created.id)).state, 'stopping');
    const stopped = await waitForInstance(cloud.client, created.id, 'stopped', (i) => i.state === 'stopped', 5_000);
    assert.equal(stopped.machine.phase, 'Down');
    assert.equal(existsSync(join(cloud.dataDir, 'machines', created.id, 'root/boot/ignition.firstboot')), true, 'Ignition has not run yet');
    assert.deepEqual(cloud.runtime.of(created.id), [], 'the runtime never started');
    await cloud.client.operate('start', created.id);
    await waitForInstance(cloud.client, created.id, 'retrying again', (i) => i.state === 'pending' && /404/.test(i.machine.message ?? ''));
    const started = Date.now();
    assert.equal((await cloud.client.operate('terminate', created.id)).state, 'terminated');
    assert.ok(Date.now() - started < 5_000);
    assert.equal(existsSync(join(cloud.dataDir, 'machines', created.id)), false);
  } finally {
    await cloud.close();
  }
});
