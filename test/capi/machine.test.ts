// test: shared-addresses (starts a local cloud)
// The Machine controller and the local provider against the embedded API server and a real local
// cloud: a Machine goes Pending → Provisioning → Provisioned → Running as its LocalMachine gets an
// instance (of the template's type, in its failure domain, booted from the bootstrap data) and a
// Node with its providerID appears; deleting it drains the Node (a PodDisruptionBudget holds the
// drain until it allows the eviction), terminates the instance — the finalizer holds the Machine
// until the instance is gone — and deletes the Node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSION, INFRA_API_VERSION, LOCAL_MACHINES, MACHINES } from '../../src/capi/api.js';
import type { MachineRuntime } from '../../src/cloud/machine-runtime.js';
import type * as api from '../../src/api/index.js';
import { type Obj, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { CLUSTER, EMPTY_IGNITION, NS, RELEASE, type CapiCluster, createClusterObjects, machineSpec, runKubelets, startCapiCluster } from './capi-fixture.js';

/** Fault injection: a machine takes this long to shut down, so a termination is seen in progress. */
const SHUTDOWN_MS = 2_000;
const slowShutdown: MachineRuntime = { async onBoot() {}, onShutdown: () => new Promise((r) => setTimeout(r, SHUTDOWN_MS)) };

let c: CapiCluster;
const kubelets = new AbortController();
const held = new Set<string>();
let kubeletLoop: Promise<void>;
before(async () => {
  c = await startCapiCluster({ cloud: { runtime: slowShutdown } });
  await createClusterObjects(c);
  kubeletLoop = runKubelets(c, kubelets.signal, held);
});
after(async () => {
  kubelets.abort();
  await kubeletLoop;
  await c?.close();
});

/** A Machine with its own LocalMachine, as a user (or a MachineSet) creates them. */
async function createMachine(name: string, extra: Partial<api.Machine['spec']> = {}): Promise<void> {
  await c.kube.create(LOCAL_MACHINES, { apiVersion: INFRA_API_VERSION, kind: 'LocalMachine', metadata: { name, namespace: NS }, spec: { instanceType: 'local.small' } });
  await c.kube.create(MACHINES, {
    apiVersion: API_VERSION, kind: 'Machine', metadata: { name, namespace: NS },
    spec: machineSpec({ infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name }, ...extra }),
  });
}

const getMachine = (name: string) => c.kube.read(MACHINES, name, NS);
const condition = (m: Obj | undefined, type: string) => m?.status?.conditions?.find((x: Obj) => x.type === type);

test('a Machine is provisioned through its LocalMachine and joins as its Node', async () => {
  held.add('m1'); // no Node yet: the Machine must stop at Provisioned
  await createMachine('m1', { failureDomain: 'local-c' });
  const provisioned = await eventually('m1 Provisioned', async () => {
    const m = await getMachine('m1');
    return m?.status?.phase === 'Provisioned' ? m : undefined;
  });
  const lm = await c.kube.get(LOCAL_MACHINES, 'm1', NS);
  const [instance] = await c.cloud.client.listInstances({ names: ['m1'] });
  assert.equal(instance.type, 'local.small');
  assert.equal(instance.zone, 'local-c', 'the Machine\'s failure domain is the zone');
  assert.equal(instance.userData, EMPTY_IGNITION, 'the bootstrap data is the user data');
  assert.equal(lm.spec.providerID, `local://${instance.id}`);
  assert.equal(lm.status!.initialization!.provisioned, true);
  assert.ok(lm.metadata.finalizers!.includes('localmachine.infrastructure.cluster.x-k8s.io'));
  assert.deepEqual(lm.metadata.ownerReferences!.map((r: Obj) => [r.kind, r.name, r.controller]), [['Machine', 'm1', true]]);
  assert.equal(provisioned.spec.providerID, `local://${instance.id}`);
  assert.deepEqual(provisioned.status!.addresses![0], { type: 'InternalIP', address: instance.privateIp });
  assert.equal(provisioned.status!.failureDomain, 'local-c');
  assert.ok(provisioned.metadata.finalizers!.includes('machine.cluster.x-k8s.io'));
  assert.equal(provisioned.metadata.labels!['cluster.x-k8s.io/cluster-name'], CLUSTER);
  assert.equal(condition(provisioned, 'NodeHealthy')?.reason, 'NodeDoesNotExist');

  held.delete('m1');
  const running = await eventually('m1 Running', async () => {
    const m = await getMachine('m1');
    return m?.status?.phase === 'Running' && condition(m, 'Ready')?.status === 'True' ? m : undefined;
  });
  assert.deepEqual(running.status!.nodeRef, { name: 'm1' });
  assert.equal(condition(running, 'Available')?.status, 'True');
  const node = await c.kube.get(resources.nodes, 'm1');
  assert.equal(node.metadata.annotations!['cluster.x-k8s.io/machine'], 'm1');
  assert.equal(node.metadata.annotations!['cluster.x-k8s.io/cluster-namespace'], NS);
  const table = await c.kubectlOk(['-n', NS, 'get', 'machine', 'm1', '-o', 'wide']);
  assert.match(table.split('\n')[1], new RegExp(`^m1\\s+local\\s+m1\\s+local://${instance.id}\\s+local-c\\s+True\\s+True\\s+${instance.privateIp.replace(/\./g, '\\.')}\\s+.*Running`));
});

