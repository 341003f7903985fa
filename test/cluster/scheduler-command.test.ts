// `bosun scheduler` as a user runs it: the real command in a child process against the embedded
// API server (on the component manager) takes the kube-system/kube-scheduler Lease, binds a pod,
// serves its metrics and /readyz, and stops cleanly on SIGTERM;
// --help shows what it does with an example; a bad flag is a one-line error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startTestApiServer } from '../helpers/apiserver.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { freePort } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';
import { node, pod } from './scheduler-fixtures.js';
import { scrape, scrapeWhen, withDelegatedAuth } from '../helpers/metrics.js';

test('bosun scheduler --help describes the filters and scoring with an example', async () => {
  const r = await runBosun(['scheduler', '--help']);
  assert.equal(r.code, 0, r.stderr);
  for (const expected of ['--kubeconfig', '--scheduler-name', '--metrics-listen', '--health-listen', '--no-leader-elect', 'kube-system/kube-scheduler', 'TaintToleration', 'LeastAllocated', 'Example', '0/5 nodes are available']) assert.ok(r.stdout.includes(expected), expected);
});

test('bosun scheduler with a bad --metrics-listen says so and exits non-zero', async () => {
  const r = await runBosun(['scheduler', '--metrics-listen', 'nowhere']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--metrics-listen must be HOST:PORT/);
});

test('bosun scheduler leads through its Lease, binds pods, serves metrics and readiness, and stops on SIGTERM', async () => {
  const api = await startTestApiServer({ port: 0 });
  const stopAuth = await withDelegatedAuth(api);
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [bosunBin, 'scheduler', '--kubeconfig', api.kubeconfigPath, '--metrics-listen', `127.0.0.1:${metricsPort}`, '--health-listen', `127.0.0.1:${healthPort}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    const worker = node('worker-0');
    await api.request('POST', '/api/v1/nodes', { body: worker });
    await api.request('PATCH', '/api/v1/nodes/worker-0/status', { body: { status: worker.status }, contentType: 'application/merge-patch+json' });
    await api.request('POST', '/api/v1/namespaces/default/pods', { body: pod('web', { requests: { cpu: '100m' } }) });
    await eventually('web bound', async () => (await api.request('GET', '/api/v1/namespaces/default/pods/web')).json.spec.nodeName === 'worker-0', 30_000);
    const lease = await api.kubectlOk(['get', 'lease', 'kube-scheduler', '-n', 'kube-system', '-o', 'jsonpath={.spec.holderIdentity}']);
    assert.ok(lease.length > 0, 'the Lease names its holder');
    assert.equal((await scrape(`127.0.0.1:${metricsPort}`)).status, 401, 'no token, no metrics');
    const metrics = await scrapeWhen(`127.0.0.1:${metricsPort}`, api.token);
    assert.match(metrics, /^scheduler_schedule_attempts_total\{result="scheduled"\} 1$/m);
    assert.match(metrics, /^scheduler_pending_pods\{queue="unschedulable"\} 0$/m);
    assert.equal((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status, 200);
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    stopAuth();
    await api.stop();
  }
});
