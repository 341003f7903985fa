// Upgrades end to end on a local bring-up: the CVO learns its updates from the update service
// (and new ones when the channel changes), resolves a version-only request, verifies releases
// (an altered or unsigned one is refused), refuses a minor update while an operator says
// Upgradeable=False and a downgrade, takes a forced update recording the accepted risk, and
// keeps its last known updates when the upstream is down or answers garbage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { bringUp } from '../../src/cluster/bring-up.js';
import { localClusterOptions } from '../helpers/local-cluster.js';
import { readReleaseFiles, writeRelease } from '../../src/release/release-store.js';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { parsePullspec, signRelease } from '../../src/release/signature.js';
import { storeSignature } from '../../src/release/signature-store.js';
import { eventually as eventuallyWithin } from '../helpers/eventually.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CV = { group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' };

/** Each step waits on a CVO that polls the update service: up to 30 s. */
const eventually = <T>(what: string, check: () => Promise<T | undefined>) => eventuallyWithin(what, check, { timeoutMs: 30_000, intervalMs: 150 });

const cond = (cv: any, type: string) => (cv.status?.conditions ?? []).find((c: any) => c.type === type);

test('updates, channels, verification, preconditions, force and a failing upstream', async () => {
  const options = localClusterOptions({ upstreamPollMs: 300 });
  const dataDir = options.dataDir;
  const cluster = await bringUp(options);
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const get = () => custom.getClusterCustomObject(CV) as Promise<any>;
    // Read-modify-write, retried when the CVO's status writes get in between (as kubectl edit would be).
    const setSpec = async (spec: object) => {
      for (let attempt = 0; ; attempt++) {
        const cv = await get();
        try {
          await custom.replaceClusterCustomObject({ ...CV, body: { ...cv, spec: { ...cv.spec, ...spec } } });
          return;
        } catch (e) {
          if ((e as { code?: number }).code !== 409 || attempt > 10) throw e;
        }
      }
    };
    const byVersion = Object.fromEntries(cluster.releases.map((r) => [r.version, r.pullspec]));

    const offered = await eventually('updates from the update service', async () => {
      const cv = await get();
      return cond(cv, 'RetrievedUpdates')?.status === 'True' ? cv : undefined;
    });
    assert.deepEqual(offered.status.availableUpdates.map((u: any) => [u.version, u.image]), [['1.0.1', byVersion['1.0.1']]]);
    assert.deepEqual(offered.status.conditionalUpdates.map((u: any) => [u.release.version, u.conditions[0].status]), [['1.0.2', 'False']]);
    assert.ok(offered.status.desired.channels.includes('stable-1.0'));
    assert.equal(offered.status.history[0].verified, true, 'the installed release was verified');

    // A version-only request is resolved against the available updates.
    await setSpec({ desiredUpdate: { version: '1.0.1' } });
    const updated = await eventually('1.0.1 to complete', async () => {
      const cv = await get();
      return cv.status?.history?.[0]?.version === '1.0.1' && cv.status.history[0].state === 'Completed' ? cv : undefined;
    });
    assert.equal(updated.status.history[0].image, byVersion['1.0.1']);
    assert.deepEqual(updated.status.history.map((h: any) => h.version), ['1.0.1', '1.0.0']);
    assert.equal(updated.status.history[0].verified, true);
    const refuseWith = async (what: string, spec: object, pattern: RegExp) => {
      await setSpec(spec);
      const cv = await eventually(what, async () => {
        const c = await get();
        return cond(c, 'ReleaseAccepted')?.status === 'False' && pattern.test(cond(c, 'ReleaseAccepted').message) ? c : undefined;
      });
      assert.equal(cv.status.history[0].state, 'Completed', `${what}: the cluster stays where it was`);
      return cv;
    };

    // Switching channel changes what is offered: stable-1.1 adds the minor update.
    await eventually('1.0.2 offered on stable-1.0', async () => ((await get()).status.availableUpdates?.map((u: any) => u.version).join() === '1.0.2' ? true : undefined));
    await setSpec({ channel: 'stable-1.1' });
    await eventually('1.1.0 offered on stable-1.1', async () => ((await get()).status.availableUpdates?.map((u: any) => u.version).sort().join() === '1.0.2,1.1.0' ? true : undefined));

    // An altered payload and an unsigned one are refused.
    const altered = cluster.releases.find((r) => r.version === '1.1.1')!;
    appendFileSync(join(altered.dir, 'release-manifests', 'image-references'), '\n');
    await refuseWith('an altered payload to be refused', { desiredUpdate: { image: altered.pullspec } }, /The update cannot be verified: .*altered/);
    const unsigned = writeRelease(join(dataDir, 'releases'), { ...readReleaseFiles(cluster.releases.find((r) => r.version === '1.0.2')!.dir), 'release-manifests/0000_99_extra_note.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\n  namespace: openshift-config\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: "true"\n' });
    await refuseWith('an unsigned payload to be refused', { desiredUpdate: { image: unsigned.pullspec } }, /The update cannot be verified: .*no signature/);

    // A signed release two minors ahead is refused as a minor skip.
    const skip = buildRelease({ version: '1.2.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store: join(dataDir, 'releases') });
    const signature = await signRelease(skip.pullspec, readFileSync(join(dataDir, 'keys', 'signing-key.asc'), 'utf8'));
    storeSignature(join(dataDir, 'signatures'), parsePullspec(skip.pullspec).digest, signature);
    await refuseWith('a minor skip to be refused', { desiredUpdate: { image: skip.pullspec, version: '1.2.0' } }, /MinorVersionSkip: updating from 1\.0\.1 to 1\.2\.0 skips minor versions/);

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
      return cond(cv, 'ReleaseAccepted')?.reason === 'PreconditionChecks' && /UpgradeableFalse/.test(cond(cv, 'ReleaseAccepted').message) ? cv : undefined;
    });
    assert.equal(cond(refused, 'ReleaseAccepted').status, 'False');
    assert.match(cond(refused, 'ReleaseAccepted').message, /UpgradeableFalse: .*storage should not be upgraded between minor versions: a volume plugin removed in 1\.1 is in use/);
    assert.equal(refused.status.history[0].version, '1.0.1');

    // force: taken, with the overridden precondition recorded.
    await setSpec({ desiredUpdate: { version: '1.1.0', image: byVersion['1.1.0'], force: true } });
    const forced = await eventually('the forced update to complete', async () => {
      const cv = await get();
      return cv.status?.history?.[0]?.version === '1.1.0' && cv.status.history[0].state === 'Completed' ? cv : undefined;
    });
    assert.match(forced.status.history[0].acceptedRisks, /UpgradeableFalse|not upgradeable/);

    // A downgrade to an earlier minor is refused.
    await refuseWith('a downgrade to be refused', { desiredUpdate: { version: '1.0.1', image: byVersion['1.0.1'], force: false } }, /ClusterVersionDowngrade/);

    // The upstream answering garbage, then down: RetrievedUpdates=False, last updates kept.
    const known = (await get()).status.availableUpdates;
    await setSpec({ upstream: `${cluster.updateService.url}/releases` });
    const garbage = await eventually('ResponseInvalid', async () => {
      const cv = await get();
      return cond(cv, 'RetrievedUpdates')?.status === 'False' ? cv : undefined;
    });
    assert.equal(cond(garbage, 'RetrievedUpdates').reason, 'ResponseInvalid');
    assert.deepEqual(garbage.status.availableUpdates, known);
    await setSpec({ upstream: 'http://127.0.0.1:9/api/upgrades_info/v1/graph' });
    const down = await eventually('RemoteFailed', async () => {
      const cv = await get();
      return cond(cv, 'RetrievedUpdates')?.reason === 'RemoteFailed' ? cv : undefined;
    });
    assert.deepEqual(down.status.availableUpdates, known);
  } finally {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
