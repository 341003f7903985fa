// OpenShift's own CVO test payloads for release.openshift.io/major-version and
// release.openshift.io/feature-gate (copied from openshift/cluster-version-operator
// pkg/cvo/testdata/{majorversiontest-v5,featuregatetest} into fixtures/upstream): they load, filter
// to the set upstream's tests expect, `bosun adm release graph --list` says so, and the CVO
// applies exactly that set to a cluster — following FeatureGate/cluster when its gates change.
// (Upstream's major-version CRDs are named without their group, which kube-apiserver — and
// bosun — refuse, so that payload is checked as loaded and filtered, as upstream's test does.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FeatureGate } from '../../src/api/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPayload } from '../../src/cvo/payload/payload.js';
import { filterManifests } from '../../src/cvo/payload/inclusion.js';
import { enabledFeatureGates, majorVersionOf } from '../../src/cvo/payload/feature-gates.js';
import { readReleaseFiles, writeRelease } from '../../src/release/release-store.js';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { ClusterVersionOperator } from '../../src/cvo/operator.js';
import { KubeClient, type ResourceRef, type Obj } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';
import { runBosun } from '../helpers/cli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/upstream/', import.meta.url));
const majorV5 = join(fixtures, 'majorversiontest-v5');
const gates = join(fixtures, 'featuregatetest');
const CV: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
const FG: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'featuregates', namespaced: false };
const CM: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

const included = (dir: string, enabled?: string[]) => {
  const payload = loadPayload(dir);
  const r = filterManifests(payload.manifests, { enabledFeatureGates: enabled && new Set(enabled), majorVersion: majorVersionOf(payload.version) });
  return r.included.map((m) => m.object.metadata.name);
};

test('the major-version payload of version 5 includes what upstream includes', () => {
  assert.equal(majorVersionOf(loadPayload(majorV5).version), 5);
  assert.deepEqual(included(majorV5), ['noversion', 'version5only', 'version4or5', 'excludeversion3']);
});

test('the feature-gate payload follows the enabled gates', () => {
  assert.deepEqual(included(gates, []), ['always-included', 'legacy-excluded']);
  assert.deepEqual(included(gates, ['ExperimentalFeature']), ['always-included', 'experimental-feature', 'legacy-excluded']);
  assert.deepEqual(included(gates, ['ExperimentalFeature', 'LegacyFeature']), ['always-included', 'experimental-feature']);
});

test('major versions of release versions', () => {
  for (const [version, major] of [['5.0.0-xyz', 5], ['4.18.3', 4], ['1.0.1', 1], ['10', 10], ['v4.2.0', 4], ['nightly', undefined], ['', undefined]] as const) {
    assert.equal(majorVersionOf(version), major, version);
  }
});

test('enabled gates come from FeatureGate status for the version, else CustomNoUpgrade spec, else none', () => {
  const fg = (body: object) => ({ metadata: { name: 'cluster' }, ...body }) as FeatureGate;
  const status = { featureGates: [{ version: '4.18.0', enabled: [{ name: 'A' }, { name: 'B' }], disabled: [{ name: 'C' }] }, { version: '4.19.0', enabled: [{ name: 'C' }] }] };
  assert.deepEqual([...enabledFeatureGates(fg({ spec: {}, status }), '4.18.0')], ['A', 'B']);
  assert.deepEqual([...enabledFeatureGates(fg({ spec: {}, status }), '4.19.0')], ['C']);
  assert.deepEqual([...enabledFeatureGates(fg({ spec: {}, status }), '4.20.0')], []);
  assert.deepEqual([...enabledFeatureGates(fg({ spec: { featureSet: 'CustomNoUpgrade', customNoUpgrade: { enabled: ['X', 'Y'], disabled: ['Y'] } } }), '4.20.0')], ['X']);
  assert.deepEqual([...enabledFeatureGates(fg({ spec: { featureSet: 'CustomNoUpgrade', customNoUpgrade: { enabled: ['X'] } }, status }), '4.18.0')], ['A', 'B'], 'status wins once written');
  assert.deepEqual([...enabledFeatureGates(undefined, '4.18.0')], []);
});

