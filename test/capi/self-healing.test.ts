// test: shared-addresses (starts a local cloud whose machines run node agents)
// End to end, with every part real: the MCO's worker user data (a bootstrap token, the worker's
// rendered config) in openshift-machine-api/worker-user-data is copied as Cluster API bootstrap
// data; a MachineDeployment's machines boot in the local cloud, their node agents get
// certificates through the machine approver and register, the cloud controller manager gives
// the Nodes their providerIDs, and the Machines go Running. Terminating one worker's instance
// from the cloud: the Node goes silent, the node lifecycle controller marks it Unknown, the CCM
// deletes it (its instance is gone), the MachineHealthCheck marks the Machine, its MachineSet
// replaces it, and a new Node joins Ready — no human action. `kubectl scale machinedeployment`
// adds a Ready node and removes one, drained first. The time from the termination to
// the Ready replacement is printed. The approver runs as it does with Cluster API: a machine
// made in the cloud without a Machine gets no certificate, so no Node.
import { rootCredentialPath } from '../../src/cloud/client.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addCloudControllers } from '../../src/ccm-operator/ccm.js';
import { API_VERSION, INFRA_API_VERSION, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_HEALTH_CHECKS, MACHINE_API_NAMESPACE } from '../../src/capi/api.js';
import { addClusterApiControllers } from '../../src/capi/controllers.js';
import { parseCertificateRequest } from '../../src/apiserver/certificates/request.js';
import { machineApprover } from '../../src/cluster/machine-approver.js';
import { CSRS } from '../../src/cluster/node-agent/resources.js';
import { Manager, type Obj, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { bootstrapUserData, readyCondition, startNodeCluster, type NodeCluster } from '../cluster/node-agent-fixture.js';
import { CLUSTER, NS, installCrds, machineDeployment, machineHealthCheck } from './capi-fixture.js';

let c: NodeCluster;
const managers = new AbortController();
let running: Promise<unknown>[] = [];
let userData: string;

before(async () => {
  c = await startNodeCluster({ nodeGraceMs: 3_000 });
  await installCrds(c.api.kubectlOk);
  await c.api.kubectlOk(['create', 'namespace', NS]);
  await c.api.kubectlOk(['create', 'namespace', MACHINE_API_NAMESPACE]);
  // The machine approver as it runs with Cluster API: a node needs a Machine with its address.
  c.approverStarted = true;
  void machineApprover({ client: c.kube, cloud: c.client, machines: async () => (await c.kube.list(MACHINES)).items ?? [] }).run(c.signal);
  // What the MCO writes: the worker's Ignition under `userData`.
  userData = await bootstrapUserData(c);
  await c.api.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'worker-user-data', namespace: MACHINE_API_NAMESPACE }, data: { userData: Buffer.from(userData).toString('base64') } }));

  const ccm = new Manager({ name: 'cloud-controller-manager', kubeconfig: c.kube.kubeconfig });
  await addCloudControllers(ccm, { cloudProvider: 'local', cloudConfig: `[Global]\nurl = ${c.cloud.url}\n`, cloudCredentialsFile: rootCredentialPath(c.dataDir), controllers: ['cloud-node', 'cloud-node-lifecycle'], periods: { nodeMonitorMs: 500, nodeStatusMs: 1000 } });
  const capi = new Manager({ name: 'cluster-api-controllers', kubeconfig: c.kube.kubeconfig });
  addClusterApiControllers(capi, { cloudUrl: c.cloud.url, cloudCredential: c.cloud.rootCredential, clusterOperator: false });
  running = [ccm.start(managers.signal), capi.start(managers.signal)];

  const apply = (o: Obj) => c.api.kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: { name: CLUSTER, namespace: NS }, spec: { controlPlaneEndpoint: { host: '127.0.0.1', port: c.api.port } } });
  await apply({ apiVersion: API_VERSION, kind: 'Cluster', metadata: { name: CLUSTER, namespace: NS }, spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', name: CLUSTER } } });
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalMachineTemplate', metadata: { name: 'small', namespace: NS }, spec: { template: { spec: { instanceType: 'local.small' } } } });
});

after(async () => {
  managers.abort();
  await Promise.allSettled(running);
  await c?.close();
});

const nodeReady = async (name: string) => readyCondition(await c.kube.read(resources.nodes, name))?.status === 'True';

async function runningWorkers(count: number, timeoutMs: number): Promise<Obj[]> {
  return eventually(`${count} Running workers with Ready nodes`, async () => {
    const ms = ((await c.kube.list(MACHINES, NS, { labelSelector: 'pool=workers' })).items ?? []).filter((m: Obj) => !m.metadata.deletionTimestamp);
    if (ms.length !== count || !ms.every((m: Obj) => m.status?.phase === 'Running' && m.status?.nodeRef)) return undefined;
    for (const m of ms) if (!(await nodeReady(m.status!.nodeRef!.name))) return undefined;
    return ms;
  }, { timeoutMs, intervalMs: 200 });
}

