// Ignition merge (parent ⊕ child, later wins per key) and translation (down to each 3.x, to 2.2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeAll, mergeConfigs } from '../../src/ignition/merge.js';
import { translateToSpec2, translateToSpec3, TranslationError } from '../../src/ignition/translate.js';
import { validateConfig } from '../../src/ignition/validate.js';
import type { IgnitionConfig } from '../../src/ignition/types.js';
import { SPEC3_MINORS } from '../../src/ignition/version.js';

const base: IgnitionConfig = {
  ignition: { version: '3.2.0' },
  storage: {
    files: [
      { path: '/etc/a', mode: 420, contents: { source: 'data:,parent-a' } },
      { path: '/etc/b', mode: 420, contents: { source: 'data:,parent-b' } },
    ],
    directories: [{ path: '/etc/d', mode: 493 }],
  },
  systemd: { units: [{ name: 'a.service', enabled: true, contents: 'A', dropins: [{ name: '1.conf', contents: 'one' }] }] },
  passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['key1'] }] },
};

const mergeCases: { name: string; child: IgnitionConfig; check: (m: IgnitionConfig) => void }[] = [
  {
    name: 'file at same path: child wins, order kept, scalars merged',
    child: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/b', contents: { source: 'data:,child-b' } }] } },
    check: (m) => {
      assert.deepEqual(m.storage!.files!.map((f) => [f.path, f.contents!.source, f.mode]), [['/etc/a', 'data:,parent-a', 420], ['/etc/b', 'data:,child-b', 420]]);
    },
  },
  {
    name: 'new entries appended',
    child: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/c', contents: { source: 'data:,c' } }] } },
    check: (m) => assert.deepEqual(m.storage!.files!.map((f) => f.path), ['/etc/a', '/etc/b', '/etc/c']),
  },
  {
    name: 'a child file replaces a parent directory at the same path',
    child: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/d', contents: { source: 'data:,now-a-file' } }] } },
    check: (m) => {
      assert.deepEqual(m.storage!.directories, []);
      assert.ok(m.storage!.files!.some((f) => f.path === '/etc/d'));
      assert.deepEqual(validateConfig(m), []);
    },
  },
  {
    name: 'unit merged by name, dropins by name, enabled overridden',
    child: { ignition: { version: '3.2.0' }, systemd: { units: [{ name: 'a.service', enabled: false, dropins: [{ name: '1.conf', contents: 'uno' }, { name: '2.conf', contents: 'two' }] }] } },
    check: (m) => {
      const u = m.systemd!.units![0];
      assert.equal(u.enabled, false);
      assert.equal(u.contents, 'A');
      assert.deepEqual(u.dropins, [{ name: '1.conf', contents: 'uno' }, { name: '2.conf', contents: 'two' }]);
    },
  },
  {
    name: 'ssh keys union per user',
    child: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['key2', 'key1'] }] } },
    check: (m) => assert.deepEqual(m.passwd!.users![0].sshAuthorizedKeys, ['key1', 'key2']),
  },
  {
    name: 'version: the newer wins; null in child leaves parent alone',
    child: { ignition: { version: '3.4.0' }, systemd: null, kernelArguments: { shouldExist: ['nosmt'] } },
    check: (m) => {
      assert.equal(m.ignition.version, '3.4.0');
      assert.equal(m.systemd!.units!.length, 1);
      assert.deepEqual(m.kernelArguments, { shouldExist: ['nosmt'] });
    },
  },
];

for (const c of mergeCases) {
  test(`merge: ${c.name}`, () => {
    const before = JSON.stringify(base);
    c.check(mergeConfigs(base, c.child));
    assert.equal(JSON.stringify(base), before, 'parent not modified');
  });
}

