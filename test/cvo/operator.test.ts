// The cluster-version operator against the embedded API server: first install, drift put back,
// an update to a second release, a release that cannot be retrieved, and a ClusterOperator gate.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { buildRelease, type BuiltRelease } from '../../src/cvo/payload/build.js';
import { readReleaseFiles, writeRelease } from '../../src/release/release-store.js';
import { ClusterVersionOperator } from '../../src/cvo/operator.js';
import { createCvoMetrics } from '../../src/cvo/metrics.js';
import { KubeClient } from '../../src/kube/client.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let api: TestApiServer;
let store: string;
let kc: k8s.KubeConfig;
let releases: Record<string, BuiltRelease>;
let objects: k8s.KubernetesObjectApi;
let custom: k8s.CustomObjectsApi;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-cvo-store-'));
  releases = {};
  for (const version of ['1.0.0', '1.0.1']) releases[version] = buildRelease({ version, from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  // What the installer gives a cluster first: the CVO's CRDs.
  await createReleaseCrds(new KubeClient(kc), releases['1.0.0'].dir);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

async function clusterVersion(): Promise<any> {
  return custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' });
}

const cond = (cv: any, type: string) => (cv.status?.conditions ?? []).find((c: any) => c.type === type);

/** Read-modify-write of spec.desiredUpdate, retried when the CVO's status writes get in between. */
async function setDesired(image: string, version?: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const cv = await clusterVersion();
    cv.spec.desiredUpdate = { image, ...(version ? { version } : {}) };
    try {
      await custom.replaceClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version', body: cv });
      return;
    } catch (e) {
      if ((e as { code?: number }).code !== 409 || attempt > 10) throw e;
    }
  }
}

test('install, drift, update, a missing release, a ClusterOperator gate, and a CVO restart mid-update', async () => {
  // No machine-config, cloud-controller-manager, Cluster API, monitoring, console or OLM operator runs here: their ClusterOperator gates are overridden as unmanaged.
  await objects.create({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-000000000001', overrides: [{ kind: 'ClusterOperator', group: 'config.openshift.io', name: 'machine-config', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cloud-controller-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cluster-api', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'monitoring', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'console', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-catalog', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-packageserver', namespace: '', unmanaged: true }], desiredUpdate: { version: '1.0.0', image: releases['1.0.0'].pullspec } } } as k8s.KubernetesObject);
  let controller = new AbortController();
  const startCvo = () => new ClusterVersionOperator({ kubeconfig: kc, releaseStore: store, reconcileIntervalMs: 500, waitTimeoutMs: 1500, slowOperatorMs: 6000, signal: controller.signal }).run();
  let running = startCvo();
  try {
    // First install: Initializing → Available, history Completed.
    const installed = await eventually('1.0.0 to be installed', async () => {
      const cv = await clusterVersion();
      return cv.status?.history?.[0]?.state === 'Completed' && cond(cv, 'Available')?.status === 'True' ? cv : undefined;
    });
    assert.equal(installed.status.history.length, 1);
    assert.equal(installed.status.desired.version, '1.0.0');
    assert.equal(cond(installed, 'ReleaseAccepted').reason, 'PayloadLoaded');
    assert.equal(cond(installed, 'Progressing').message, 'Cluster version is 1.0.0');
    const table = await api.kubectl(['get', 'clusterversion']);
    assert.match(table.stdout, /^version\s+1\.0\.0\s+True\s+False\s+\S+\s+Cluster version is 1\.0\.0$/m);
    const sa = await objects.read({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cluster-version-operator', namespace: 'openshift-cluster-version' } });
    assert.equal(sa.metadata?.ownerReferences?.[0]?.kind, 'ClusterVersion');

    // Drift: a deleted managed object comes back within a reconcile period.
    await objects.delete(sa);
    await eventually('the deleted ServiceAccount to be restored', async () => {
      const again = await objects.read({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cluster-version-operator', namespace: 'openshift-cluster-version' } });
      return again.metadata?.uid !== sa.metadata?.uid ? again : undefined;
    });

    // Update to 1.0.1: history shows both, newest first; the CVO's Deployment moves to 1.0.1.
    await setDesired(releases['1.0.1'].pullspec, '1.0.1');
    const updated = await eventually('1.0.1 to be applied', async () => {
      const cv = await clusterVersion();
      return cv.status?.history?.[0]?.version === '1.0.1' && cv.status.history[0].state === 'Completed' ? cv : undefined;
    });
    assert.deepEqual(updated.status.history.map((h: any) => [h.version, h.state]), [['1.0.1', 'Completed'], ['1.0.0', 'Completed']]);
    const deployment = (await objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'cluster-version-operator', namespace: 'openshift-cluster-version' } })) as k8s.V1Deployment;
    assert.match(JSON.stringify(deployment.spec?.template.spec?.containers), /1\.0\.1/);

    // A release the store does not have: refused, the cluster stays on 1.0.1.
    const missing = `bosun.local/release@sha256:${'0'.repeat(64)}`;
    await setDesired(missing);
    const refused = await eventually('the missing release to be refused', async () => {
      const cv = await clusterVersion();
      return cond(cv, 'ReleaseAccepted')?.status === 'False' ? cv : undefined;
    });
    assert.equal(cond(refused, 'ReleaseAccepted').reason, 'RetrievePayload');
    assert.match(cond(refused, 'ReleaseAccepted').message, new RegExp(`image="${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`));
    assert.equal(refused.status.history[0].version, '1.0.1');
    assert.equal(cond(refused, 'Available').status, 'True');

    // A release whose ClusterOperator is not available holds the update and names the operator.
    const files = readReleaseFiles(releases['1.0.1'].dir);
    const gated = { ...files };
    gated['release-manifests/0000_50_example-operator_90_clusteroperator.yaml'] =
      'apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: example\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: 1.0.1\n';
    const gatedRelease = writeRelease(store, gated);
    await setDesired(gatedRelease.pullspec, '1.0.1');
    // Waiting on an operator during an update is progress, not failure (as OpenShift reports it)…
    const held = await eventually('the operator gate to hold', async () => {
      const cv = await clusterVersion();
      return /waiting on example$/.test(cond(cv, 'Progressing')?.message ?? '') ? cv : undefined;
    });
    assert.match(cond(held, 'Progressing').message, /^Working towards 1\.0\.1: \d+ of \d+ done \(\d+% complete\), waiting on example$/);
    assert.equal(cond(held, 'Failing').status, 'False');
    assert.equal(held.status.history[0].state, 'Partial');
    // …until it takes longer than expected: Failing=Unknown, SlowClusterOperator.
    const slow = await eventually('the slow operator to be reported', async () => {
      const cv = await clusterVersion();
      return cond(cv, 'Failing')?.status === 'Unknown' ? cv : undefined;
    });
    assert.equal(cond(slow, 'Failing').reason, 'SlowClusterOperator');
    assert.equal(cond(slow, 'Failing').message, 'waiting on example over 6 seconds which is longer than expected');
    // The CVO stops in the middle of the update; a new one picks it up where the cluster is.
    controller.abort();
    await running;
    // Its pass, cut short by the stop, failed at nothing: no "incomplete task nodes" written as Failing.
    const stopped = await clusterVersion();
    assert.equal(cond(stopped, 'Failing').reason, 'SlowClusterOperator', `after the stop: ${JSON.stringify(cond(stopped, 'Failing'))}`);
    assert.doesNotMatch(JSON.stringify(stopped.status.conditions), /incomplete task nodes/);
    controller = new AbortController();
    running = startCvo();
    // The test plays the operator: Available, not Degraded, at the payload's version.
    const co = await custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusteroperators', name: 'example' });
    const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await custom.replaceClusterCustomObjectStatus({
      group: 'config.openshift.io',
      version: 'v1',
      plural: 'clusteroperators',
      name: 'example',
      body: { ...(co as object), status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: t }, { type: 'Degraded', status: 'False', lastTransitionTime: t }, { type: 'Progressing', status: 'False', lastTransitionTime: t }], versions: [{ name: 'operator', version: '1.0.1' }] } },
    });
    const done = await eventually('the gated update to complete', async () => {
      const cv = await clusterVersion();
      return cv.status?.history?.[0]?.image === gatedRelease.pullspec && cv.status.history[0].state === 'Completed' ? cv : undefined;
    });
    assert.equal(cond(done, 'Failing').status, 'False');
    assert.match((await api.kubectl(['get', 'co'])).stdout, /^example\s+1\.0\.1\s+True\s+False\s+False/m);
  } finally {
    controller.abort();
    await running;
  }
});

