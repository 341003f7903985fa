// Table-driven Ignition validation: every problem Ignition reports, named by field path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../src/ignition/validate.js';
import { parseConfig, IgnitionConfigError } from '../../src/ignition/parse.js';

const v = (version: string, rest: object = {}) => ({ ignition: { version }, ...rest });
const file = (path: string, extra: object = {}) => ({ path, contents: { source: 'data:,x' }, ...extra });

const cases: { name: string; config: unknown; problems: [string, RegExp][] }[] = [
  { name: 'minimal 3.0', config: v('3.0.0'), problems: [] },
  { name: 'minimal 3.5', config: v('3.5.0'), problems: [] },
  { name: 'missing version', config: { ignition: {} }, problems: [['ignition.version', /required/]] },
  { name: 'unknown version 3.6.0', config: v('3.6.0'), problems: [['ignition.version', /unsupported config version "3.6.0"/]] },
  { name: 'spec 2 is not read as input', config: v('2.2.0'), problems: [['ignition.version', /unsupported/]] },
  { name: 'experimental', config: v('3.5.0-experimental'), problems: [['ignition.version', /unsupported/]] },
  { name: 'garbage version', config: v('three'), problems: [['ignition.version', /not a valid version/]] },
  { name: 'unknown top-level field', config: v('3.2.0', { storag: {} }), problems: [['storag', /not a field/]] },
  { name: 'kernelArguments below 3.3', config: v('3.2.0', { kernelArguments: { shouldExist: ['a'] } }), problems: [['kernelArguments', /introduced in 3.3/]] },
  { name: 'kernelArguments at 3.3', config: v('3.3.0', { kernelArguments: { shouldExist: ['a'] } }), problems: [] },
  { name: 'luks below 3.2', config: v('3.1.0', { storage: { luks: [{ name: 'x' }] } }), problems: [['storage.luks', /introduced in 3.2/]] },
  { name: 'luks cex below 3.5', config: v('3.4.0', { storage: { luks: [{ name: 'x', cex: { enabled: true } }] } }), problems: [['storage.luks[0].cex', /introduced in 3.5/]] },
  { name: 'httpHeaders in 3.0', config: v('3.0.0', { ignition: { version: '3.0.0', config: { merge: [{ source: 'https://a/b', httpHeaders: [{ name: 'a', value: 'b' }] }] } } }), problems: [['ignition.config.merge[0].httpHeaders', /introduced in 3.1/]] },
  { name: 'wrong type', config: v('3.2.0', { storage: { files: [{ path: '/a', mode: '0644' }] } }), problems: [['storage.files[0].mode', /integer/]] },
  { name: 'mode too large', config: v('3.2.0', { storage: { files: [file('/a', { mode: 65535 })] } }), problems: [['storage.files[0].mode', /invalid mode 65535/]] },
  { name: 'negative directory mode', config: v('3.2.0', { storage: { directories: [{ path: '/d', mode: -1 }] } }), problems: [['storage.directories[0].mode', /invalid mode/]] },
  { name: 'relative path', config: v('3.2.0', { storage: { files: [file('etc/a')] } }), problems: [['storage.files[0].path', /not absolute/]] },
  { name: 'duplicate file path', config: v('3.2.0', { storage: { files: [file('/a'), file('/a')] } }), problems: [['storage.files[1].path', /duplicate path "\/a" \(also storage.files\[0\]\)/]] },
  { name: 'file and directory at the same path', config: v('3.2.0', { storage: { files: [file('/a')], directories: [{ path: '/a' }] } }), problems: [['storage.directories[0].path', /duplicate path/]] },
  { name: 'link and file at the same path', config: v('3.2.0', { storage: { files: [file('/a')], links: [{ path: '/a', target: '/b' }] } }), problems: [['storage.links[0].path', /duplicate path/]] },
  // Ignition requires a link target from spec 3.3 on (ErrLinkTargetRequired); 3.0–3.2 do not check it.
  { name: 'link without target', config: v('3.3.0', { storage: { links: [{ path: '/l' }] } }), problems: [['storage.links[0].target', /required/]] },
  { name: 'link without target before 3.3', config: v('3.2.0', { storage: { links: [{ path: '/l' }] } }), problems: [] },
  { name: 'bad base64 data URL', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'data:;base64,!!!' } }] } }), problems: [['storage.files[0].contents.source', /invalid base64/]] },
  { name: 'bad percent escape', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'data:,%zz' } }] } }), problems: [['storage.files[0].contents.source', /percent escape/]] },
  { name: 'data URL without comma', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'data:text/plain' } }] } }), problems: [['storage.files[0].contents.source', /no comma/]] },
  { name: 'unsupported scheme', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'ftp://h/x' } }] } }), problems: [['storage.files[0].contents.source', /scheme "ftp"/]] },
  { name: 'not a URL', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'just text' } }] } }), problems: [['storage.files[0].contents.source', /not a valid URL/]] },
  { name: 'arn before 3.4', config: v('3.3.0', { storage: { files: [{ path: '/a', contents: { source: 'arn:aws:s3:::b/k' } }] } }), problems: [['storage.files[0].contents.source', /scheme "arn"/]] },
  { name: 'bad compression', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'data:,x', compression: 'xz' } }] } }), problems: [['storage.files[0].contents.compression', /xz/]] },
  { name: 'bad hash', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'https://h/x', verification: { hash: 'md5-abc' } } }] } }), problems: [['storage.files[0].contents.verification.hash', /invalid hash/]] },
  { name: 'merge without source', config: { ignition: { version: '3.2.0', config: { merge: [{}] } } }, problems: [['ignition.config.merge[0].source', /required/]] },
  { name: 'duplicate unit', config: v('3.2.0', { systemd: { units: [{ name: 'a.service' }, { name: 'a.service' }] } }), problems: [['systemd.units[1].name', /duplicate unit name/]] },
  { name: 'unit without suffix', config: v('3.2.0', { systemd: { units: [{ name: 'kubelet' }] } }), problems: [['systemd.units[0].name', /unit type suffix/]] },
  { name: 'duplicate dropin', config: v('3.2.0', { systemd: { units: [{ name: 'a.service', dropins: [{ name: 'x.conf' }, { name: 'x.conf' }] }] } }), problems: [['systemd.units[0].dropins[1].name', /duplicate dropin/]] },
  { name: 'dropin not .conf', config: v('3.2.0', { systemd: { units: [{ name: 'a.service', dropins: [{ name: 'x' }] }] } }), problems: [['systemd.units[0].dropins[0].name', /\.conf/]] },
  { name: 'duplicate user', config: v('3.2.0', { passwd: { users: [{ name: 'core' }, { name: 'core' }] } }), problems: [['passwd.users[1].name', /duplicate user/]] },
  { name: 'kernel arg both ways', config: v('3.3.0', { kernelArguments: { shouldExist: ['a'], shouldNotExist: ['a'] } }), problems: [['kernelArguments.shouldNotExist[0]', /also in/]] },
  { name: 'not an object', config: [], problems: [['', /JSON object/]] },
  // A null list item is an empty entry to Ignition (its path is then missing), not a crash of the validator.
  { name: 'null file entry', config: v('3.2.0', { storage: { files: [null] } }), problems: [['storage.files[0].path', /required/]] },
];

