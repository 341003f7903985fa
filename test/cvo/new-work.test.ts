// When a pass of the CVO runs, and when the next one does. A pass that waits — on a ClusterOperator
// not yet at the release it updates to, for the length of its wait timeout — is cancelled when the
// ClusterVersion asks for other work (another release), and the next pass starts on that at once,
// as OpenShift's sync worker cancels its loop; without that, retargeting an update mid-way waited
// for the old target's pass to give up. And a pass that starts takes the place of the one the last
// pass scheduled: that timer firing during the pass made a second pass run as soon as the first
// ended — right after an install, a whole Reconciling pass that nothing asked for, which an update
// asked for then waited behind.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRelease } from '../../src/release/release-store.js';
import { ClusterVersionOperator } from '../../src/cvo/operator.js';
import { KubeClient, type ResourceRef, type Obj } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CV: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
const CO: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusteroperators', namespaced: false };
const CM: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

/** A client that counts its reads of ConfigMaps (a Reconciling or Updating pass reads every one it applies). */
class CountingClient extends KubeClient {
  configMapReads = 0;
  override async read<T>(ref: ResourceRef<T>, name: string, namespace?: string): Promise<T | undefined> {
    if (ref.resource === 'configmaps') this.configMapReads++;
    return super.read(ref, name, namespace);
  }
}

let api: TestApiServer;
let store: string;
let client: KubeClient;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-cvo-new-work-'));
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await createReleaseCrds(client, root);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

const include = 'annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"';
/** Release `version`: a ConfigMap marker-<version> in default (run level 05), then ClusterOperator alpha at the version (run level 10). */
function release(version: string): string {
  return writeRelease(store, {
    'release-manifests/release-metadata': JSON.stringify({ kind: 'cincinnati-metadata-v0', version }),
    'release-manifests/image-references': `apiVersion: image.openshift.io/v1\nkind: ImageStream\nmetadata:\n  name: "${version}"\nspec:\n  tags: []\n`,
    'release-manifests/0000_05_marker_00_configmap.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: marker-${version.replace(/\./g, '-')}\n  namespace: default\n  ${include}\ndata:\n  version: "${version}"\n`,
    'release-manifests/0000_10_alpha_90_clusteroperator.yaml': `apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: alpha\n  ${include}\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: "${version}"\n`,
  }).pullspec;
}

/** ClusterOperator alpha Available, reporting `version`. */
async function alphaAt(version: string): Promise<void> {
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const conditions = ['Available:True', 'Degraded:False', 'Progressing:False'].map((s) => ({ type: s.split(':')[0], status: s.split(':')[1], reason: 'AsExpected', message: '', lastTransitionTime: t }));
  await eventually('ClusterOperator alpha created by the CVO', () => client.read(CO, 'alpha'), 15_000);
  await client.mergePatch(CO, 'alpha', undefined, { status: { conditions, versions: [{ name: 'operator', version }] } }, 'status');
}

/** Read-modify-write of spec.desiredUpdate, retried when the CVO's status writes get in between. */
async function setDesired(image: string, version: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const cv = await client.get(CV, 'version');
    cv.spec.desiredUpdate = { image, version };
    try {
      await client.update(CV, cv);
      return;
    } catch (e) {
      if ((e as { code?: number }).code !== 409 || attempt > 10) throw e;
    }
  }
}

test('no pass runs after the install until one is due, and an update retargeted while its pass waits on an operator moves to the new target at once', async () => {
  const v100 = release('1.0.0');
  const progress: string[] = [];
  const cvoClient = new CountingClient(loadKubeConfig(api.kubeconfigPath));
  const stop = new AbortController();
  const cvo = new ClusterVersionOperator({
    kubeconfig: loadKubeConfig(api.kubeconfigPath), client: cvoClient, releaseStore: store,
    // Long enough that a pass waiting on alpha outlasts the test; no reconciling pass comes due in it.
    waitTimeoutMs: 120_000, reconcileIntervalMs: 3_600_000, signal: stop.signal,
    onProgress: (message) => progress.push(message),
  });
  // Started before there is a ClusterVersion: its first pass finds none and schedules the next in a
  // second, a timer that fires while the install's pass (held on alpha for longer) runs.
  const running = cvo.run();
  try {
    await new Promise((r) => setTimeout(r, 300));
    await client.create(CV, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-0000000c0de5', desiredUpdate: { image: v100, version: '1.0.0' } } });
    await eventually('the install waiting on alpha', () => progress.some((m) => /^Working towards 1\.0\.0: .*waiting on alpha$/.test(m)), 15_000);
    await new Promise((r) => setTimeout(r, 1500));
    await alphaAt('1.0.0');
    await eventually('1.0.0 installed', async () => (await client.get(CV, 'version')).status?.history?.[0]?.state === 'Completed', 15_000);
    // The install created its ConfigMap without reading it; a pass after it would read it.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(cvoClient.configMapReads, 0, 'no pass ran after the install (the next is due in an hour)');

    // Update to 1.0.1: its pass applies the marker, then waits on alpha, which never reports 1.0.1.
    await setDesired(release('1.0.1'), '1.0.1');
    await eventually('the update to 1.0.1 waiting on alpha', () => progress.some((m) => /^Working towards 1\.0\.1: .*waiting on alpha$/.test(m)), 15_000);
    assert.ok(await client.read(CM, 'marker-1-0-1', 'default'), "1.0.1's marker applied before the wait");
    // Retargeted to 1.0.2 while that pass waits (it would wait 120 s).
    const retargeted = Date.now();
    await setDesired(release('1.0.2'), '1.0.2');
    const marker = await eventually("1.0.2's pass under way: its marker applied", () => client.read(CM, 'marker-1-0-2', 'default'), 15_000);
    assert.equal(marker.data.version, '1.0.2');
    const seconds = (Date.now() - retargeted) / 1000;
    const cv = await eventually('the ClusterVersion desiring 1.0.2, waiting on alpha', async () => {
      const o = await client.get(CV, 'version');
      return o.status?.desired?.version === '1.0.2' && /waiting on alpha/.test(o.status.conditions.find((c: Obj) => c.type === 'Progressing')?.message ?? '') && o;
    }, 15_000);
    assert.deepEqual(cv.status.history.map((h: Obj) => `${h.version} ${h.state}`), ['1.0.2 Partial', '1.0.1 Partial', '1.0.0 Completed']);
    assert.ok(seconds < 15, `the new target's pass started ${seconds.toFixed(1)} s after the retarget`);

    // And it completes when alpha reports it.
    await alphaAt('1.0.2');
    await eventually('1.0.2 Completed', async () => (await client.get(CV, 'version')).status?.history?.[0]?.state === 'Completed', 15_000);
  } finally {
    stop.abort();
    await running;
  }
});
