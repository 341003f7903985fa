// `bosun machine-config-server` as a process: serves a directory of rendered configs, logs each
// request naming the pool, the version served and the client's address, and stops on SIGTERM;
// options that contradict each other are refused; its manager serves metrics and health.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { freePort } from '../helpers/cluster-objects.js';
import { workerConfig, writeRendered } from './mcs-fixture.js';
import { startMcoApiServer } from './controller-fixtures.js';
import { startComponent } from './component-process.js';
import { eventually } from '../helpers/eventually.js';
import { scrape, scrapeWhen, withDelegatedAuth } from '../helpers/metrics.js';

test('bosun machine-config-server serves a config directory and logs pool, version and client', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-mcs-cli-'));
  writeRendered(dir, 'worker', 'rendered-worker-7', workerConfig);
  const port = await freePort();
  const child = spawn(process.execPath, [bosunBin, 'machine-config-server', '--config-dir', dir, '--listen-tls', 'off', '--listen-http', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  try {
    await eventually('the server to start', () => /"msg":"listening"/.test(output), { timeoutMs: 30_000, detail: () => output });
    const res = await fetch(`http://127.0.0.1:${port}/config/worker`, { headers: { accept: 'application/vnd.coreos.ignition+json;version=3.1.0' } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { ignition: { version: string } }).ignition.version, '3.1.0');
    await new Promise((r) => setTimeout(r, 200));
    const served = output.split('\n').filter((l) => l.includes('"serving config"')).map((l) => JSON.parse(l));
    assert.equal(served.length, 1, output);
    assert.equal(served[0].pool, 'worker');
    assert.equal(served[0].version, '3.1.0');
    assert.equal(served[0].config, 'rendered-worker-7');
    assert.match(served[0].client, /127\.0\.0\.1/);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bosun machine-config-server refuses two config sources', async () => {
  const r = await runBosun(['machine-config-server', '--config-dir', '/tmp', '--kubeconfig', '/tmp/k', '--listen-tls', 'off', '--listen-http', '127.0.0.1:0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: --config-dir and --kubeconfig are two sources; give one/);
});

test('bosun machine-config-server serves no metrics without a cluster to authorise scrapers', async () => {
  const r = await runBosun(['machine-config-server', '--config-dir', '/tmp', '--listen-tls', 'off', '--listen-http', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: --metrics-listen needs a cluster: metrics are served only to callers its API server authorises, and --config-dir has none/);
});

test('bosun machine-config-server serves metrics and health on the shared listener, from the cluster', { timeout: 60_000 }, async () => {
  const api = await startMcoApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const [port, endpoints] = [await freePort(), await freePort()];
  const address = `127.0.0.1:${endpoints}`;
  const component = startComponent(['machine-config-server', '--kubeconfig', api.kubeconfigPath, '--listen-tls', 'off', '--listen-http', `127.0.0.1:${port}`, '--metrics-listen', address, '--health-listen', address]);
  try {
    // The shared listener is the metrics one: HTTPS, health open, metrics for authorised callers.
    await eventually('ready, over HTTPS', async () => (await scrape(address, { path: '/readyz?verbose' }).catch(() => ({ text: '' }))).text.includes('[+]informer-sync ok'));
    assert.equal((await scrape(address, { path: '/healthz' })).text, 'ok');
    assert.equal((await scrape(address)).status, 401);
    assert.equal((await fetch(`http://127.0.0.1:${port}/config/worker`)).status, 404, 'no pools in the cluster yet');
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'none on the config listener');
    const metrics = await scrapeWhen(address, api.token);
    assert.match(metrics, /mcs_requests_total\{listener="http",pool="worker",version="",code="404"\} 1/);
    assert.match(metrics, /process_cpu_seconds_total/);
    assert.equal(await component.stop(), 0, component.output());
  } finally {
    component.child.kill('SIGKILL');
    stopAuth();
    await api.stop();
  }
});
