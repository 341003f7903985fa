// The daemon's disk side on a real directory (src/mco/daemon/writer.ts, validate.ts): originals
// kept and restored, "no original" markers, validation messages as OpenShift words them, a
// failing write rolled back; and on a new local machine's root (RHCOS's image, src/cloud/
// os-image.ts) the `core` user's ssh keys and password, and OpenShift's own MachineConfigs,
// applied cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { createMachineDisk, machineDir } from '../../src/cloud/firmware.js';
import { readCmdline } from '../../src/ignition/apply/kargs-stage.js';
import { diffConfigs } from '../../src/mco/daemon/diff.js';
import { writeDiff, WriteError } from '../../src/mco/daemon/writer.js';
import { rootReader, validateOnDisk } from '../../src/mco/daemon/validate.js';
import { encodeDataUrl } from '../../src/ignition/data-url.js';
import type { MachineConfig, MachineConfigSpec } from '../../src/mco/controller/types.js';

const file = (path: string, text: string, mode = 0o644) => ({ path, mode, overwrite: true, contents: { source: encodeDataUrl(text) } });
const spec = (files: object[], extra: Partial<MachineConfigSpec> = {}, units: object[] = []): MachineConfigSpec => ({ config: { ignition: { version: '3.2.0' }, storage: { files }, systemd: { units } }, ...extra });
const EMPTY = spec([]);

function root(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcd-writer-'));
  mkdirSync(join(dir, 'etc'), { recursive: true });
  writeFileSync(join(dir, 'etc/existing'), 'original\n', { mode: 0o600 });
  writeFileSync(join(dir, 'etc/blocked'), 'a file where a directory is wanted\n');
  return dir;
}

