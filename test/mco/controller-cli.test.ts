// `bosun machine-config-controller` as a process: renders the pools of a cluster, stops cleanly on
// SIGTERM, and refuses bad flags with a message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { builtInPools, controllerConfig, getJson, MCO, send, startMcoApiServer, waitFor } from './controller-fixtures.js';

test('bosun machine-config-controller renders the pools with the given ssh keys and exits 0 on SIGTERM', async () => {
  const api = await startMcoApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'bosun-mcc-'));
  const keyFile = join(dir, 'keys.pub');
  writeFileSync(keyFile, '# admin\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBosunCli admin@example.com\n\n');
  const child = spawn(process.execPath, [bosunBin, 'machine-config-controller', '--kubeconfig', api.kubeconfigPath, '--no-leader-elect', '--render-delay', '0.1', '--ssh-key-file', keyFile], { env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await send(api, 'POST', `${MCO}/controllerconfigs`, controllerConfig());
    for (const pool of builtInPools()) await send(api, 'POST', `${MCO}/machineconfigpools`, pool);
    const rendered = await waitFor('both pools rendered', async () => {
      const names = await Promise.all(['master', 'worker'].map(async (p) => (await getJson(api, `${MCO}/machineconfigpools/${p}`)).spec.configuration?.name));
      return names.every(Boolean) && names;
    }, 20_000);
    assert.match(rendered[0], /^rendered-master-[0-9a-f]{32}$/);
    const worker = await getJson(api, `${MCO}/machineconfigs/${rendered[1]}`);
    assert.deepEqual(worker.spec.config.passwd.users, [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBosunCli admin@example.com'] }]);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  } finally {
    child.kill('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bosun machine-config-controller: a bad flag fails with a message', async () => {
  const r = await runBosun(['machine-config-controller', '--kubeconfig', '/nonexistent', '--rendered-gc-grace', 'soon']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--rendered-gc-grace must be a non-negative number of seconds, got "soon"/);
});