for (const c of cases) {
  test(`validate: ${c.name}`, () => {
    const got = validateConfig(c.config);
    assert.equal(got.length, c.problems.length, JSON.stringify(got));
    c.problems.forEach(([path, re], i) => {
      assert.equal(got[i].path, path);
      assert.match(got[i].message, re);
    });
  });
}

test('parseConfig: error message names each field', () => {
  assert.throws(() => parseConfig('{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"a","mode":99999}]}}'), (e: unknown) => {
    assert.ok(e instanceof IgnitionConfigError);
    assert.match(e.message, /storage\.files\[0\]\.path: "a" is not absolute/);
    assert.match(e.message, /storage\.files\[0\]\.mode: invalid mode/);
    return true;
  });
  assert.throws(() => parseConfig('{not json'), /not valid JSON/);
  assert.equal(parseConfig({ ignition: { version: '3.4.0' } }).minor, 4);
});

// What Ignition warns about and still applies, against what it refuses (its config/v3_*/types).
const severities: { name: string; config: unknown; problems: [string, 'error' | 'warning', RegExp][] }[] = [
  { name: 'spec-2 leftovers are unused keys', config: v('3.2.0', { networkd: {}, storage: { files: [file('/etc/a', { filesystem: 'root' })] } }), problems: [['networkd', 'warning', /unused key/], ['storage.files[0].filesystem', 'warning', /unused key/]] },
  { name: 'a field of a newer spec is an unused key', config: v('3.1.0', { storage: { luks: [{ name: 'x', device: 'relative' }] } }), problems: [['storage.luks', 'warning', /introduced in 3\.2/]] },
  { name: 'setuid before 3.6 warns', config: v('3.2.0', { storage: { files: [file('/usr/bin/x', { mode: 0o4755 })], directories: [{ path: '/tmp/d', mode: 0o1777 }] } }), problems: [['storage.files[0].mode', 'warning', /setuid\/setgid\/sticky bits are not supported or functional in spec versions older than 3\.6\.0/], ['storage.directories[0].mode', 'warning', /01777/]] },
  { name: 'setuid in 3.5 still warns', config: v('3.5.0', { storage: { files: [file('/usr/bin/x', { mode: 0o2755 })] } }), problems: [['storage.files[0].mode', 'warning', /setuid/]] },
  { name: 'sha256 from 3.1', config: v('3.1.0', { storage: { files: [{ path: '/a', contents: { source: 'https://h/x', verification: { hash: `sha256-${'a'.repeat(64)}` } } }] } }), problems: [] },
  { name: 'sha256 not in 3.0', config: v('3.0.0', { storage: { files: [{ path: '/a', contents: { source: 'https://h/x', verification: { hash: `sha256-${'a'.repeat(64)}` } } }] } }), problems: [['storage.files[0].contents.verification.hash', 'error', /invalid hash/]] },
  { name: 'plain-HTTP proxy for HTTPS warns', config: { ignition: { version: '3.1.0', proxy: { httpProxy: 'http://p:3128', httpsProxy: 'http://p:3128' } } }, problems: [['ignition.proxy.httpsProxy', 'warning', /insecure plaintext HTTP proxy/]] },
  { name: 'a proxy must be http(s)', config: { ignition: { version: '3.1.0', proxy: { httpProxy: 'socks5://p:1080' } } }, problems: [['ignition.proxy.httpProxy', 'error', /proxies must be http\(s\)/]] },
  { name: 'owner on a hard link warns', config: v('3.3.0', { storage: { files: [file('/a')], links: [{ path: '/l', target: '/a', hard: true, user: { name: 'core' } }] } }), problems: [['storage.links[0].user.name', 'warning', /ignored for hard link/]] },
  { name: 'gs from 3.2', config: v('3.2.0', { storage: { files: [{ path: '/a', contents: { source: 'gs://bucket/key' } }] } }), problems: [] },
  { name: 'gs not in 3.1', config: v('3.1.0', { storage: { files: [{ path: '/a', contents: { source: 'gs://bucket/key' } }] } }), problems: [['storage.files[0].contents.source', 'error', /scheme "gs"/]] },
  { name: 'an s3 versionId may not be empty', config: v('3.0.0', { storage: { files: [{ path: '/a', contents: { source: 's3://bucket/key?versionId=' } }] } }), problems: [['storage.files[0].contents.source', 'error', /version ID/]] },
  { name: 'a warning does not hide an error', config: v('3.2.0', { networkd: {}, storage: { files: [file('etc/a')] } }), problems: [['networkd', 'warning', /unused key/], ['storage.files[0].path', 'error', /not absolute/]] },
];

