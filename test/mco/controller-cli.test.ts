// `bosun machine-config-controller` as a process: renders the pools of a cluster, stops cleanly on
// SIGTERM, refuses bad flags with a message, and serves metrics and health from its manager.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { freePort } from '../helpers/cluster-objects.js';
import { fetchWhen, startComponent } from './component-process.js';
import { eventually } from '../helpers/eventually.js';
import { builtInPools, controllerConfig, getJson, MCO, send, startMcoApiServer, waitFor } from './controller-fixtures.js';
import { scrapeWhen, withDelegatedAuth } from '../helpers/metrics.js';

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

test('bosun machine-config-controller serves metrics and health, holds its Lease, and releases it on SIGTERM', async () => {
  const api = await startMcoApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  // --metrics-port: the flag this command had before the shared ones, kept as an alias.
  const component = startComponent(['machine-config-controller', '--kubeconfig', api.kubeconfigPath, '--render-delay', '0.1', '--metrics-port', String(metricsPort), '--health-listen', `127.0.0.1:${healthPort}`, '--lease-duration', '4', '--renew-deadline', '3', '--retry-period', '0.5'], { BOSUN_LOG_LEVEL: 'warn' });
  try {
    await send(api, 'POST', `${MCO}/controllerconfigs`, controllerConfig());
    for (const pool of builtInPools()) await send(api, 'POST', `${MCO}/machineconfigpools`, pool);
    assert.equal(await fetchWhen(`127.0.0.1:${healthPort}`, '/healthz'), 'ok');
    assert.match(await fetchWhen(`127.0.0.1:${healthPort}`, '/readyz?verbose'), /\[\+\]informer-sync ok/);
    await waitFor('the worker pool rendered', async () => (await getJson(api, `${MCO}/machineconfigpools/worker`)).spec.configuration?.name, 20_000);
    // The render that set the pool's config counts once it has finished (garbage collection last).
    const metrics = await eventually('a successful render in the metrics', async () => {
      const text = await scrapeWhen(`127.0.0.1:${metricsPort}`, api.token);
      return /controller_runtime_reconcile_total\{controller="machine-config-controller-render",result="success"\} [1-9]/.test(text) && text;
    });
    assert.match(metrics, /workqueue_adds_total\{name="machine-config-controller-node"\}/);
    const lease = await getJson(api, '/apis/coordination.k8s.io/v1/namespaces/openshift-machine-config-operator/leases/machine-config-controller');
    assert.ok(lease.spec.holderIdentity, 'the Lease is held');
    assert.equal(await component.stop(), 0, component.output());
    const released = await getJson(api, '/apis/coordination.k8s.io/v1/namespaces/openshift-machine-config-operator/leases/machine-config-controller');
    assert.equal(released.spec.holderIdentity, '', 'a clean stop releases the Lease');
  } finally {
    component.child.kill('SIGKILL');
    stopAuth();
    await api.stop();
  }
});