test('a missing bootstrap Secret keeps the Machine Pending, and says so', async () => {
  await createMachine('m2', { bootstrap: { dataSecretName: 'no-such-secret' } });
  const m = await eventually('m2 reports its bootstrap data missing', async () => {
    const x = await getMachine('m2');
    return condition(x, 'BootstrapConfigReady')?.status === 'False' ? x : undefined;
  });
  assert.equal(m.status!.phase, 'Pending');
  assert.match(condition(m, 'BootstrapConfigReady').message, /no-such-secret does not exist/);
  // The LocalMachine's own controller says so on its next sync.
  await eventually('the LocalMachine waits for bootstrap data', async () => condition(await c.kube.get(LOCAL_MACHINES, 'm2', NS), 'Ready')?.reason === 'WaitingForBootstrapData' || undefined);
  assert.deepEqual(await c.cloud.client.listInstances({ names: ['m2'] }), [], 'no instance without bootstrap data');
  await c.kube.delete(MACHINES, 'm2', NS);
  await eventually('m2 gone', async () => !(await getMachine('m2')));
});

test('deleting a Machine: a PDB delays the drain; the finalizer holds the Machine until the instance is gone; then the Node goes', async () => {
  const running = await eventually('m1 Running', async () => {
    const m = await getMachine('m1');
    return m?.status?.phase === 'Running' ? m : undefined;
  });
  const instanceId = running.spec.providerID!.replace('local://', '');
  // A pod on m1's Node, Ready, guarded by a PDB that allows no disruption. No kubelet runs here to
  // finish a graceful deletion: the pod goes at once when evicted (grace period 0).
  await c.kube.create(resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db', namespace: 'default', labels: { app: 'db' } }, spec: { nodeName: 'm1', terminationGracePeriodSeconds: 0, containers: [{ name: 'db', image: 'db' }] } });
  await c.kube.mergePatch(resources.pods, 'db', 'default', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, 'status');
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: 'default' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } } }));
  await eventually('the PDB computed', async () => (await c.kubectlOk(['-n', 'default', 'get', 'pdb', 'db', '-o', 'jsonpath={.status.currentHealthy}'])) === '1');

  await c.kube.delete(MACHINES, 'm1', NS);
  const draining = await eventually('m1 draining, held by the PDB', async () => {
    const m = await getMachine('m1');
    return condition(m, 'Deleting')?.reason === 'DrainingNode' && /disruption budget db/.test(condition(m, 'Deleting').message) ? m : undefined;
  });
  assert.equal(draining.status!.phase, 'Deleting');
  assert.ok(draining.status!.deletion!.nodeDrainStartTime);
  assert.equal((await c.kube.get(resources.nodes, 'm1')).spec!.unschedulable, true, 'cordoned');
  await new Promise((r) => setTimeout(r, 1_500));
  assert.ok(await c.kube.read(resources.pods, 'db', 'default'), 'the pod stays while the budget forbids its eviction');
  assert.equal((await c.cloud.client.getInstance(instanceId)).state, 'running', 'nothing is terminated before the drain');

  // The budget allows it: the drain completes and the instance is terminated — slowly.
  await c.kubectlOk(['-n', 'default', 'delete', 'pdb', 'db']);
  const waiting = await eventually('m1 waiting for its instance to go', async () => {
    const m = await getMachine('m1');
    return condition(m, 'Deleting')?.reason === 'WaitingForInfrastructureDeletion' ? m : undefined;
  });
  assert.equal(await c.kube.read(resources.pods, 'db', 'default'), undefined, 'the pod was evicted');
  assert.ok(waiting.metadata.finalizers!.includes('machine.cluster.x-k8s.io'));
  const instance = await c.cloud.client.getInstance(instanceId);
  assert.notEqual(instance.state, 'terminated', 'the Machine is still there while its instance shuts down');
  await eventually('m1 gone', async () => !(await getMachine('m1')), 20_000);
  assert.equal((await c.cloud.client.getInstance(instanceId)).state, 'terminated', 'gone only once the instance is');
  assert.equal(await c.kube.read(LOCAL_MACHINES, 'm1', NS), undefined);
  assert.equal(await c.kube.read(resources.nodes, 'm1'), undefined, 'the Node was deleted');
});

