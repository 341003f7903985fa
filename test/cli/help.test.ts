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
