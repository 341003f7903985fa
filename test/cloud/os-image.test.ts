// A new machine's disk holds what an RHCOS image brings (src/cloud/os-image.ts): the accounts
// (root and `core`, as an RHCOS node's /etc/passwd, group, shadow and gshadow have them), ostree's
// layout with its links kept inside the machine root, and the directories OpenShift's
// MachineConfigs write into; and Ignition — the real client and bosun's — gives the image's
// `core` its ssh keys on first boot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Firmware, createMachineDisk, machineDir, type IgnitionMode } from '../../src/cloud/firmware.js';
import { skipWithoutIgnition } from '../helpers/ignition.js';

const asRoot = process.getuid?.() === 0;

function newMachine(t: { after(fn: () => void): void }, userData?: object) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-os-image-'));
  // The real client writes ssh keys as the user, who must be able to reach the root.
  chmodSync(dataDir, 0o755);
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const m = machineDir(dataDir, 'i-0123456789abcdef0');
  createMachineDisk(m, userData && JSON.stringify(userData));
  return m;
}

test('a new machine has RHCOS\'s accounts: root, and core (1000:1000, CoreOS Admin, /var/home/core) in adm, wheel, sudo and systemd-journal', (t) => {
  const { root } = newMachine(t);
  const read = (p: string) => readFileSync(join(root, p), 'utf8');
  assert.equal(read('etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n');
  assert.equal(read('etc/group'), 'root:x:0:\nadm:x:4:core\nwheel:x:10:core\nsudo:x:16:core\nsystemd-journal:x:190:core\ncore:x:1000:\n');
  assert.equal(read('etc/shadow'), 'root:*:18367:0:99999:7:::\ncore:*:18939:0:99999:7:::\n');
  assert.equal(read('etc/gshadow'), 'root:::\nadm:::core\nwheel:::core\nsudo:::core\nsystemd-journal:::core\ncore:!::\n');
  for (const f of ['etc/shadow', 'etc/gshadow']) assert.equal(statSync(join(root, f)).mode & 0o7777, asRoot ? 0o000 : 0o600, f);
  const home = statSync(join(root, 'home/core'));
  assert.ok(home.isDirectory());
  assert.equal(home.mode & 0o7777, 0o700);
  if (asRoot) assert.deepEqual([home.uid, home.gid], [1000, 1000]);
  assert.equal(realpathSync(join(root, 'home/core')), join(realpathSync(root), 'var/home/core'));
});

test('ostree\'s layout, its links relative and inside the root, and the directories OpenShift\'s MachineConfigs write into', (t) => {
  const { root } = newMachine(t);
  const links: Record<string, string> = {
    home: 'var/home', root: 'var/roothome', opt: 'var/opt', srv: 'var/srv', mnt: 'var/mnt', 'usr/local': '../var/usrlocal',
    bin: 'usr/bin', sbin: 'usr/sbin', lib: 'usr/lib', lib64: 'usr/lib64',
  };
  const realRoot = realpathSync(root);
  for (const [path, target] of Object.entries(links)) {
    assert.ok(lstatSync(join(root, path)).isSymbolicLink(), `${path} is a link`);
    assert.equal(realpathSync(join(root, path)), join(realRoot, path, '..', target), `${path} → ${target}`);
  }
  for (const dir of [
    'etc/kubernetes/manifests', 'etc/systemd/system/multi-user.target.wants', 'etc/containers/registries.conf.d', 'etc/crio/crio.conf.d',
    'etc/pki/ca-trust/source/anchors', 'etc/NetworkManager/conf.d', 'etc/NetworkManager/dispatcher.d', 'etc/ssh/sshd_config.d',
    'etc/sysctl.d', 'etc/modules-load.d', 'etc/tmpfiles.d', 'etc/udev/rules.d', 'var/lib/kubelet', 'var/lib/containers', 'usr/local/bin',
  ]) assert.ok(statSync(join(root, dir)).isDirectory(), dir);
  for (const dir of ['tmp', 'var/tmp']) assert.equal(statSync(join(root, dir)).mode & 0o7777, 0o1777, dir);
  assert.equal(readFileSync(join(root, 'etc/selinux/config'), 'utf8'), 'SELINUX=disabled\nSELINUXTYPE=targeted\n');
});

for (const mode of ['binary', 'builtin'] as IgnitionMode[]) {
  test(`Ignition (${mode === 'binary' ? 'the real client' : 'bosun\'s'}) gives the image's core its ssh keys on first boot`, { skip: mode === 'binary' && skipWithoutIgnition, timeout: 60_000 }, async (t) => {
    const keys = ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFirstBoot admin@example.com'];
    const m = newMachine(t, { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: keys }] } });
    await new Firmware({ ignition: mode }).boot(m, new AbortController().signal, () => {});
    const file = join(m.root, 'home/core/.ssh/authorized_keys.d/ignition');
    assert.equal(readFileSync(file, 'utf8'), `${keys[0]}\n`);
    assert.equal(realpathSync(file), join(realpathSync(m.root), 'var/home/core/.ssh/authorized_keys.d/ignition'));
    assert.equal(statSync(file).mode & 0o7777, 0o600);
    for (const dir of ['.ssh', '.ssh/authorized_keys.d']) assert.equal(statSync(join(m.root, 'home/core', dir)).mode & 0o7777, 0o700);
    if (asRoot) assert.deepEqual([statSync(file).uid, statSync(file).gid], [1000, 1000]);
    assert.match(readFileSync(join(m.root, 'etc/passwd'), 'utf8'), /^core:x:1000:1000:CoreOS Admin:\/var\/home\/core:\/bin\/bash$/m, 'core is the image\'s, unchanged');
  });
}
