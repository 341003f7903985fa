// Upgrades end to end on a local bring-up: the CVO learns its updates from the update service,
// resolves a version-only request, refuses a minor update while an operator says
// Upgradeable=False, and takes it with force, recording the accepted risk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { bringUp } from '../../src/cluster/bring-up.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CV = { group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' };

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const cond = (cv: any, type: string) => (cv.status?.conditions ?? []).find((c: any) => c.type === type);

test('available updates, a version-only update, Upgradeable=False and force', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-updates-'));
  const cluster = await bringUp({
    dataDir,
    releaseSources: join(root, 'release-payload'),
    cvoManifests: join(root, 'manifests'),
    api: { host: '127.0.0.1', port: 0 },
    updateService: { host: '127.0.0.1', port: 0 },
    version: '1.0.0',
    channel: 'stable-1.0',
    upstreamPollMs: 300,
  });
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const get = () => custom.getClusterCustomObject(CV) as Promise<any>;
    const setSpec = async (spec: object) => {
      const cv = await get();
      await custom.replaceClusterCustomObject({ ...CV, body: { ...cv, spec: { ...cv.spec, ...spec } } });
    };
    const byVersion = Object.fromEntries(cluster.releases.map((r) => [r.version, r.pullspec]));

    const offered = await eventually('updates from the update service', async () => {
      const cv = await get();
      return cond(cv, 'RetrievedUpdates')?.status === 'True' ? cv : undefined;
    });
    assert.deepEqual(offered.status.availableUpdates.map((u: any) => [u.version, u.image]), [['1.0.1', byVersion['1.0.1']]]);
    assert.deepEqual(offered.status.conditionalUpdates.map((u: any) => [u.release.version, u.conditions[0].status]), [['1.0.2', 'False']]);
    assert.ok(offered.status.desired.channels.includes('stable-1.0'));

    // A version-only request is resolved against the available updates.
    await setSpec({ desiredUpdate: { version: '1.0.1' } });
    const updated = await eventually('1.0.1 to complete', async () => {
      const cv = await get();
      return cv.status?.history?.[0]?.version === '1.0.1' && cv.status.history[0].state === 'Completed' ? cv : undefined;
    });
    assert.equal(updated.status.history[0].image, byVersion['1.0.1']);
    assert.deepEqual(updated.status.history.map((h: any) => h.version), ['1.0.1', '1.0.0']);

    // An operator says Upgradeable=False: a minor update is refused, naming it.
    await k8s.KubernetesObjectApi.makeApiClient(kc).create({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'storage' }, spec: {} } as k8s.KubernetesObject);
    const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const co = await custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusteroperators', name: 'storage' });
    await custom.replaceClusterCustomObjectStatus({
      group: 'config.openshift.io',
      version: 'v1',
      plural: 'clusteroperators',
      name: 'storage',
      body: { ...(co as object), status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: t }, { type: 'Upgradeable', status: 'False', reason: 'DeprecatedAPIInUse', message: 'a volume plugin removed in 1.1 is in use', lastTransitionTime: t }] } },
    });
    await eventually('Upgradeable=False on the ClusterVersion', async () => (cond(await get(), 'Upgradeable')?.status === 'False' ? true : undefined));
    await setSpec({ desiredUpdate: { version: '1.1.0', image: byVersion['1.1.0'] } });
    const refused = await eventually('the minor update to be refused', async () => {
      const cv = await get();
      return cond(cv, 'ReleaseAccepted')?.status === 'False' ? cv : undefined;
    });
    assert.equal(cond(refused, 'ReleaseAccepted').reason, 'PreconditionChecks');
    assert.match(cond(refused, 'ReleaseAccepted').message, /UpgradeableFalse: .*storage should not be upgraded between minor versions: a volume plugin removed in 1\.1 is in use/);
    assert.equal(refused.status.history[0].version, '1.0.1');

    // force: taken, with the overridden precondition recorded.
    await setSpec({ desiredUpdate: { version: '1.1.0', image: byVersion['1.1.0'], force: true } });
    const forced = await eventually('the forced update to complete', async () => {
      const cv = await get();
      return cv.status?.history?.[0]?.version === '1.1.0' && cv.status.history[0].state === 'Completed' ? cv : undefined;
    });
    assert.match(forced.status.history[0].acceptedRisks, /UpgradeableFalse|not upgradeable/);
  } finally {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
