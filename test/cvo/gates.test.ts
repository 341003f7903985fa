// The CVO against operators played by the test, on a payload with two operators at two run
// levels (alpha at 10, beta at 20): an update never starts level 20 before alpha reports the new
// version; a Degraded operator is tolerated for a while and then Failing names it; broken
// payloads (bad YAML, a kind nobody serves, a version mismatch) are refused with the file named
// and the cluster left as it was; the CVO's metrics say what the cluster is doing. Manifests of
// a disabled capability or another feature set are left out until enabled.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import { buildRelease, type BuiltRelease } from '../../src/cvo/payload/build.js';
import { readReleaseFiles, writeRelease } from '../../src/release/release-store.js';
import { ClusterVersionOperator } from '../../src/cvo/operator.js';
import { KubeClient, type ResourceRef, type Obj } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CV: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
const CO: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusteroperators', namespaced: false };
const CM: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const include = 'annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"';

const operatorManifests: Record<string, string> = {
  '0000_10_alpha_00_namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bosun-gates\n  ${include}\n`,
  '0000_10_alpha_01_config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha-config\n  namespace: bosun-gates\n  ${include}\ndata:\n  version: "{{VERSION}}"\n`,
  '0000_10_alpha_90_clusteroperator.yaml': `apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: alpha\n  ${include}\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: "{{VERSION}}"\n`,
  '0000_10_alpha_02_console.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: console-config\n  namespace: bosun-gates\n  ${include}\n    capability.openshift.io/name: Console\n`,
  '0000_10_alpha_03_tech-preview.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tech-preview-config\n  namespace: bosun-gates\n  ${include}\n    release.openshift.io/feature-set: TechPreviewNoUpgrade\n`,
  '0000_20_beta_01_config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beta-config\n  namespace: bosun-gates\n  ${include}\ndata:\n  version: "{{VERSION}}"\n`,
  '0000_20_beta_90_clusteroperator.yaml': `apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: beta\n  ${include}\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: "{{VERSION}}"\n`,
};

let api: TestApiServer;
let store: string;
let source: string;
let client: KubeClient;
let releases: Record<string, BuiltRelease>;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-gates-store-'));
  source = mkdtempSync(join(tmpdir(), 'bosun-gates-src-'));
  cpSync(join(root, 'release-payload'), source, { recursive: true, dereference: true });
  for (const [file, text] of Object.entries(operatorManifests)) writeFileSync(join(source, 'manifests', file), text);
  releases = {};
  for (const version of ['1.0.0', '1.0.1']) releases[version] = buildRelease({ version, from: source, cvoManifests: join(root, 'manifests'), store });
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await createReleaseCrds(client, releases['1.0.0'].dir);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
  rmSync(source, { recursive: true, force: true });
});

const cond = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);
const cv = () => client.get(CV, 'version');
const configVersion = async (name: string) => (await client.read(CM, name, 'bosun-gates'))?.data?.version;

/** The test plays an operator: writes its ClusterOperator status. */
async function play(name: string, state: { available: boolean; degraded?: string; version: string }): Promise<void> {
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const conditions = [
    { type: 'Available', status: state.available ? 'True' : 'False', reason: state.available ? 'AsExpected' : 'Starting', message: '', lastTransitionTime: t },
    { type: 'Degraded', status: state.degraded ? 'True' : 'False', reason: state.degraded ? 'Broken' : 'AsExpected', message: state.degraded ?? '', lastTransitionTime: t },
    { type: 'Progressing', status: 'False', lastTransitionTime: t },
  ];
  await eventually(`ClusterOperator ${name} to exist`, async () => (await client.read(CO, name)) ?? undefined);
  await client.mergePatch(CO, name, undefined, { status: { conditions, versions: [{ name: 'operator', version: state.version }] } }, 'status');
}

async function setDesired(image: string, version?: string): Promise<void> {
  await client.mergePatch(CV, 'version', undefined, { spec: { desiredUpdate: { image, version: version ?? null } } });
}

