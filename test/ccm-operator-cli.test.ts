// `bosun cluster-cloud-controller-manager-operator` as the payload's Deployment runs it: --help
// says what it reads and deploys; without a release version it is a one-line error; the CCM
// command line it deploys reads the mounted cloud config below the pod's root; the real
// command in a child process, with RELEASE_VERSION, takes its Lease, reports
// ClusterOperator/cloud-controller-manager for a platform without a CCM and stops on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ccmOperands } from '../src/ccm-operator/operator/operands.js';
import { startTestApiServer } from './helpers/apiserver.js';
import { bosunBin, runBosun } from './helpers/cli.js';
import { eventually } from './helpers/eventually.js';

const manifest = (name: string) => fileURLToPath(new URL(`../manifests/${name}`, import.meta.url));

test('bosun cluster-cloud-controller-manager-operator --help says what it reads and deploys', async () => {
  const r = await runBosun(['cluster-cloud-controller-manager-operator', '--help']);
  assert.equal(r.code, 0, r.stderr);
  for (const expected of ['--release-version', '--kubeconfig', '--leader-elect', 'openshift-cloud-controller-manager-operator/cluster-cloud-controller-manager-leader',
    'spec.platformSpec.external.platformName', 'openshift-config-managed/kube-cloud-config', 'spec.cloudConfig', 'cloud-conf', 'PodDisruptionBudget', 'Example']) {
    assert.ok(r.stdout.includes(expected), expected);
  }
});

test('without a release version: a one-line error', async () => {
  const r = await runBosun(['cluster-cloud-controller-manager-operator', '--kubeconfig', '/nonexistent/kubeconfig'], { env: { ...process.env, RELEASE_VERSION: '' } });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /the release version is unknown: pass --release-version or set RELEASE_VERSION/);
});

test("the CCM command the operator writes reads its --cloud-config below the pod's root, as the node agent mounts cloud-conf", async () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-ccm-root-'));
  try {
    mkdirSync(join(root, 'etc/cloud-controller-manager/config'), { recursive: true });
    // Not a cloud config: the error shows which file was read.
    writeFileSync(join(root, 'etc/cloud-controller-manager/config/cloud.conf'), 'this is not a cloud config\n');
    const { command } = ccmOperands({ provider: 'local', name: 'local', image: 'i', cloudConfig: '' }).deployment.spec.template.spec.containers[0];
    const r = await runBosun([...command.slice(1), '--kubeconfig', '/nonexistent/kubeconfig'], { env: { BOSUN_IN_CLUSTER_ROOT: root } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /cloud config line 1: "this is not a cloud config" is neither a \[section\] nor key = value/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the command leads through its Lease, reports the ClusterOperator for a platform without a CCM and stops on SIGTERM', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  for (const crd of ['0000_00_cluster-version-operator_01_clusteroperators.crd.yaml', '0000_10_config-operator_01_infrastructures.crd.yaml', '0000_10_config-operator_01_networks.crd.yaml']) await api.kubectlOk(['apply', '-f', manifest(crd)]);
  await eventually('Infrastructure served', async () => (await api.kubectl(['apply', '-f', '-'], { input: 'apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata:\n  name: cluster\nspec:\n  platformSpec:\n    type: AWS\n' })).code === 0);
  await api.kubectlOk(['create', 'namespace', 'openshift-cloud-controller-manager-operator']);
  await api.kubectlOk(['patch', 'infrastructure', 'cluster', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { platform: 'AWS', platformStatus: { type: 'AWS', aws: { region: 'us-east-1' } } } })]);
  const child = spawn(process.execPath, [bosunBin, 'cluster-cloud-controller-manager-operator', '--kubeconfig', api.kubeconfigPath], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RELEASE_VERSION: '1.2.3' } });
  let stderr = '';
  child.stdout.on('data', (d) => (stderr += d));
  child.stderr.on('data', (d) => (stderr += d));
  try {
    const co = await eventually('ClusterOperator/cloud-controller-manager', async () => {
      const o = (await api.request('GET', '/apis/config.openshift.io/v1/clusteroperators/cloud-controller-manager')).json;
      return o?.status?.versions ? o : undefined;
    }, { timeoutMs: 40_000, detail: () => stderr });
    assert.deepEqual(co.status.versions, [{ name: 'operator', version: '1.2.3' }]);
    const available = co.status.conditions.find((c: { type: string }) => c.type === 'Available');
    assert.equal(available.status, 'True');
    assert.match(available.message, /platform AWS has no cloud controller manager in bosun .*; no cloud controller manager is deployed/);
    assert.ok((await api.kubectlOk(['get', 'lease', 'cluster-cloud-controller-manager-leader', '-n', 'openshift-cloud-controller-manager-operator', '-o', 'jsonpath={.spec.holderIdentity}'])).length > 0);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await api.stop();
  }
});
