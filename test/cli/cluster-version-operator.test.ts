// `bosun cluster-version-operator` as a process: installs the release ClusterVersion/version
// names, serves its metrics, stops on SIGTERM; killed (SIGKILL) in the middle of an update, a new
// process takes the Lease over once it expires and finishes the update; bad options are refused
// with a clear error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestApiServer } from '../helpers/apiserver.js';
import { createReleaseCrds, freePort } from '../helpers/cluster-objects.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { readReleaseFiles, writeRelease } from '../../src/release/release-store.js';
import { KubeClient, type Obj, type ResourceRef } from '../../src/kube/client.js';
import { resources } from '../../src/kube/resources.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { eventually } from '../helpers/eventually.js';
import { scrape, scrapeWhen, withDelegatedAuth } from '../helpers/metrics.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('bosun cluster-version-operator installs the desired release and serves metrics', async () => {
  const api = await startTestApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const store = mkdtempSync(join(tmpdir(), 'bosun-cli-cvo-'));
  const release = buildRelease({ version: '1.0.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await createReleaseCrds(client, release.dir);
  const cvRef: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
  // No machine-config, cloud-controller-manager, Cluster API, monitoring, console or OLM operator runs here: their ClusterOperator gates are overridden as unmanaged.
  await client.create(cvRef, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-000000000003', overrides: [{ kind: 'ClusterOperator', group: 'config.openshift.io', name: 'machine-config', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cloud-controller-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cluster-api', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'monitoring', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'console', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-catalog', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-packageserver', namespace: '', unmanaged: true }], desiredUpdate: { version: '1.0.0', image: release.pullspec } } });
  // What the installer writes: the CVO exports it as OpenShift's kube-apiserver operator would.
  await client.create(resources.infrastructures, { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'None' } } });
  await client.mergePatch(resources.infrastructures, 'cluster', undefined, { status: { platform: 'None', platformStatus: { type: 'None' }, controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'HighlyAvailable' } }, 'status');
  const port = await freePort();
  const child = spawn(process.execPath, [bosunBin, 'cluster-version-operator', '--kubeconfig', api.kubeconfigPath, '--release-store', store, '--metrics-listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  try {
    await eventually('the release to be installed', async () => (await client.get(cvRef, 'version')).status?.history?.[0]?.state === 'Completed', { timeoutMs: 40_000, intervalMs: 200, detail: () => output });
    assert.equal((await scrape(`127.0.0.1:${port}`)).status, 401, 'no token, no metrics');
    const metrics = await scrapeWhen(`127.0.0.1:${port}`, api.token);
    assert.match(metrics, /^cluster_version\{type="completed",version="1\.0\.0",image="bosun\.local\/release@sha256:[0-9a-f]{64}",from_version=""\} \d+$/m);
    assert.match(metrics, /^cluster_version\{type="cluster",[^}]*\} \d+$/m);
    assert.match(metrics, /^cluster_version_payload\{type="applied",version="1\.0\.0"\} [1-9]\d*$/m);
    assert.match(metrics, /^cluster_version_operator_manifest_apply_duration_seconds_count\{kind="ServiceAccount"\} [1-9]/m);
    assert.match(metrics, /^process_cpu_user_seconds_total /m, 'process metrics are served too');
    assert.match(metrics, /^cluster_infrastructure_provider\{type="None",region="",external=""\} 0$/m, 'the cluster-configuration metrics are served too');
    assert.equal((await scrape(`127.0.0.1:${port}`, { path: '/nope' })).status, 404);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, `exit on SIGTERM; output:\n${output}`);
  } finally {
    child.kill('SIGKILL');
    stopAuth();
    await api.stop();
    rmSync(store, { recursive: true, force: true });
  }
});

