// A ClusterOperator that changes while a pass of the CVO runs — after the pass looked at it, before
// the pass ends waiting on it — must start the next pass at once: the change was not news when it
// came (the pass was not yet waiting), and no later event announces it. On a FakeClock that
// nobody advances, a pass that instead waited out its delay never comes, so the install would
// never complete. The CVO's status writes are held (a fault injected into its client) from the
// moment the pass says it waits on the operator until the operator has become Available, so that
// the change lands inside the pass every time, as it did now and then on a loaded machine.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRelease } from '../../src/release/release-store.js';
import { ClusterVersionOperator } from '../../src/cvo/operator.js';
import { FakeClock } from '../../src/kube/clock.js';
import { KubeClient, type ResourceRef, type Obj } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CV: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
const CO: ResourceRef<Obj> = { group: 'config.openshift.io', version: 'v1', resource: 'clusteroperators', namespaced: false };

/** A client whose ClusterVersion writes wait while `held` is set. */
class HeldClusterVersionWrites extends KubeClient {
  held?: Promise<void>;
  override async update<T>(ref: ResourceRef<T>, object: T, subresource?: string): Promise<T> {
    if (ref.resource === 'clusterversions') await this.held;
    return super.update(ref, object as never, subresource);
  }
}

let api: TestApiServer;
let store: string;
let client: KubeClient;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-cvo-wakeup-'));
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await createReleaseCrds(client, root);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

test('an operator that becomes Available while the pass that waits on it is still running starts the next pass at once', async () => {
  const include = 'annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"';
  const payload = writeRelease(store, {
    'release-manifests/release-metadata': JSON.stringify({ kind: 'cincinnati-metadata-v0', version: '1.0.0' }),
    'release-manifests/image-references': 'apiVersion: image.openshift.io/v1\nkind: ImageStream\nmetadata:\n  name: "1.0.0"\nspec:\n  tags: []\n',
    'release-manifests/0000_10_alpha_90_clusteroperator.yaml': `apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: alpha\n  ${include}\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: "1.0.0"\n`,
  });
  await client.create(CV, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-00000000c10d', desiredUpdate: { image: payload.pullspec, version: '1.0.0' } } });

  const cvoClient = new HeldClusterVersionWrites(loadKubeConfig(api.kubeconfigPath));
  let letGo: () => void = () => undefined;
  let holding: () => void = () => undefined;
  const held = new Promise<void>((r) => (holding = r));
  const stop = new AbortController();
  const cvo = new ClusterVersionOperator({
    kubeconfig: loadKubeConfig(api.kubeconfigPath), client: cvoClient, releaseStore: store, clock: new FakeClock(Date.UTC(2026, 5, 1, 8, 0, 0)),
    waitTimeoutMs: 50, signal: stop.signal,
    onProgress: (message) => {
      if (!cvoClient.held && message.endsWith('waiting on alpha')) {
        cvoClient.held = new Promise<void>((r) => (letGo = r));
        holding();
      }
    },
  });
  const running = cvo.run();
  try {
    await held;
    // The pass has given up its wait on alpha (50 ms) and stands at its status writes.
    await new Promise((r) => setTimeout(r, 300));
    const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const conditions = ['Available:True', 'Degraded:False', 'Progressing:False'].map((s) => ({ type: s.split(':')[0], status: s.split(':')[1], reason: 'AsExpected', message: '', lastTransitionTime: t }));
    await client.mergePatch(CO, 'alpha', undefined, { status: { conditions, versions: [{ name: 'operator', version: '1.0.0' }] } }, 'status');
    // The CVO's informer has the change before the pass ends.
    await new Promise((r) => setTimeout(r, 300));
    letGo();
    const installed = await eventually('1.0.0 to be installed without the clock moving', async () => {
      const o = await client.get(CV, 'version');
      return o.status?.history?.[0]?.state === 'Completed' ? o : undefined;
    }, 15_000);
    assert.equal(installed.status.desired.version, '1.0.0');
  } finally {
    letGo();
    stop.abort();
    await running;
  }
});