test('two CVOs under leader election: one applies, the other takes over when it stops', async () => {
  const { runClusterVersionOperator } = await import('../../src/cvo/operator.js');
  const timings = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 };
  const stops = [new AbortController(), new AbortController()];
  // Each instance records what it applies into metrics of its own.
  const metrics = stops.map(() => createCvoMetrics({ clusterVersion: () => undefined, clusterOperators: () => [], lastPayloadApplied: () => undefined }));
  const applied = async (i: number) => (await metrics[i].manifestDuration.get()).values.filter((v) => v.metricName?.endsWith('_count')).reduce((n, v) => n + v.value, 0);
  const runs = stops.map((stop, i) =>
    runClusterVersionOperator({ kubeconfig: kc, releaseStore: store, reconcileIntervalMs: 300, waitTimeoutMs: 1500, signal: stop.signal, metrics: metrics[i], leaderElection: { identity: `cvo-${i}`, ...timings } }),
  );
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const holder = async () => (await coordination.readNamespacedLease({ name: 'version', namespace: 'openshift-cluster-version' })).spec?.holderIdentity;
  try {
    const first = await eventually('a CVO to hold the lease', async () => ((await holder())?.startsWith('cvo-') ? await holder() : undefined));
    const i = Number(first!.split('-')[1]);
    // The leader reconciles; the other one applies nothing at all.
    await eventually('the leader to apply a few passes', async () => ((await applied(i)) > 30 ? true : undefined));
    assert.equal(await applied(1 - i), 0, 'the CVO without the Lease applied manifests');
    stops[i].abort();
    await eventually('the other CVO to take over', async () => ((await holder()) === `cvo-${1 - i}` ? true : undefined));
    // The new leader reconciles: a deleted managed object comes back.
    const sa = await objects.read({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cluster-version-operator', namespace: 'openshift-cluster-version' } });
    await objects.delete(sa);
    await eventually('the new leader to restore the ServiceAccount', async () => {
      const again = await objects.read({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cluster-version-operator', namespace: 'openshift-cluster-version' } });
      return again.metadata?.uid !== sa.metadata?.uid ? again : undefined;
    });
    assert.ok((await applied(1 - i)) > 0);
  } finally {
    for (const s of stops) s.abort();
    await Promise.all(runs);
  }
});

test('a pass cut short because the CVO is stopping writes no failure (its pod replaced mid-update is no failed update)', async () => {
  const stopping = new AbortController();
  stopping.abort();
  const cvo = new ClusterVersionOperator({ kubeconfig: kc, releaseStore: store, waitTimeoutMs: 1500, signal: stopping.signal });
  // A new desired release (here a downgrade, refused: the pass reconciles the current one) makes
  // the stopping CVO load and run a pass, which its stop cuts short before any task runs.
  await setDesired(releases['1.0.0'].pullspec, '1.0.0');
  await cvo.syncOnce();
  const after = await clusterVersion();
  assert.notEqual(cond(after, 'Failing')?.status, 'True', `Failing after an interrupted pass: ${JSON.stringify(cond(after, 'Failing'))}`);
  assert.doesNotMatch(JSON.stringify(after.status.conditions), /incomplete task nodes/);
});
