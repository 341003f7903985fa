// `bosun apiserver`'s etcd flags and --service-cluster-ip-range: each wrong value or combination is
// refused with a message and a non-zero exit before anything starts, and an etcd that does not
// answer is named in the error; --help documents the service network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBosun } from '../helpers/cli.js';

const cases: Array<{ name: string; args: string[]; error: RegExp }> = [
  { name: 'not a URL', args: ['--etcd-servers', '127.0.0.1:2379'], error: /--etcd-servers takes http\(s\):\/\/HOST:PORT URLs/ },
  { name: 'an empty list', args: ['--etcd-servers', ','], error: /--etcd-servers is empty/ },
  { name: 'TLS flags without servers', args: ['--etcd-cafile', '/etc/hostname'], error: /need --etcd-servers/ },
  { name: 'a certificate without its key', args: ['--etcd-servers', 'https://127.0.0.1:2379', '--etcd-cafile', '/etc/hostname', '--etcd-certfile', '/etc/hostname'], error: /--etcd-certfile and --etcd-keyfile go together/ },
  { name: 'a missing CA file', args: ['--etcd-servers', 'https://127.0.0.1:2379', '--etcd-cafile', '/nonexistent/ca.crt'], error: /--etcd-cafile: \/nonexistent\/ca.crt does not exist/ },
  { name: 'a prefix that is not a path', args: ['--etcd-servers', 'http://127.0.0.1:2379', '--etcd-prefix', 'registry'], error: /--etcd-prefix must start with "\/"/ },
  { name: 'a service network with host bits set', args: ['--service-cluster-ip-range', '127.30.0.1/16'], error: /--service-cluster-ip-range must be an IPv4 network such as 172\.30\.0\.0\/16 \(no host bits set\), got "127\.30\.0\.1\/16"/ },
  { name: 'a service network too large', args: ['--service-cluster-ip-range', '10.0.0.0/8'], error: /--service-cluster-ip-range 10\.0\.0\.0\/8: the prefix must be from \/12 to \/28/ },
  { name: 'an etcd that does not answer', args: ['--etcd-servers', 'http://127.0.0.1:9'], error: /cannot reach etcd at http:\/\/127.0.0.1:9/ },
];

for (const c of cases) {
  test(`bosun apiserver refuses ${c.name}`, { timeout: 30_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bosun-etcd-flags-'));
    try {
      const r = await runBosun(['apiserver', '--data-dir', dataDir, '--listen', '127.0.0.1:0', ...c.args], { timeoutMs: 25_000 });
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stderr, c.error);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

test('bosun apiserver --help documents --service-cluster-ip-range with its default and an example', async () => {
  const r = await runBosun(['apiserver', '--help']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /--service-cluster-ip-range <cidr>/);
  assert.match(r.stdout, /default:\s+"172\.30\.0\.0\/16"/);
  assert.match(r.stdout, /bosun apiserver --data-dir \.bosun --service-cluster-ip-range 127\.30\.0\.0\/16/);
});