test('a CVO killed in the middle of an update: the next one takes over and finishes it', { timeout: 120_000 }, async () => {
  const api = await startTestApiServer();
  const store = mkdtempSync(join(tmpdir(), 'bosun-cli-cvo-kill-'));
  const release = buildRelease({ version: '1.0.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  const next = buildRelease({ version: '1.0.1', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  // 1.0.1 with a ClusterOperator the test plays: the update waits on it.
  const gated = writeRelease(store, {
    ...readReleaseFiles(next.dir),
    'release-manifests/0000_50_example-operator_90_clusteroperator.yaml': 'apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: example\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: 1.0.1\n',
  });
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await createReleaseCrds(client, release.dir);
  const cvRef: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
  const coRef: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusteroperators', namespaced: false };
  await client.create(cvRef, {
    apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' },
    // No machine-config, cloud-controller-manager, Cluster API, monitoring, console or OLM operator runs here: their ClusterOperator gates are overridden as unmanaged.
    spec: { clusterID: '6b1c1b1e-0000-4000-8000-000000000004', overrides: [{ kind: 'ClusterOperator', group: 'config.openshift.io', name: 'machine-config', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cloud-controller-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cluster-api', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'monitoring', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'console', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-catalog', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-packageserver', namespace: '', unmanaged: true }], desiredUpdate: { version: '1.0.0', image: release.pullspec } },
  });
  const start = () => {
    const child = spawn(process.execPath, [bosunBin, 'cluster-version-operator', '--kubeconfig', api.kubeconfigPath, '--release-store', store, '--metrics-listen', 'off', '--lease-duration', '4', '--renew-deadline', '3', '--retry-period', '0.5'], { stdio: ['ignore', 'pipe', 'pipe']});
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    return { child, output: () => output, exited: new Promise<void>((r) => child.on('close', () => r())) };
  };
  const until = (what: string, check: (cv: any) => boolean, output: () => string) => eventually(what, async () => {
    const cv = await client.get(cvRef, 'version');
    return check(cv) ? cv : undefined;
  }, { timeoutMs: 45_000, intervalMs: 200, detail: () => output().slice(-3000) });
  const first = start();
  let second: ReturnType<typeof start> | undefined;
  try {
    await until('1.0.0 installed', (cv) => cv.status?.history?.[0]?.state === 'Completed', first.output);
    await client.mergePatch(cvRef, 'version', undefined, { spec: { desiredUpdate: { version: '1.0.1', image: gated.pullspec } } });
    await until('the update to wait on the operator', (cv) => /waiting on example$/.test((cv.status?.conditions ?? []).find((c: any) => c.type === 'Progressing')?.message ?? ''), first.output);
    first.child.kill('SIGKILL');
    await first.exited;

    second = start();
    const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await client.mergePatch(coRef, 'example', undefined, { status: { conditions: [{ type: 'Available', status: 'True', reason: 'AsExpected', lastTransitionTime: t }, { type: 'Degraded', status: 'False', reason: 'AsExpected', lastTransitionTime: t }], versions: [{ name: 'operator', version: '1.0.1' }] } }, 'status');
    const done = await until('the update to be finished by the second CVO', (cv) => cv.status?.history?.[0]?.image === gated.pullspec && cv.status.history[0].state === 'Completed', second.output);
    assert.deepEqual(done.status.history.map((h: any) => [h.version, h.state]), [['1.0.1', 'Completed'], ['1.0.0', 'Completed']]);
    const lease = await client.get(resources.leases, 'version', 'openshift-cluster-version');
    assert.equal(lease.spec!.holderIdentity!.split('_').pop(), String(second.child.pid), 'the second process holds the Lease');
  } finally {
    first.child.kill('SIGKILL');
    second?.child.kill('SIGKILL');
    await api.stop();
    rmSync(store, { recursive: true, force: true });
  }
});

test('bosun cluster-version-operator refuses a bad --metrics-listen', async () => {
  const result = await runBosun(['cluster-version-operator', '--release-store', '/tmp/none', '--metrics-listen', 'nonsense']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /error: --metrics-listen must be HOST:PORT \(for example 127\.0\.0\.1:6443\), got "nonsense"/);
});

test('bosun cluster-version-operator runs on the component manager: the shared flags, health endpoints, its own flags checked', async () => {
  const help = await runBosun(['cluster-version-operator', '--help']);
  assert.equal(help.code, 0, help.stderr);
  for (const flag of ['--release-store', '--reconcile-interval', '--metrics-url', '--kubeconfig', '--metrics-listen', '--health-listen', '--leader-elect', '--no-leader-elect', '--lease-duration', '--renew-deadline', '--retry-period', '--log-level']) {
    assert.match(help.stdout, new RegExp(`${flag}\\b`), `--help lists ${flag}`);
  }
  const badInterval = await runBosun(['cluster-version-operator', '--release-store', '/tmp/none', '--metrics-listen', 'off', '--reconcile-interval', 'soon']);
  assert.equal(badInterval.code, 1);
  assert.match(badInterval.stderr, /--reconcile-interval must be a positive number of seconds, got "soon"/);

  const api = await startTestApiServer();
  const store = mkdtempSync(join(tmpdir(), 'bosun-cli-cvo-health-'));
  const health = await freePort();
  const child = spawn(process.execPath, [bosunBin, 'cluster-version-operator', '--kubeconfig', api.kubeconfigPath, '--release-store', store, '--metrics-listen', 'off', '--health-listen', `127.0.0.1:${health}`, '--no-leader-elect', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  try {
    // Not ready while its caches cannot sync (no ClusterVersion CRD yet); ready once they do.
    const status = (path: string) => fetch(`http://127.0.0.1:${health}${path}`).then((r) => r.status).catch(() => 0);
    await eventually('/readyz to answer', async () => (await status('/readyz')) !== 0, { timeoutMs: 20_000, intervalMs: 200, detail: () => output });
    assert.equal(await status('/readyz'), 500);
    await createReleaseCrds(new KubeClient(loadKubeConfig(api.kubeconfigPath)), root);
    await eventually('/readyz to answer 200', async () => (await status('/readyz')) === 200, { timeoutMs: 30_000, intervalMs: 200, detail: () => output });
    assert.equal((await fetch(`http://127.0.0.1:${health}/healthz`)).status, 200);
    assert.doesNotMatch(output, /"level":30/, '--log-level warn leaves out info lines');
    child.kill('SIGTERM');
    assert.equal(await exited, 0, `exit on SIGTERM; output:\n${output}`);
  } finally {
    child.kill('SIGKILL');
    await api.stop();
    rmSync(store, { recursive: true, force: true });
  }
});