test('mergeAll: later configs win', () => {
  const mk = (s: string): IgnitionConfig => ({ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/x', contents: { source: `data:,${s}` } }] } });
  assert.equal(mergeAll([mk('1'), mk('2'), mk('3')]).storage!.files![0].contents!.source, 'data:,3');
});

const rich: IgnitionConfig = {
  ignition: { version: '3.4.0' },
  storage: { files: [{ path: '/etc/a', contents: { source: 'data:,a' } }] },
  kernelArguments: { shouldExist: ['nosmt'] },
};

test('translate to each 3.x: kernelArguments cannot go below 3.3', () => {
  for (const minor of SPEC3_MINORS) {
    if (minor >= 3) {
      const out = translateToSpec3(rich, minor);
      assert.equal(out.ignition.version, `3.${minor}.0`);
      assert.deepEqual(validateConfig(out), []);
    } else {
      assert.throws(() => translateToSpec3(rich, minor), (e: unknown) => e instanceof TranslationError && e.path === 'kernelArguments' && /3\.3/.test(e.message));
    }
  }
});

test('translate down: empty newer fields are dropped, nested newer fields named', () => {
  const out = translateToSpec3({ ...rich, kernelArguments: { shouldExist: [] } }, 0);
  assert.equal(out.kernelArguments, undefined);
  assert.deepEqual(validateConfig(out), []);
  const luks: IgnitionConfig = { ignition: { version: '3.5.0' }, storage: { luks: [{ name: 'root', discard: true }] } };
  assert.throws(() => translateToSpec3(luks, 3), /storage\.luks\[0\]\.discard cannot be expressed \(introduced in 3\.4\)/);
  assert.throws(() => translateToSpec3(luks, 1), /storage\.luks cannot be expressed/);
});

test('translate to 2.2: files, appends, directories, links, units, users', () => {
  const c: IgnitionConfig = {
    ignition: { version: '3.2.0', config: { merge: [{ source: 'https://h/c' }] }, security: { tls: { certificateAuthorities: [{ source: 'data:,ca' }] } } },
    storage: {
      files: [
        { path: '/etc/a', mode: 420, overwrite: true, user: { name: 'core' }, contents: { source: 'data:,a', compression: 'gzip' } },
        { path: '/etc/log', append: [{ source: 'data:,l1' }, { source: 'data:,l2' }] },
      ],
      directories: [{ path: '/d', mode: 493 }],
      links: [{ path: '/l', target: '/etc/a', hard: false }],
    },
    systemd: { units: [{ name: 'a.service', enabled: true, dropins: [{ name: 'x.conf', contents: 'y' }] }] },
    passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['k'] }] },
  };
  assert.deepEqual(translateToSpec2(c), {
    ignition: {
      version: '2.2.0',
      config: { append: [{ source: 'https://h/c' }] },
      security: { tls: { certificateAuthorities: [{ source: 'data:,ca' }] } },
    },
    storage: {
      files: [
        { filesystem: 'root', path: '/etc/a', overwrite: true, user: { name: 'core' }, mode: 420, contents: { source: 'data:,a', compression: 'gzip' } },
        { filesystem: 'root', path: '/etc/log', append: true, contents: { source: 'data:,l1' } },
        { filesystem: 'root', path: '/etc/log', append: true, contents: { source: 'data:,l2' } },
      ],
      directories: [{ filesystem: 'root', path: '/d', mode: 493 }],
      links: [{ filesystem: 'root', path: '/l', target: '/etc/a', hard: false }],
    },
    systemd: { units: [{ name: 'a.service', enabled: true, dropins: [{ name: 'x.conf', contents: 'y' }] }] },
    passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['k'] }] },
  });
});

const v2Failures: [string, IgnitionConfig, string][] = [
  ['kernelArguments', rich, 'kernelArguments'],
  ['disks', { ignition: { version: '3.2.0' }, storage: { disks: [{ device: '/dev/sda' }] } }, 'storage.disks'],
  ['filesystems', { ignition: { version: '3.2.0' }, storage: { filesystems: [{ device: '/dev/sda', path: '/var' }] } }, 'storage.filesystems'],
  ['proxy', { ignition: { version: '3.2.0', proxy: { httpProxy: 'http://p' } } }, 'ignition.proxy'],
  ['httpHeaders', { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/a', contents: { source: 'https://h/a', httpHeaders: [{ name: 'a', value: 'b' }] } }] } }, 'storage.files[0].contents.httpHeaders'],
  ['shouldExist false', { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'old', shouldExist: false }] } }, 'passwd.users[0].shouldExist'],
];
for (const [name, config, path] of v2Failures) {
  test(`translate to 2.2 fails naming ${name}`, () => {
    assert.throws(() => translateToSpec2(config), (e: unknown) => e instanceof TranslationError && e.path === path && e.message.includes('2.2.0'));
  });
}
