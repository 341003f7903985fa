// `bosun machine-config-daemon` as a command: its help says what it does and how it reboots, and
// bad or missing flags fail with a message and a non-zero exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBosun } from '../helpers/cli.js';

test('bosun machine-config-daemon --help names its flags and the reboot path', async () => {
  const r = await runBosun(['machine-config-daemon', '--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--node-name', '--root-mount', '--drift-check-interval', '--kubeconfig']) assert.match(r.stdout, new RegExp(flag));
  assert.match(r.stdout, /\/run\/systemd\/shutdown\/scheduled/);
});

test('bosun machine-config-daemon: no node name, or a bad interval, fails with a message', async () => {
  const noNode = await runBosun(['machine-config-daemon', '--kubeconfig', '/nonexistent'], { env: { NODE_NAME: '' } });
  assert.notEqual(noNode.code, 0);
  assert.match(noNode.stderr, /--node-name \(or \$NODE_NAME\) is required/);
  const bad = await runBosun(['machine-config-daemon', '--node-name', 'w', '--drift-check-interval', 'often']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--drift-check-interval must be a positive number of seconds, got "often"/);
});
