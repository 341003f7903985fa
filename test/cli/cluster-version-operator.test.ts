// `bosun cluster-version-operator` as a process: installs the release ClusterVersion/version
// names, serves its metrics, stops on SIGTERM; bad options are refused with a clear error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { startTestApiServer } from '../helpers/apiserver.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

test('bosun cluster-version-operator installs the desired release and serves metrics', async () => {
  const api = await startTestApiServer();
  const store = mkdtempSync(join(tmpdir(), 'bosun-cli-cvo-'));
  const release = buildRelease({ version: '1.0.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const dir = join(release.dir, 'manifests');
  for (const file of readdirSync(dir).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const o = doc.toJS();
      if (o?.kind === 'CustomResourceDefinition') await client.create({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false }, o);
    }
  }
  const cvRef = { group: 'config.openshift.io', version: 'v1', resource: 'clusterversions', namespaced: false };
  // No machine-config operator runs here: its ClusterOperator gate is overridden as unmanaged.
  await client.create(cvRef, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6b1c1b1e-0000-4000-8000-000000000003', overrides: [{ kind: 'ClusterOperator', group: 'config.openshift.io', name: 'machine-config', namespace: '', unmanaged: true }], desiredUpdate: { version: '1.0.0', image: release.pullspec } } });
  const port = await freePort();
  const child = spawn(process.execPath, [bosunBin, 'cluster-version-operator', '--kubeconfig', api.kubeconfigPath, '--release-store', store, '--metrics-listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  try {
    const deadline = Date.now() + 40_000;
    for (;;) {
      const cv = await client.get(cvRef, 'version');
      if (cv.status?.history?.[0]?.state === 'Completed') break;
      if (Date.now() > deadline) assert.fail(`the release was not installed; output:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /^cluster_version\{type="completed",version="1\.0\.0",image="bosun\.local\/release@sha256:[0-9a-f]{64}",from_version=""\} \d+$/m);
    assert.match(metrics, /^cluster_version\{type="cluster",[^}]*\} \d+$/m);
    assert.match(metrics, /^cluster_version_payload\{type="applied",version="1\.0\.0"\} [1-9]\d*$/m);
    assert.match(metrics, /^cluster_version_operator_manifest_apply_duration_seconds_count\{kind="ServiceAccount"\} [1-9]/m);
    assert.match(metrics, /^process_cpu_user_seconds_total /m, 'process metrics are served too');
    assert.equal((await fetch(`http://127.0.0.1:${port}/nope`)).status, 404);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, `exit on SIGTERM; output:\n${output}`);
  } finally {
    child.kill('SIGKILL');
    await api.stop();
    rmSync(store, { recursive: true, force: true });
  }
});

test('bosun cluster-version-operator refuses a bad --metrics-listen', async () => {
  const result = await runBosun(['cluster-version-operator', '--release-store', '/tmp/none', '--metrics-listen', 'nonsense']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /error: --metrics-listen must be HOST:PORT \(for example 127\.0\.0\.1:6443\), got "nonsense"/);
});
