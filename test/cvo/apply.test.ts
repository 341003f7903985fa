// The apply engine against the real embedded API server: a ClusterOperator its operator created
// before the CVO reached it gets the payload's metadata merged in, its status left alone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { applyManifest } from '../../src/cvo/apply.js';
import { KubeClient } from '../../src/kube/client.js';
import { resources } from '../../src/kube/resources.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import type { Manifest } from '../../src/cvo/payload/manifest.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let api: TestApiServer;
let store: string;
let client: KubeClient;

before(async () => {
  api = await startTestApiServer();
  store = mkdtempSync(join(tmpdir(), 'bosun-cvo-apply-'));
  const release = buildRelease({ version: '1.0.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  client = new KubeClient(kc);
  await createReleaseCrds(client, release.dir);
});
after(async () => {
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

const INCLUDE = 'include.release.openshift.io/self-managed-high-availability';

test("an existing ClusterOperator gets the payload's annotations; its status stays the operator's", async () => {
  const created = await client.create(resources.clusterOperators, { metadata: { name: 'machine-config', annotations: { mine: 'kept' } }, spec: {} });
  const status = {
    conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'AsExpected', message: 'fine' }],
    versions: [{ name: 'operator', version: '1.0.0' }],
  };
  await client.update(resources.clusterOperators, { ...created, status }, 'status');
  const m: Manifest = {
    file: '0000_80_machine-config_06_clusteroperator.yaml',
    document: 0,
    gvk: { group: 'config.openshift.io', version: 'v1', kind: 'ClusterOperator' },
    object: {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterOperator',
      metadata: { name: 'machine-config', annotations: { [INCLUDE]: 'true' } },
      spec: {},
      status: { versions: [{ name: 'operator', version: '1.0.0' }] },
    },
  };
  await applyManifest(m, { client, mode: 'Initializing', waitTimeoutMs: 2000 });
  const co = await client.get(resources.clusterOperators, 'machine-config');
  assert.equal(co.metadata.annotations?.[INCLUDE], 'true');
  assert.equal(co.metadata.annotations?.mine, 'kept');
  assert.deepEqual(co.status?.conditions?.map((c) => [c.type, c.status, c.message]), [['Available', 'True', 'fine']]);

  // Applied again: nothing to write.
  const before = co.metadata.resourceVersion;
  await applyManifest(m, { client, mode: 'Initializing', waitTimeoutMs: 2000 });
  assert.equal((await client.get(resources.clusterOperators, 'machine-config')).metadata.resourceVersion, before);
});
