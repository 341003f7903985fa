// `bosun controller-manager` as a process: it holds kube-system/kube-controller-manager, runs the
// controllers --controllers selects (a disabled one does nothing), a Deployment made with kubectl
// rolls out, SIGTERM stops it cleanly, and a bad --controllers is a one-line error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { DAEMON_SETS, PODS } from '../../src/cluster/workloads/resources.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/cluster-objects.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';
import { scrape, scrapeWhen, withDelegatedAuth } from '../helpers/metrics.js';

test('bosun controller-manager refuses an unknown controller name, naming the known ones', async () => {
  const r = await runBosun(['controller-manager', '--controllers', '*,-bogus']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: "bogus" is not a known controller; known controllers: replicaset, deployment, daemonset, statefulset, job, cronjob, horizontalpodautoscaling, resourcequota, endpoint, endpointslice, nodelifecycle, podgc, root-ca-cert-publisher, service-ca/);
});

test('bosun controller-manager refuses a malformed --horizontal-pod-autoscaler-* setting, naming the flag', async () => {
  const period = await runBosun(['controller-manager', '--horizontal-pod-autoscaler-sync-period', 'soon']);
  assert.equal(period.code, 1);
  assert.match(period.stderr, /error: --horizontal-pod-autoscaler-sync-period must be a positive duration such as 15s or 5m0s, got "soon"/);
  const tolerance = await runBosun(['controller-manager', '--horizontal-pod-autoscaler-tolerance', '-1']);
  assert.equal(tolerance.code, 1);
  assert.match(tolerance.stderr, /--horizontal-pod-autoscaler-tolerance must be a number of at least 0, got "-1"/);
});

test('bosun controller-manager runs the selected controllers under its Lease and stops on SIGTERM', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stopAuth = await withDelegatedAuth(api);
  const standIns = startStandIns(client);
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [bosunBin, 'controller-manager', '--kubeconfig', api.kubeconfigPath, '--controllers', '*,-daemonset', '--metrics-listen', `127.0.0.1:${metricsPort}`, '--health-listen', `127.0.0.1:${healthPort}`], { env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    await createNode(client, 'node-1');
    await api.kubectlOk(['create', 'deployment', 'web', '--image=bosun.local/echo', '--replicas=2']);
    const r = await api.kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(r.code, 0, `${r.stderr}\n${stderr}`);
    const lease = JSON.parse(await api.kubectlOk(['get', 'lease', '-n', 'kube-system', 'kube-controller-manager', '-o', 'json']));
    assert.ok(lease.spec.holderIdentity, 'the Lease names its holder');
    await client.create(DAEMON_SETS, { metadata: { name: 'agent', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'a' }] } } } });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await client.list(PODS, 'default', { labelSelector: 'app=agent' })).items.length, 0, 'the disabled DaemonSet controller made nothing');
    await eventually('2 pods of web', async () => (await client.list(PODS, 'default', { labelSelector: 'app=web' })).items.length === 2);
    // The shared component endpoints: the toolkit's reconcile metrics per controller, and readiness.
    assert.equal((await scrape(`127.0.0.1:${metricsPort}`)).status, 401, 'no token, no metrics');
    const metrics = await scrapeWhen(`127.0.0.1:${metricsPort}`, api.token);
    assert.match(metrics, /^controller_runtime_reconcile_total\{controller="[^"]*deployment[^"]*",result="success"\} [1-9]/m);
    assert.equal((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status, 200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, stderr);
  } finally {
    child.kill('SIGKILL');
    await standIns.stop();
    stopAuth();
    await api.stop();
  }
});