test('bosun adm release graph --list shows what a payload of that version includes, and why not the rest', async () => {
  const v5 = await runBosun(['adm', 'release', 'graph', '--list', majorV5]);
  assert.equal(v5.code, 0, v5.stderr);
  assert.match(v5.stdout, /^# release 5\.0\.0-xyz: 4 of 5 manifests included$/m);
  assert.match(v5.stdout, /0000_20_version-4-only\.yaml\t.*version4only.*\texcluded: major version 5 is not one of release\.openshift\.io\/major-version: 4$/m);
  assert.match(v5.stdout, /0000_50_exclude-version-3\.yaml\t.*\tincluded$/m);
  const graph = await runBosun(['adm', 'release', 'graph', '--manifests', majorV5]);
  assert.equal(graph.code, 0, graph.stderr);
  assert.match(graph.stdout, /version5only/);
  assert.doesNotMatch(graph.stdout, /version4only/);

  const off = await runBosun(['adm', 'release', 'graph', '--list', gates]);
  assert.match(off.stdout, /0000_20_experimental-feature\.yaml\t.*\texcluded: feature gate ExperimentalFeature is not enabled/);
  const on = await runBosun(['adm', 'release', 'graph', '--list', '--feature-gates', 'ExperimentalFeature,LegacyFeature', gates]);
  assert.match(on.stdout, /0000_20_experimental-feature\.yaml\t.*\tincluded$/m);
  assert.match(on.stdout, /0000_30_legacy-excluded\.yaml\t.*\texcluded: feature gate LegacyFeature is enabled/);
});

let api: TestApiServer;
let store: string;
let client: KubeClient;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-upstream-payloads-'));
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  // bosun's own release only gives the cluster its ClusterVersion/FeatureGate CRDs.
  await createReleaseCrds(client, buildRelease({ version: '1.0.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store }).dir);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

test('the CVO applies exactly what the feature-gate payload includes, and follows FeatureGate/cluster', async () => {
  const fg = writeRelease(store, readReleaseFiles(gates));
  await client.create(FG, { apiVersion: 'config.openshift.io/v1', kind: 'FeatureGate', metadata: { name: 'cluster' }, spec: { featureSet: '' } });
  await client.mergePatch(FG, 'cluster', undefined, { status: { featureGates: [{ version: '1.0.0-abc', enabled: [{ name: 'ExperimentalFeature' }], disabled: [{ name: 'LegacyFeature' }] }] } }, 'status');
  await client.create(CV, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-000000000009', desiredUpdate: { image: fg.pullspec, version: '1.0.0-abc' } } });
  const stop = new AbortController();
  // A reconcile interval far off: what follows a FeatureGate change is the change's doing.
  const cvo = new ClusterVersionOperator({ kubeconfig: loadKubeConfig(api.kubeconfigPath), releaseStore: store, reconcileIntervalMs: 600_000, waitTimeoutMs: 2000, signal: stop.signal });
  const running = cvo.run();
  try {
    await eventually('1.0.0-abc to complete', async () => (await client.get(CV, 'version')).status?.history?.[0]?.state === 'Completed');
    assert.equal((await client.read(CM, 'always-included', 'default'))?.data?.key, 'always-present');
    assert.equal((await client.read(CM, 'experimental-feature', 'default'))?.data?.key, 'experimental-data');
    assert.equal((await client.read(CM, 'legacy-excluded', 'default'))?.data?.key, 'new-implementation');

    // LegacyFeature turned on: the CVO no longer manages legacy-excluded (a manifest left out is
    // not deleted, as in OpenShift), so a deleted one stays deleted while the others come back
    // on the pass the gate change starts.
    await client.delete(CM, 'legacy-excluded', 'default');
    await client.delete(CM, 'experimental-feature', 'default');
    await client.mergePatch(FG, 'cluster', undefined, { status: { featureGates: [{ version: '1.0.0-abc', enabled: [{ name: 'ExperimentalFeature' }, { name: 'LegacyFeature' }] }] } }, 'status');
    await eventually('experimental-feature to be put back', async () => client.read(CM, 'experimental-feature', 'default'), 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await client.read(CM, 'legacy-excluded', 'default'), undefined);
    // And off again: legacy-excluded is the payload's once more.
    await client.mergePatch(FG, 'cluster', undefined, { status: { featureGates: [{ version: '1.0.0-abc', enabled: [{ name: 'ExperimentalFeature' }] }] } }, 'status');
    await eventually('legacy-excluded to be created again', async () => client.read(CM, 'legacy-excluded', 'default'), 10_000);
  } finally {
    stop.abort();
    await running;
  }
});
