// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// bosun's Ignition against the real client, case by case: the same config on the same prepared
// root through both firmwares must succeed or fail alike and leave identical trees. The cases
// are the edges of Ignition's files stage — existing nodes with and without overwrite, existing
// users, groups, replace configs, kernel arguments, units unmasked — where a copy of Ignition's
// semantics would drift first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { encodeDataUrl } from '../../src/ignition/data-url.js';
import { Firmware, createMachineDisk, machineDir, type IgnitionMode } from '../../src/cloud/firmware.js';
import { skipWithoutIgnition } from '../helpers/ignition.js';
import { tree, type TreeNode } from './cloud-fixture.js';

interface Case {
  name: string;
  /** In the root before the first boot: files (path → contents), symbolic links ('-> target'),
   *  directories (a path ending in '/' → 'uid:gid' owning it). */
  seed?: Record<string, string>;
  config: Record<string, unknown>;
  ok: boolean;
}

const v = (rest: Record<string, unknown>) => ({ ignition: { version: '3.3.0' }, ...rest });
const file = (path: string, extra: Record<string, unknown> = {}) => ({ path, ...extra });

const CASES: Case[] = [
  { name: 'existing file, other contents, overwrite false', seed: { 'etc/a': 'old\n' }, config: v({ storage: { files: [file('/etc/a', { contents: { source: 'data:,new%0A' } })] } }), ok: false },
  { name: 'existing file, other contents, overwrite true', seed: { 'etc/a': 'old\n' }, config: v({ storage: { files: [file('/etc/a', { overwrite: true, contents: { source: 'data:,new%0A' } })] } }), ok: true },
  { name: 'existing file, no contents: kept, appended to, mode set', seed: { 'etc/a': 'old\n' }, config: v({ storage: { files: [file('/etc/a', { mode: 384, append: [{ source: 'data:,more%0A' }] })] } }), ok: true },
  { name: 'existing link, other target, overwrite false', seed: { 'etc/l': '-> /etc/x' }, config: v({ storage: { links: [file('/etc/l', { target: '/etc/y' })] } }), ok: false },
  { name: 'existing link, other target, overwrite true', seed: { 'etc/l': '-> /etc/x' }, config: v({ storage: { links: [file('/etc/l', { target: '/etc/y', overwrite: true })] } }), ok: true },
  { name: 'nested directories and files, modes', config: v({ storage: { directories: [file('/opt/a/b', { mode: 448 }), file('/opt/a', { mode: 457 })], files: [file('/opt/a/b/c/f', { contents: { source: 'data:,x' } })] } }), ok: true },
  { name: 'an existing user gets keys in its own home', seed: { 'etc/passwd': 'root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n', 'etc/group': 'root:x:0:\ncore:x:1000:\n', 'var/home/core/': '1000:1000' }, config: v({ passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA one'] }] } }), ok: true },
  { name: 'a new user with uid, gecos, shell and no home', seed: { 'etc/passwd': 'root:x:0:0:root:/root:/bin/bash\n' }, config: v({ passwd: { users: [{ name: 'svc', uid: 1500, gecos: 'A service', shell: '/sbin/nologin', noCreateHome: true }] } }), ok: true },
  { name: 'existing file, even the same contents, overwrite false', seed: { 'etc/a': 'same\n' }, config: v({ storage: { files: [file('/etc/a', { contents: { source: 'data:,same%0A' } })] } }), ok: false },
  { name: 'a new group, and a new user in it', seed: { 'etc/passwd': 'root:x:0:0:root:/root:/bin/bash\n', 'etc/group': 'root:x:0:\nusers:x:100:\n' }, config: v({ passwd: { groups: [{ name: 'admins', gid: 1200 }], users: [{ name: 'ops', groups: ['admins'], primaryGroup: 'users' }] } }), ok: true },
  { name: 'the image\'s core user: ssh keys in /var/home/core, a password in /etc/shadow', config: v({ passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA one', 'ssh-ed25519 AAAA two'], passwordHash: '$6$rounds=4096$salt$hash' }] } }), ok: true },
  { name: 'new groups and users beside the image\'s: ids after the highest, shadow and gshadow entries, core\'s groups joined', config: v({ passwd: { groups: [{ name: 'admins', gid: 1200 }, { name: 'ops' }], users: [{ name: 'svc', uid: 1500, noCreateHome: true }, { name: 'ops', groups: ['admins', 'wheel'] }] } }), ok: true },
  { name: 'kernel arguments added and removed', seed: { 'etc/kernel/cmdline': 'quiet mitigations=off\n' }, config: v({ kernelArguments: { shouldExist: ['nosmt'], shouldNotExist: ['mitigations=off'] } }), ok: true },
  { name: 'a file owned by an unknown user', config: v({ storage: { files: [file('/etc/o', { user: { name: 'nobody-here' }, contents: { source: 'data:,x' } })] } }), ok: false },
  { name: 'replace: the referenced config is applied instead', config: v({ ignition: { version: '3.3.0', config: { replace: { source: encodeDataUrl(JSON.stringify(v({ storage: { files: [file('/etc/replaced', { contents: { source: 'data:,yes' } })] } }))) } } }, storage: { files: [file('/etc/not-applied', { contents: { source: 'data:,no' } })] } }), ok: true },
  { name: 'merge of two inline configs: the later wins per path', config: v({ ignition: { version: '3.3.0', config: { merge: [
    { source: encodeDataUrl(JSON.stringify(v({ storage: { files: [file('/etc/m', { contents: { source: 'data:,first' } }), file('/etc/only-first', { contents: { source: 'data:,1' } })] } }))) },
    { source: encodeDataUrl(JSON.stringify(v({ storage: { files: [file('/etc/m', { overwrite: true, contents: { source: 'data:,second' } })] } }))) },
  ] } } }), ok: true },
  { name: 'a verification hash that does not match', config: v({ storage: { files: [file('/etc/h', { contents: { source: 'data:,x', verification: { hash: `sha512-${'0'.repeat(128)}` } } })] } }), ok: false },
  { name: 'a unit unmasked, another with only a dropin', seed: { 'etc/systemd/system/was-masked.service': '-> /dev/null' }, config: v({ systemd: { units: [{ name: 'was-masked.service', mask: false }, { name: 'only-dropin.service', dropins: [{ name: 'a.conf', contents: '[Unit]\n' }] }] } }), ok: true },
];

async function bootWith(mode: IgnitionMode, c: Case): Promise<{ ok: boolean; error?: string; tree: Record<string, TreeNode> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `bosun-ign-${mode}-`));
  chmodSync(dataDir, 0o755);
  try {
    const m = machineDir(dataDir, 'i-00000000000000000');
    createMachineDisk(m, JSON.stringify(c.config));
    for (const [path, content] of Object.entries(c.seed ?? {})) {
      mkdirSync(dirname(join(m.root, path)), { recursive: true });
      if (path.endsWith('/')) {
        mkdirSync(join(m.root, path), { recursive: true });
        const [uid, gid] = content.split(':').map(Number);
        chownSync(join(m.root, path), uid, gid);
      } else if (content.startsWith('-> ')) symlinkSync(content.slice(3), join(m.root, path));
      else writeFileSync(join(m.root, path), content);
    }
    let error: string | undefined;
    try { await new Firmware({ ignition: mode }).boot(m, new AbortController().signal, () => {}); } catch (e) { error = (e as Error).message; }
    const t: Record<string, TreeNode> = {};
    for (const [path, node] of tree(m.root)) {
      // shadow-utils' lock and backup files (useradd/usermod in the real client) are not Ignition's.
      if (['etc/.pwd.lock', 'etc/machine-id', 'proc/sys/kernel/random/boot_id', 'etc/.ignition-result.json', 'etc/passwd-', 'etc/group-', 'etc/shadow-', 'etc/gshadow-'].includes(path)) continue;
      t[path] = node;
    }
    return { ok: error === undefined, error, tree: t };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const c of CASES) {
  test(`same as Ignition: ${c.name}`, { skip: skipWithoutIgnition, timeout: 60_000 }, async () => {
    const real = await bootWith('binary', c);
    const own = await bootWith('builtin', c);
    assert.equal(real.ok, c.ok, `the real client ${real.ok ? 'succeeded' : `failed: ${real.error}`}`);
    assert.equal(own.ok, c.ok, `bosun's applier ${own.ok ? 'succeeded' : `failed: ${own.error}`}`);
    if (c.ok) assert.deepEqual(own.tree, real.tree);
  });
}