for (const c of severities) {
  test(`severity: ${c.name}`, () => {
    const got = validateConfig(c.config).map((p) => [p.path, p.warning ? 'warning' : 'error', p.message] as const);
    assert.equal(got.length, c.problems.length, JSON.stringify(got));
    c.problems.forEach(([path, severity, re], i) => {
      assert.deepEqual(got[i].slice(0, 2), [path, severity]);
      assert.match(got[i][2], re);
    });
  });
}

test('parseConfig: unused keys are dropped and reported as warnings; errors still throw', () => {
  const parsed = parseConfig({ ignition: { version: '3.2.0' }, networkd: {}, storage: { files: [{ path: '/etc/a', filesystem: 'root', mode: 0o644, contents: { source: 'data:,x' } }] } });
  assert.deepEqual(parsed.config, { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/a', mode: 0o644, contents: { source: 'data:,x' } }] } });
  assert.deepEqual(parsed.warnings.map((w) => w.path), ['networkd', 'storage.files[0].filesystem']);
  assert.throws(() => parseConfig({ ignition: { version: '3.2.0' }, networkd: {}, storage: { files: [{ path: 'etc/a' }] } }), (e: unknown) => {
    assert.ok(e instanceof IgnitionConfigError);
    assert.equal(e.message, 'invalid Ignition config: storage.files[0].path: "etc/a" is not absolute');
    return true;
  });
});
