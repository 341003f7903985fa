// test: shared-addresses (starts a local cloud)
// The objects the install applies (src/capi/local-cluster.ts), against the embedded API server and
// a local cloud: the MCO's user data Secrets are copied as bootstrap data, a running master
// instance is adopted as a control plane Machine without a second instance being made, the
// workers come from the MachineDeployment, and the Cluster reports them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTERS, MACHINE_API_NAMESPACE, MACHINES } from '../../src/capi/api.js';
import { localClusterObjects } from '../../src/capi/local-cluster.js';
import { type Obj, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { EMPTY_IGNITION, NS, type CapiCluster, runKubelets, startCapiCluster, waitForRunning } from './capi-fixture.js';

let c: CapiCluster;
const kubelets = new AbortController();
let kubeletLoop: Promise<void>;
before(async () => {
  c = await startCapiCluster();
  kubeletLoop = runKubelets(c, kubelets.signal);
});
after(async () => {
  kubelets.abort();
  await kubeletLoop;
  await c?.close();
});

test('masters adopted, workers from the MachineDeployment, booted from the MCO\'s user data', async () => {
  const master = await c.cloud.client.createInstance({ name: 'master-0', type: 'local.medium', zone: 'local-a', userData: EMPTY_IGNITION });
  await c.kubectlOk(['create', 'namespace', MACHINE_API_NAMESPACE]);
  for (const role of ['worker', 'master']) {
    await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${role}-user-data`, namespace: MACHINE_API_NAMESPACE }, data: { userData: Buffer.from(EMPTY_IGNITION).toString('base64'), disableTemplating: Buffer.from('true').toString('base64') } }));
  }
  const copied = await eventually('the bootstrap data copied', async () => c.kube.read(resources.secrets, 'master-user-data', NS));
  assert.deepEqual(copied.data, { value: Buffer.from(EMPTY_IGNITION).toString('base64'), format: Buffer.from('ignition').toString('base64') });

  const objects = localClusterObjects({ name: 'local', apiServer: { host: '127.0.0.1', port: 6443 }, version: 'v1.33.0', masters: [{ name: 'master-0', instanceType: 'local.medium', zone: 'local-a' }], workers: { replicas: 2, instanceType: 'local.small' } });
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));

  const [adopted] = await waitForRunning(c, 'cluster.x-k8s.io/control-plane', 1);
  assert.equal(adopted.metadata.name, 'master-0');
  assert.equal(adopted.spec.providerID, `local://${master.id}`, 'the running instance, adopted');
  assert.equal((await c.cloud.client.listInstances({ names: ['master-0'] })).length, 1, 'no second master-0 was made');
  const workers = await waitForRunning(c, 'cluster.x-k8s.io/deployment-name=worker', 2);
  for (const w of workers) assert.match(w.metadata.name, /^worker-[a-z0-9]+-[a-z0-9]{5}$/);

  const cluster = await eventually('the Cluster counts its machines', async () => {
    const x = await c.kube.get(CLUSTERS, 'local', NS);
    return x.status?.workers?.readyReplicas === 2 && x.status?.controlPlane?.readyReplicas === 1 ? x : undefined;
  });
  assert.equal(cluster.status!.phase, 'Provisioned');
  assert.deepEqual(cluster.status!.failureDomains!.map((f: Obj) => f.name), ['local-a', 'local-b', 'local-c']);
  assert.deepEqual(cluster.status!.workers!.desiredReplicas, 2);
  const listing = await c.kubectlOk(['-n', NS, 'get', 'machines', '-o', 'name']);
  assert.equal(listing.trim().split('\n').length, 3);
  assert.equal((await c.kube.list(MACHINES, NS)).items.length, 3);

  // bosun's own Cluster has no control-plane provider and no kubeconfig Secret: its workload API is
  // the management API itself, which the probe reaches, so the Cluster is Available.
  const available = await eventually('the Cluster Available', async () => {
    const x = await c.kube.get(CLUSTERS, 'local', NS);
    return x.status?.conditions?.find((k) => k.type === 'Available')?.status === 'True' ? x : undefined;
  }, 60_000);
  const probe = available.status!.conditions!.find((k) => k.type === 'RemoteConnectionProbe')!;
  assert.equal(probe.status, 'True');
  assert.equal(probe.reason, 'ProbeSucceeded');
  assert.equal(await c.kube.read(resources.secrets, 'local-kubeconfig', NS), undefined);
});