test('levels wait on their operators, Degraded is tolerated then Failing, broken payloads are refused, metrics', async () => {
  // No machine-config operator runs here: its ClusterOperator gate is overridden as unmanaged.
  await client.create(CV, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-000000000002', capabilities: { baselineCapabilitySet: 'None' }, overrides: [{ kind: 'ClusterOperator', group: 'config.openshift.io', name: 'machine-config', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'cluster-api', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'monitoring', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'console', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-catalog', namespace: '', unmanaged: true }, { kind: 'ClusterOperator', group: 'config.openshift.io', name: 'operator-lifecycle-manager-packageserver', namespace: '', unmanaged: true }], desiredUpdate: { version: '1.0.0', image: releases['1.0.0'].pullspec } } });
  const stop = new AbortController();
  const cvo = new ClusterVersionOperator({ kubeconfig: loadKubeConfig(api.kubeconfigPath), releaseStore: store, reconcileIntervalMs: 1000, waitTimeoutMs: 800, degradedToleranceMs: 10_000, slowOperatorMs: 120_000, signal: stop.signal });
  const running = cvo.run();
  try {
    // Install: the operators come up at 1.0.0.
    await play('alpha', { available: true, version: '1.0.0' });
    await play('beta', { available: true, version: '1.0.0' });
    await eventually('1.0.0 to be installed', async () => (await cv()).status?.history?.[0]?.state === 'Completed');

    // Capability Console is off (baseline None) and the feature set is Default: neither manifest applied.
    assert.equal(await client.read(CM, 'console-config', 'bosun-gates'), undefined);
    assert.equal(await client.read(CM, 'tech-preview-config', 'bosun-gates'), undefined);
    assert.deepEqual((await cv()).status.capabilities.enabledCapabilities, []);
    await client.mergePatch(CV, 'version', undefined, { spec: { capabilities: { additionalEnabledCapabilities: ['Console'] } } });
    await eventually('the Console manifest once the capability is enabled', async () => client.read(CM, 'console-config', 'bosun-gates'));
    assert.deepEqual((await cv()).status.capabilities.enabledCapabilities, ['Console']);
    await client.create({ group: 'config.openshift.io', version: 'v1', resource: 'featuregates', namespaced: false }, { apiVersion: 'config.openshift.io/v1', kind: 'FeatureGate', metadata: { name: 'cluster' }, spec: { featureSet: 'TechPreviewNoUpgrade' } });
    await eventually('the TechPreviewNoUpgrade manifest under that feature set', async () => client.read(CM, 'tech-preview-config', 'bosun-gates'));

    // Update: level 10 is applied, then the CVO waits on alpha, naming it; level 20 is untouched.
    await setDesired(releases['1.0.1'].pullspec, '1.0.1');
    await eventually('alpha-config to move to 1.0.1', async () => (await configVersion('alpha-config')) === '1.0.1');
    const waiting = await eventually('Progressing to name alpha', async () => {
      const o = await cv();
      return /waiting on alpha$/.test(cond(o, 'Progressing')?.message ?? '') ? o : undefined;
    });
    assert.equal(cond(waiting, 'Failing').status, 'False', 'waiting on an operator is not a failure');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await configVersion('beta-config'), '1.0.0', 'level 20 started before alpha reported 1.0.1');

    // alpha turns Degraded: tolerated at first, then Failing names it.
    await play('alpha', { available: true, degraded: 'disk pressure on the alpha pods', version: '1.0.0' });
    const tolerated = await eventually('the degraded operator to be named', async () => {
      const o = await cv();
      return /waiting on alpha$/.test(cond(o, 'Progressing')?.message ?? '') && cond(o, 'Failing')?.status === 'False' ? o : undefined;
    });
    assert.equal(tolerated.status.history[0].state, 'Partial');
    const failing = await eventually('Failing after the tolerance', async () => {
      const o = await cv();
      return cond(o, 'Failing')?.status === 'True' ? o : undefined;
    });
    assert.equal(cond(failing, 'Failing').reason, 'ClusterOperatorDegraded');
    assert.match(cond(failing, 'Failing').message, /Cluster operator alpha is degraded: disk pressure on the alpha pods/);
    assert.equal(await configVersion('beta-config'), '1.0.0');

    const metrics = await cvo.metrics.registry.metrics();
    assert.match(metrics, /cluster_operator_up\{name="alpha",version="1\.0\.0",reason="AsExpected"\} 1/);
    assert.match(metrics, /cluster_operator_conditions\{name="alpha",condition="Degraded",reason="Broken"\} 1/);
    assert.match(metrics, /cluster_version\{type="updating",version="1\.0\.1",image="[^"]+",from_version="1\.0\.0"\} \d+/);
    assert.match(metrics, /cluster_version\{type="failure",version="1\.0\.1",[^}]*\} \d+/);
    assert.match(metrics, /cluster_version\{type="completed",version="1\.0\.0",[^}]*\} \d+/);
    assert.match(metrics, /cluster_version_operator_apply_duration_seconds_count\{mode="Updating"\} [1-9]/);

    // alpha recovers at 1.0.1: level 20 goes ahead, then the CVO waits on beta.
    await play('alpha', { available: true, version: '1.0.1' });
    await eventually('beta-config to move to 1.0.1', async () => (await configVersion('beta-config')) === '1.0.1');
    await eventually('Progressing to name beta', async () => /waiting on beta$/.test(cond(await cv(), 'Progressing')?.message ?? ''));
    await play('beta', { available: true, version: '1.0.1' });
    const done = await eventually('1.0.1 to complete', async () => {
      const o = await cv();
      return o.status?.history?.[0]?.version === '1.0.1' && o.status.history[0].state === 'Completed' ? o : undefined;
    });
    assert.equal(cond(done, 'Failing').status, 'False');

    // Broken payloads are refused, naming the file; nothing is applied.
    const good = readReleaseFiles(releases['1.0.1'].dir);
    const broken: Array<[string, Record<string, string | Buffer>, string, RegExp]> = [
      ['bad YAML', { ...good, 'release-manifests/0000_20_beta_02_broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n' }, 'LoadPayload', /release-manifests\/0000_20_beta_02_broken\.yaml/],
      ['a kind nobody serves', { ...good, 'release-manifests/0000_20_beta_03_widget.yaml': 'apiVersion: widgets.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n' }, 'LoadPayload', /release-manifests\/0000_20_beta_03_widget\.yaml \(document 0\): the cluster serves no kind Widget in widgets\.example\.com\/v1/],
      ['image-references naming another version', { ...good, 'release-manifests/image-references': String(good['release-manifests/image-references']).replace(/name: 1\.0\.1/, 'name: 1.0.7') }, 'LoadPayload', /release-manifests\/image-references: metadata\.name "1\.0\.7" does not match the release version "1\.0\.1"/],
    ];
    for (const [what, files, reason, message] of broken) {
      const release = writeRelease(store, { ...files, 'release-manifests/0000_20_beta_01_config.yaml': String(files['release-manifests/0000_20_beta_01_config.yaml']).replace('"1.0.1"', '"broken"') });
      await setDesired(release.pullspec);
      const refused = await eventually(`the payload with ${what} to be refused`, async () => {
        const o = await cv();
        return cond(o, 'ReleaseAccepted')?.status === 'False' && o.status?.conditions && JSON.stringify(cond(o, 'ReleaseAccepted')).includes(release.pullspec) ? o : undefined;
      });
      assert.equal(cond(refused, 'ReleaseAccepted').reason, reason, what);
      assert.match(cond(refused, 'ReleaseAccepted').message, message, what);
      assert.equal(refused.status.history[0].version, '1.0.1', what);
      assert.equal(refused.status.history[0].state, 'Completed', what);
      assert.equal(cond(refused, 'Available').status, 'True', what);
      assert.equal(await configVersion('beta-config'), '1.0.1', `${what}: nothing of it was applied`);
    }
  } finally {
    stop.abort();
    await running;
  }
});