test('write keeps originals, validates, reports drift in OpenShift\'s words, and restores on removal', (t) => {
  const dir = root();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const c1 = spec([file('/etc/existing', 'managed\n'), file('/etc/new', 'new\n', 0o640)], { kernelArguments: ['nosmt'] }, [{ name: 'x.service', enabled: true, contents: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' }]);
  writeDiff(dir, diffConfigs(EMPTY, c1));
  assert.equal(readFileSync(join(dir, 'etc/existing'), 'utf8'), 'managed\n');
  assert.equal(readFileSync(join(dir, 'etc/machine-config-daemon/orig/etc/existing.mcdorig'), 'utf8'), 'original\n');
  assert.ok(existsSync(join(dir, 'etc/machine-config-daemon/noorig/etc/new.mcdnoorig')));
  assert.equal(statSync(join(dir, 'etc/new')).mode & 0o777, 0o640);
  assert.equal(readFileSync(join(dir, 'etc/kernel/cmdline'), 'utf8'), 'nosmt\n');
  // Before the boot the running kernel does not have the argument yet.
  assert.equal(validateOnDisk(c1, rootReader(dir)), 'missing expected kernel arguments: nosmt');
  mkdirSync(join(dir, 'proc'));
  writeFileSync(join(dir, 'proc/cmdline'), 'ro nosmt\n');
  assert.equal(validateOnDisk(c1, rootReader(dir)), undefined);

  writeFileSync(join(dir, 'etc/new'), 'edited\n');
  assert.equal(validateOnDisk(c1, rootReader(dir)), 'content mismatch for file "/etc/new"');
  writeFileSync(join(dir, 'etc/new'), 'new\n');
  chmodSync(join(dir, 'etc/new'), 0o644);
  assert.equal(validateOnDisk(c1, rootReader(dir)), 'mode mismatch for file: "/etc/new"; expected: -rw-r-----/416/0640; received: -rw-r--r--/420/0644');
  chmodSync(join(dir, 'etc/new'), 0o640);
  assert.equal(readFileSync(join(dir, 'etc/systemd/system/x.service'), 'utf8').includes('ExecStart'), true);
  assert.equal(readlinkSync(join(dir, 'etc/systemd/system/multi-user.target.wants/x.service')), '/etc/systemd/system/x.service', 'enabled as systemctl enable links it');

  writeDiff(dir, diffConfigs(c1, EMPTY));
  assert.equal(readFileSync(join(dir, 'etc/existing'), 'utf8'), 'original\n');
  assert.equal(statSync(join(dir, 'etc/existing')).mode & 0o777, 0o600);
  assert.equal(existsSync(join(dir, 'etc/new')), false);
  assert.equal(existsSync(join(dir, 'etc/machine-config-daemon/orig/etc/existing.mcdorig')), false);
  assert.equal(existsSync(join(dir, 'etc/machine-config-daemon/noorig/etc/new.mcdnoorig')), false);
  assert.equal(existsSync(join(dir, 'etc/systemd/system/x.service')), false);
  assert.equal(readFileSync(join(dir, 'etc/kernel/cmdline'), 'utf8'), '\n');
});

test('a write that fails part-way undoes what it wrote and says where it failed', (t) => {
  const dir = root();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bad = spec([file('/etc/a-first', 'x\n'), file('/etc/blocked/inner', 'y\n'), file('/etc/existing', 'z\n')]);
  assert.throws(() => writeDiff(dir, diffConfigs(EMPTY, bad)), (e: unknown) => e instanceof WriteError && /writing "\/etc\/blocked\/inner"/.test(e.message) && /rolled back 1 path/.test(e.message));
  assert.equal(existsSync(join(dir, 'etc/a-first')), false);
  assert.equal(existsSync(join(dir, 'etc/machine-config-daemon/noorig/etc/a-first.mcdnoorig')), false);
  assert.equal(readFileSync(join(dir, 'etc/existing'), 'utf8'), 'original\n');
});

/** A new local machine's root, as the cloud lays it down before the first boot. */
function machineRoot(t: { after(fn: () => void): void }): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcd-writer-machine-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const m = machineDir(dataDir, 'i-0123456789abcdef0');
  createMachineDisk(m, undefined);
  return m.root;
}

const coreUser = (user: object): MachineConfigSpec => ({ config: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', ...user }] } } });
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIWriterKey admin@example.com';

test('on a new machine, the image\'s core gets ssh keys and a password, validated, and loses them again', (t) => {
  const root = machineRoot(t);
  const withKeys = coreUser({ sshAuthorizedKeys: [KEY], passwordHash: '$6$salt$hash' });
  writeDiff(root, diffConfigs(EMPTY, withKeys));
  const keys = join(root, 'home/core/.ssh/authorized_keys.d/ignition');
  assert.equal(readFileSync(keys, 'utf8'), `${KEY}\n`);
  assert.equal(statSync(keys).mode & 0o777, 0o600);
  for (const dir of ['home/core/.ssh', 'home/core/.ssh/authorized_keys.d']) assert.equal(statSync(join(root, dir)).mode & 0o777, 0o700, dir);
  if (process.getuid?.() === 0) assert.deepEqual([statSync(keys).uid, statSync(keys).gid], [1000, 1000]);
  const today = Math.floor(Date.now() / 86_400_000);
  assert.equal(readFileSync(join(root, 'etc/shadow'), 'utf8'), `root:*:18367:0:99999:7:::\ncore:$6$salt$hash:${today}:0:99999:7:::\n`, 'as usermod -p sets it');
  assert.equal(validateOnDisk(withKeys, rootReader(root)), undefined);

  writeDiff(root, diffConfigs(withKeys, EMPTY));
  assert.equal(existsSync(keys), false);
  assert.match(readFileSync(join(root, 'etc/shadow'), 'utf8'), /^core:\*:\d+:0:99999:7:::$/m, 'no password, as OpenShift\'s daemon leaves core without one');
  assert.match(readFileSync(join(root, 'etc/passwd'), 'utf8'), /^core:x:1000:1000:CoreOS Admin:\/var\/home\/core:\/bin\/bash$/m, 'core itself stays');
});

test('OpenShift\'s own MachineConfigs apply cleanly to a new machine', (t) => {
  const fixture = fileURLToPath(new URL('./fixtures/openshift-machineconfigs.yaml', import.meta.url));
  const mcs = parseAllDocuments(readFileSync(fixture, 'utf8')).map((d) => d.toJS() as MachineConfig);
  assert.ok(mcs.length >= 3);
  for (const mc of mcs) {
    const root = machineRoot(t);
    assert.doesNotThrow(() => writeDiff(root, diffConfigs(EMPTY, mc.spec)), mc.metadata.name);
    // The next boot runs with the kernel arguments written.
    mkdirSync(join(root, 'proc'), { recursive: true });
    writeFileSync(join(root, 'proc/cmdline'), `${readCmdline(root).join(' ')}\n`);
    assert.equal(validateOnDisk(mc.spec, rootReader(root)), undefined, mc.metadata.name);
  }
});
