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

// Every component command runs on the manager with the same flags (h-cvo adds the CVO here).
const COMPONENTS = ['machine-config-operator', 'machine-config-controller', 'machine-config-server'];
const SHARED_FLAGS = ['--kubeconfig <file>', '--metrics-listen <host:port>', '--health-listen <host:port>', '--leader-elect [bool]', '--no-leader-elect', '--lease-duration <seconds>', '--renew-deadline <seconds>', '--retry-period <seconds>', '--log-level <level>'];

for (const component of COMPONENTS) {
  test(`bosun ${component} --help lists the shared component flags`, async () => {
    const r = await runBosun([component, '--help']);
    assert.equal(r.code, 0, r.stderr);
    for (const flag of SHARED_FLAGS) assert.ok(r.stdout.includes(flag), `${component} --help lacks ${flag}:\n${r.stdout}`);
    assert.ok(!r.stdout.includes('--metrics-port'), 'the deprecated alias is not documented');
  });
}
