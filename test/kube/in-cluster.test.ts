// loadKubeConfig in a pod: no kubeconfig file, $KUBERNETES_SERVICE_HOST/PORT and the service
// account's token and CA mounted (here below $BOSUN_IN_CLUSTER_ROOT). Requests authenticate as
// the service account (client-node, like client-go, reads the token file again at most once a
// minute, so rotation is picked up within a minute; not waited for here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer } from '../helpers/apiserver.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { KubeClient } from '../../src/kube/client.js';

test('in a pod, requests authenticate as the mounted service account', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  await enableAccessControl(api.server, api.dataDir);
  const root = mkdtempSync(join(tmpdir(), 'bosun-in-cluster-'));
  const saved = { ...process.env };
  try {
    for (const name of ['first', 'second']) {
      const r = await api.kubectl(['create', 'serviceaccount', name, '-n', 'default']);
      assert.equal(r.code, 0, r.stderr);
    }
    const token = async (name: string) => (await api.kubectl(['create', 'token', name, '-n', 'default'])).stdout.trim();
    const dir = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ca.crt'), api.caPem);
    writeFileSync(join(dir, 'namespace'), 'default');
    writeFileSync(join(dir, 'token'), await token('first'));

    delete process.env.KUBECONFIG;
    process.env.HOME = root; // no ~/.kube/config here
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = String(api.port);
    process.env.BOSUN_IN_CLUSTER_ROOT = root;
    const client = new KubeClient(loadKubeConfig());

    // Unbound service accounts may not list ConfigMaps: the 403 names who asked.
    await assert.rejects(client.list({ group: '', version: 'v1', resource: 'configmaps', namespaced: true }, 'default'), (e: any) => e.code === 403 && /system:serviceaccount:default:first/.test(e.message));
    // Another pod's mount, another identity.
    writeFileSync(join(dir, 'token'), await token('second'));
    await assert.rejects(new KubeClient(loadKubeConfig()).list({ group: '', version: 'v1', resource: 'configmaps', namespaced: true }, 'default'), (e: any) => e.code === 403 && /system:serviceaccount:default:second/.test(e.message));
    // Discovery is open to any authenticated user.
    assert.equal((await client.request<{ kind?: string }>('GET', '/api')).kind, 'APIVersions');
  } finally {
    process.env = saved;
    await api.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