test('workers of a MachineDeployment join as Ready nodes, booted from the MCO\'s user data', async () => {
  await eventually('the bootstrap data copied', async () => (await c.kube.read(resources.secrets, 'worker-user-data', NS))?.data?.value);
  await c.kube.create(MACHINE_DEPLOYMENTS, machineDeployment('workers', 2));
  await c.kube.create(MACHINE_HEALTH_CHECKS, machineHealthCheck('workers', { nodeStartupTimeoutSeconds: 120, unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 5 }, { type: 'Ready', status: 'False', timeoutSeconds: 5 }] }));
  const workers = await runningWorkers(2, 45_000);
  for (const m of workers) {
    const node = await c.kube.get(resources.nodes, m.status.nodeRef.name);
    assert.equal(node.metadata.name, m.metadata.name);
    assert.equal(node.spec!.providerID, m.spec.providerID, 'the CCM set the providerID the Machine carries');
  }
  const listing = await c.api.kubectlOk(['get', 'machines,machinesets,machinedeployments', '-A']);
  for (const m of workers) assert.match(listing, new RegExp(`${NS}\\s+machine.cluster.x-k8s.io/${m.metadata.name}\\s+local\\s+${m.metadata.name}\\s+`));
});

test('terminating a worker\'s instance gets it replaced by a Ready node, with no human action', async () => {
  const before = await runningWorkers(2, 10_000);
  const victim = before[0];
  const instanceId = victim.spec.providerID.replace('local://', '');
  const started = Date.now();
  await c.client.operate('terminate', instanceId);
  const after = await eventually('a replacement Ready', async () => {
    const ms = await runningWorkers(2, 1_000).catch(() => undefined);
    return ms && !ms.some((m) => m.metadata.name === victim.metadata.name) ? ms : undefined;
  }, { timeoutMs: 50_000, intervalMs: 500 });
  const seconds = (Date.now() - started) / 1000;
  const marked = JSON.parse(await c.api.kubectlOk(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${victim.metadata.name},reason=MachineMarkedUnhealthy`, '-o', 'json'])).items;
  assert.equal(marked.length, 1, 'the health check marked the machine');
  const replacement = after.find((m) => m.metadata.name !== before[1].metadata.name)!.metadata.name;
  console.log(`self-healing: instance ${instanceId} terminated → replacement ${replacement} Ready in ${seconds.toFixed(1)} s (${marked[0].message})`);
  assert.equal(await c.kube.read(MACHINES, victim.metadata.name, NS), undefined, 'the dead machine is gone');
  assert.equal(await c.kube.read(resources.nodes, victim.metadata.name), undefined, 'and its node');
});

test('kubectl scale machinedeployment to 3 adds a Ready node; back to 2 removes one, drained first', async () => {
  const two = await runningWorkers(2, 10_000);
  assert.match(await c.api.kubectlOk(['-n', NS, 'scale', 'machinedeployment', 'workers', '--replicas=3']), /scaled/);
  const three = await runningWorkers(3, 30_000);
  const added = three.find((m) => !two.some((t) => t.metadata.name === m.metadata.name))!;
  assert.ok(await nodeReady(added.metadata.name));
  await c.api.kubectlOk(['-n', NS, 'scale', 'machinedeployment', 'workers', '--replicas=2']);
  const left = await runningWorkers(2, 30_000);
  const removed = three.find((m) => !left.some((t) => t.metadata.name === m.metadata.name))!;
  await eventually(`${removed.metadata.name} gone`, async () => !(await c.kube.read(MACHINES, removed.metadata.name, NS)), 30_000);
  assert.equal(await c.kube.read(resources.nodes, removed.metadata.name), undefined);
  const reasons = JSON.parse(await c.api.kubectlOk(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${removed.metadata.name}`, '-o', 'json'])).items.map((e: Obj) => e.reason);
  assert.ok(reasons.includes('SuccessfulDrainNode'), `drained first: ${reasons}`);
});

test('a machine made in the cloud behind Cluster API\'s back gets no node: no Machine, no certificate', async () => {
  const rogue = await c.client.createInstance({ name: 'rogue', type: 'local.small', zone: 'local-c', userData });
  await eventually('rogue booted', async () => (await c.client.getInstance(rogue.id)).machine.phase === 'Up', 20_000);
  const rogueRequests = async () => ((await c.kube.list(CSRS)).items as Obj[]).filter((x) => parseCertificateRequest(Buffer.from(x.spec.request, 'base64').toString('utf8')).commonName === 'system:node:rogue');
  await eventually('the rogue\'s certificate request', async () => (await rogueRequests()).length > 0, 20_000);
  await new Promise((r) => setTimeout(r, 2_000));
  for (const request of await rogueRequests()) assert.deepEqual(request.status?.conditions ?? [], [], 'left pending');
  assert.equal(await c.kube.read(resources.nodes, 'rogue'), undefined, 'no Node registered for a machine no Machine backs');
});
