// The CVO's time rules on an injected FakeClock, against the embedded API server: an update that
// waits on two operators turns SlowClusterOperator after 30 minutes (machine-config after 90),
// history records the clock's times, and the reconcile interval is the clock's — each a step of
// clock.advance() answered within a wait of seconds, where on the real clock it would take 10 to
// 90 minutes (no test asserts a time: the waits' bounds are what shows no real waiting happened).
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
const CM: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const include = 'annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"';
const minutes = (n: number) => n * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A release of two operators (alpha, machine-config) and a ConfigMap, at `version`. */
function release(store: string, version: string) {
  const operator = (name: string) =>
    `apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: ${name}\n  ${include}\nspec: {}\nstatus:\n  versions:\n  - name: operator\n    version: "${version}"\n`;
  return writeRelease(store, {
    'release-manifests/release-metadata': JSON.stringify({ kind: 'cincinnati-metadata-v0', version }),
    'release-manifests/image-references': `apiVersion: image.openshift.io/v1\nkind: ImageStream\nmetadata:\n  name: "${version}"\nspec:\n  tags: []\n`,
    'release-manifests/0000_10_alpha_00_config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha-config\n  namespace: default\n  ${include}\ndata:\n  version: "${version}"\n`,
    'release-manifests/0000_10_alpha_90_clusteroperator.yaml': operator('alpha'),
    'release-manifests/0000_10_machine-config_90_clusteroperator.yaml': operator('machine-config'),
  });
}

let api: TestApiServer;
let store: string;
let client: KubeClient;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-cvo-clock-'));
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  await createReleaseCrds(client, root);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

const cond = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);

/** The test plays an operator: Available, not Degraded, at `version`. */
async function play(name: string, version: string): Promise<void> {
  const t = iso(Date.now());
  await eventually(`ClusterOperator ${name} to exist`, async () => (await client.read(CO, name)) ?? undefined);
  const conditions = ['Available:True', 'Degraded:False', 'Progressing:False'].map((s) => ({ type: s.split(':')[0], status: s.split(':')[1], reason: 'AsExpected', message: '', lastTransitionTime: t }));
  await client.mergePatch(CO, name, undefined, { status: { conditions, versions: [{ name: 'operator', version }] } }, 'status');
}

/** Advances the clock and waits (a few seconds at most) until the ClusterVersion says `what`. */
async function advanceUntil(clock: FakeClock, ms: number, what: string, check: (cv: any) => boolean): Promise<{ cv: any }> {
  clock.advance(ms);
  const cv = await eventually(what, async () => {
    const o = await client.get(CV, 'version');
    if (check(o)) return o;
    // A pass still running when the clock moved schedules its next one from the new time.
    clock.advance(5000);
    return undefined;
  }, 5000);
  return { cv };
}

test('SlowClusterOperator after 30 minutes (machine-config 90), history times and the reconcile interval, on a FakeClock', async () => {
  const clock = new FakeClock(Date.UTC(2026, 5, 1, 8, 0, 0));
  const start = clock.now();
  const v1 = release(store, '1.0.0');
  const v2 = release(store, '1.0.1');
  await client.create(CV, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-00000000c10c', desiredUpdate: { image: v1.pullspec, version: '1.0.0' } } });
  const stop = new AbortController();
  const cvo = new ClusterVersionOperator({ kubeconfig: loadKubeConfig(api.kubeconfigPath), releaseStore: store, clock, reconcileIntervalMs: minutes(10), waitTimeoutMs: 50, signal: stop.signal });
  const running = cvo.run();
  try {
    // Install: the operators come up; the history entry carries the clock's time.
    await play('alpha', '1.0.0');
    await play('machine-config', '1.0.0');
    const installed = await eventually('1.0.0 to be installed', async () => {
      const o = await client.get(CV, 'version');
      return o.status?.history?.[0]?.state === 'Completed' ? o : undefined;
    }, 90_000); // the install's passes are real work: a loaded machine (a full test run) took over 20 s
    assert.equal(installed.status.history[0].startedTime, iso(start));
    assert.equal(installed.status.history[0].completionTime, iso(start));

    // The reconcile interval is the clock's: a deleted ConfigMap stays deleted until it passes.
    await client.delete(CM, 'alpha-config', 'default');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await client.read(CM, 'alpha-config', 'default'), undefined, 'reconciled before the interval passed on the clock');
    clock.advance(minutes(10));
    await eventually('the reconcile to put alpha-config back', async () => client.read(CM, 'alpha-config', 'default'), 5000);

    // Update: both operators are waited on, which is progress.
    const updateStart = clock.now();
    await client.mergePatch(CV, 'version', undefined, { spec: { desiredUpdate: { image: v2.pullspec, version: '1.0.1' } } });
    const waiting = await eventually('the update to wait on both operators', async () => {
      const o = await client.get(CV, 'version');
      return /waiting on alpha, machine-config$/.test(cond(o, 'Progressing')?.message ?? '') ? o : undefined;
    }, 60_000);
    assert.equal(cond(waiting, 'Failing').status, 'False');
    assert.equal(waiting.status.history[0].startedTime, iso(updateStart));

    // 29 minutes: still only waiting.
    clock.advance(minutes(29));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(cond(await client.get(CV, 'version'), 'Failing').status, 'False');

    // 31 minutes: alpha is slow; machine-config is allowed 90.
    const slow = await advanceUntil(clock, minutes(2), 'SlowClusterOperator for alpha', (o) => cond(o, 'Failing')?.reason === 'SlowClusterOperator');
    assert.equal(cond(slow.cv, 'Failing').status, 'Unknown');
    assert.equal(cond(slow.cv, 'Failing').message, 'waiting on alpha over 30 minutes which is longer than expected');

    // alpha arrives; machine-config alone is waited on, not yet slow at 31 minutes…
    await play('alpha', '1.0.1');
    await eventually('alpha to be done', async () => {
      const o = await client.get(CV, 'version');
      return /waiting on machine-config$/.test(cond(o, 'Progressing')?.message ?? '') && cond(o, 'Failing')?.status === 'False' ? o : undefined;
    }, 60_000);
    // …and slow at 91.
    const mcSlow = await advanceUntil(clock, minutes(60), 'SlowClusterOperator for machine-config', (o) => cond(o, 'Failing')?.reason === 'SlowClusterOperator');
    assert.equal(cond(mcSlow.cv, 'Failing').message, 'waiting on machine-config over 90 minutes which is longer than expected');

    await play('machine-config', '1.0.1');
    const done = await eventually('1.0.1 to complete', async () => {
      const o = await client.get(CV, 'version');
      return o.status?.history?.[0]?.version === '1.0.1' && o.status.history[0].state === 'Completed' ? o : undefined;
    }, 60_000);
    assert.equal(done.status.history[0].completionTime, iso(clock.now()));
    assert.ok(clock.now() - updateStart >= minutes(91));
    assert.equal(cond(done, 'Failing').status, 'False');
  } finally {
    stop.abort();
    await running;
  }
});