test('spec.deletion.nodeDrainTimeoutSeconds: a drain a PDB blocks is given up after the timeout, with a Warning', async () => {
  await createMachine('m3', { deletion: { nodeDrainTimeoutSeconds: 2 } });
  await eventually('m3 Running', async () => (await getMachine('m3'))?.status?.phase === 'Running');
  await c.kube.create(resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'cache', namespace: 'default', labels: { app: 'cache' } }, spec: { nodeName: 'm3', containers: [{ name: 'cache', image: 'cache' }] } });
  await c.kube.mergePatch(resources.pods, 'cache', 'default', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, 'status');
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'cache', namespace: 'default' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'cache' } } } }));
  await eventually('the PDB computed', async () => (await c.kubectlOk(['-n', 'default', 'get', 'pdb', 'cache', '-o', 'jsonpath={.status.expectedPods}'])) === '1');
  const started = Date.now();
  await c.kube.delete(MACHINES, 'm3', NS);
  await eventually('m3 gone despite the PDB', async () => !(await getMachine('m3')), 20_000);
  assert.ok(Date.now() - started >= 1_000, 'not before the drain timeout');
  const reasons = JSON.parse(await c.kubectlOk(['-n', NS, 'get', 'events', '--field-selector', 'involvedObject.name=m3', '-o', 'json'])).items.map((e: Obj) => `${e.type} ${e.reason}: ${e.message}`);
  assert.ok(reasons.includes('Warning FailedDrainNode: Node m3 not drained within 2s; going on with the deletion'), reasons.join('\n'));
  await c.kubectlOk(['-n', 'default', 'delete', 'pdb', 'cache']);
});

test('ClusterOperator/cluster-api is Available at the release once the CRDs are served', async () => {
  const co = await eventually('ClusterOperator/cluster-api reported', async () => {
    const x = await c.kube.read(resources.clusterOperators, 'cluster-api');
    return x?.status?.versions ? x : undefined;
  });
  assert.deepEqual(co.status!.versions, [{ name: 'operator', version: RELEASE }]);
  assert.deepEqual(co.status!.conditions!.map((x: Obj) => [x.type, x.status]), [['Available', 'True'], ['Progressing', 'False'], ['Degraded', 'False'], ['Upgradeable', 'True']]);
  assert.ok(co.status!.relatedObjects!.some((r: Obj) => r.resource === 'machines' && r.group === 'cluster.x-k8s.io'));
});
