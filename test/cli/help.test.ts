// The bosun command starts and describes itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBosun } from '../helpers/cli.js';

test('bosun --help lists the program and exits 0', async () => {
  const r = await runBosun(['--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /Usage: bosun/);
});

test('an unknown subcommand fails with a message and a non-zero exit', async () => {
  const r = await runBosun(['no-such-command']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /unknown command/);
});

// Every component command runs on the manager with the same flags.
const COMPONENTS = ['cluster-version-operator', 'machine-config-operator', 'machine-config-controller', 'machine-config-server', 'scheduler', 'controller-manager', 'cloud-controller-manager', 'cluster-cloud-controller-manager-operator', 'metrics-server', 'olm-operator', 'catalog-operator', 'package-server'];
const SHARED_FLAGS = ['--kubeconfig <file>', '--metrics-listen <host:port>', '--tls-cert-file <file>', '--tls-private-key-file <file>', '--health-listen <host:port>', '--leader-elect [bool]', '--no-leader-elect', '--lease-duration <seconds>', '--renew-deadline <seconds>', '--retry-period <seconds>', '--log-level <level>'];

for (const component of COMPONENTS) {
  test(`bosun ${component} --help lists the shared component flags`, async () => {
    const r = await runBosun([component, '--help']);
    assert.equal(r.code, 0, r.stderr);
    for (const flag of SHARED_FLAGS) assert.ok(r.stdout.includes(flag), `${component} --help lacks ${flag}:\n${r.stdout}`);
    assert.ok(!r.stdout.includes('--metrics-port'), 'the deprecated alias is not documented');
  });
}

test("a subcommand's option reaches it even where its parent group defines the same option", async () => {
  // `adm upgrade` and `adm upgrade channel` both take --kubeconfig; bosun itself takes --version.
  const channel = await runBosun(['adm', 'upgrade', 'channel', 'nightly-9', '--kubeconfig', '/nonexistent/kubeconfig']);
  assert.equal(channel.code, 1);
  assert.match(channel.stderr, /\/nonexistent\/kubeconfig/);
  const recommend = await runBosun(['adm', 'upgrade', 'recommend', '--upstream', 'http://127.0.0.1:9', '--channel', 'stable-1.0', '--version', '1.0.0']);
  assert.doesNotMatch(recommend.stdout, /^bosun \d/m, 'bosun printed its own version instead of running recommend');
  assert.equal(recommend.code, 1);
});

test('bosun metrics-server and adm top refuse bad input with a message', async () => {
  const resolution = await runBosun(['metrics-server', '--metric-resolution', '0s', '--kubeconfig', '/nonexistent/kubeconfig']);
  assert.equal(resolution.code, 1);
  assert.match(resolution.stderr, /--metric-resolution is a duration of at least 1s/);
  const both = await runBosun(['adm', 'top', 'pods', '-A', '-n', 'x', '--kubeconfig', '/nonexistent/kubeconfig']);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /-n and -A go separately/);
});
