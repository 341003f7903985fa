// test: shared-addresses (starts a local cloud)
// `bosun cluster-api-controllers` as a process: its help, a clear error without a cloud, and the
// real command against the embedded API server and a local cloud — a Cluster becomes
// Provisioned, a MachineDeployment's machine gets its instance — until SIGTERM stops it cleanly.
import { rootCredentialPath } from '../../src/cloud/client.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CLUSTERS, MACHINE_DEPLOYMENTS } from '../../src/capi/api.js';
import type { Obj } from '../../src/kube/index.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { CLUSTER, NS, type CapiCluster, createClusterObjects, machineDeployment, machinesOf, startCapiCluster } from './capi-fixture.js';

let c: CapiCluster;
before(async () => {
  c = await startCapiCluster({ controllers: false });
  await createClusterObjects(c);
});
after(() => c?.close());

test('--help names the controllers and the Lease', async () => {
  const r = await runBosun(['cluster-api-controllers', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /Leader election: the Lease openshift-cluster-api\/cluster-api-controllers/);
  for (const name of ['machinehealthcheck', 'machinedeployment', 'machineset', 'localmachine', 'bootstrap-data']) assert.match(r.stdout, new RegExp(`\\b${name}\\b`));
});

test('without a cloud, or with a cloud config that is not there, it says what is wrong and exits non-zero', async () => {
  const missing = await runBosun(['cluster-api-controllers', '--kubeconfig', c.api.server.kubeconfigPath, '--cloud-config-map', 'openshift-config/nope']);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr.trim(), 'error: ConfigMap openshift-config/nope does not exist');
  const r = await runBosun(['cluster-api-controllers', '--kubeconfig', c.api.server.kubeconfigPath]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr.trim(), 'error: give the local cloud with one of --cloud-url, --cloud-data-dir, --cloud-config or --cloud-config-map');
});

test('the command, finding the cloud through the install\'s cloud config ConfigMap, runs the controllers until SIGTERM', async () => {
  await c.kubectlOk(['create', 'namespace', 'openshift-config']);
  await c.kubectlOk(['-n', 'openshift-config', 'create', 'configmap', 'cloud-provider-config', `--from-literal=config=${JSON.stringify({ url: c.cloud.service.url }, null, 2)}`]);
  const child = spawn(process.execPath, [bosunBin, 'cluster-api-controllers', '--kubeconfig', c.api.server.kubeconfigPath, '--cloud-config-map', 'openshift-config/cloud-provider-config', '--cloud-credentials-file', rootCredentialPath(c.cloud.dataDir), '--no-leader-elect', '--log-level', 'warn', '--release-version', '1.0.0']);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await c.kube.create(MACHINE_DEPLOYMENTS, machineDeployment('cli', 1));
    await eventually('the Cluster Provisioned', async () => (await c.kube.get(CLUSTERS, CLUSTER, NS)).status?.phase === 'Provisioned', { timeoutMs: 30_000, detail: () => output });
    const [machine] = await eventually('a machine with its instance', async () => {
      const ms = await machinesOf(c, 'pool=cli');
      return ms.length === 1 && ms[0].spec.providerID ? ms : undefined;
    }, { timeoutMs: 30_000, detail: () => output });
    const [instance] = await c.cloud.client.listInstances({ names: [machine.metadata.name] });
    assert.equal(machine.spec.providerID, `local://${instance.id}`);
    assert.deepEqual((machine.status?.conditions ?? []).find((x: Obj) => x.type === 'BootstrapConfigReady')?.status, 'True');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output);
});
