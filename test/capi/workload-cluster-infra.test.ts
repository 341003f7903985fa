// test: shared-addresses (starts a local cloud; serves on the machines' 127.0.1.N:6443)
// A workload cluster's infrastructure and the Cluster controller's contract with a control-plane
// provider, against the embedded API server, the real local cloud and real TCP:
//   - a LocalCluster with an empty spec gets a cloud load balancer for the control-plane endpoint,
//     port 6443 on its own VIP; its targets follow the control-plane machines (a machine being
//     deleted leaves first, an instance terminated in the cloud is left out), and a connection
//     through it reaches a server on a machine's 6443;
//   - the Cluster copies the endpoint, goes Provisioned, reads the control plane's replica counts
//     and initialization through the contract (a control-plane kind unknown to bosun, as a third
//     provider's would be), probes the workload API through `<cluster>-kubeconfig`, and is
//     Available only when every part is — each False condition saying what it waits on;
//   - deleting the Cluster removes, in Cluster API's order, the Machines, the control plane, the
//     LocalCluster and its load balancer: the cloud keeps nothing of it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { API_VERSION, CLUSTERS, INFRA_API_VERSION, LABEL, LOCAL_CLUSTERS, LOCAL_MACHINES, MACHINES } from '../../src/capi/api.js';
import { loadBalancerName } from '../../src/capi/local/localcluster-controller.js';
import { type Obj, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { runBosun } from '../helpers/cli.js';
import { EMPTY_IGNITION, type CapiCluster, startCapiCluster, TEST_CONTROL_PLANE_CRD, TEST_CONTROL_PLANE_GROUP, testControlPlanes } from './capi-fixture.js';

const NS = 'workload';
const NAME = 'dev';
const CP_GROUP = TEST_CONTROL_PLANE_GROUP;


let c: CapiCluster;
const servers: Server[] = [];
before(async () => {
  c = await startCapiCluster();
  await c.kubectlOk(['create', 'namespace', NS]);
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify(TEST_CONTROL_PLANE_CRD));
  await c.kubectlOk(['wait', '--for=condition=Established', `crd/testcontrolplanes.${CP_GROUP}`, '--timeout=20s']);
});
after(async () => {
  for (const s of servers) s.close();
  await c?.close();
});

const cluster = () => c.kube.read(CLUSTERS, NAME, NS) as Promise<Obj | undefined>;
const condition = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((x: Obj) => x.type === type);
const cpResource = testControlPlanes;

/** A control-plane Machine with its LocalMachine, as a control-plane provider creates them. */
async function controlPlaneMachine(name: string): Promise<void> {
  const labels = { [LABEL.clusterName]: NAME, [LABEL.controlPlane]: '' };
  const cp = (await c.kube.get(cpResource, `${NAME}-cp`, NS)) as Obj;
  const ownerReferences = [{ apiVersion: `${CP_GROUP}/v1beta2`, kind: 'TestControlPlane', name: cp.metadata.name, uid: cp.metadata.uid, controller: true }];
  await c.kube.create(LOCAL_MACHINES, { apiVersion: INFRA_API_VERSION, kind: 'LocalMachine', metadata: { name, namespace: NS, labels }, spec: { instanceType: 'local.small' } });
  await c.kube.create(MACHINES, {
    apiVersion: API_VERSION, kind: 'Machine', metadata: { name, namespace: NS, labels, ownerReferences },
    spec: { clusterName: NAME, bootstrap: { dataSecretName: 'cp-data' }, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name }, version: 'v1.33.0' },
  });
}

/** A TCP server on a machine's address, port 6443, answering its own name (the machine's API server stands in). */
function serveOn(address: string, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createServer((sock) => sock.end(name));
    s.once('error', reject);
    s.listen(6443, address, () => resolve());
    servers.push(s);
  });
}

function readThrough(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    let data = '';
    sock.on('data', (d) => (data += d.toString()));
    sock.on('end', () => resolve(data));
    sock.on('error', reject);
    sock.setTimeout(5_000, () => sock.destroy(new Error('timed out')));
  });
}

test('a LocalCluster without an endpoint gets a load balancer that follows the control-plane machines; the Cluster follows its control plane', { timeout: 120_000 }, async () => {
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cp-data', namespace: NS }, data: { value: Buffer.from(EMPTY_IGNITION).toString('base64') } }));
  // Empty specs, as Cluster API's quick start writes its infrastructure cluster.
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: { name: NAME, namespace: NS }, spec: {} }));
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: `${CP_GROUP}/v1beta2`, kind: 'TestControlPlane', metadata: { name: `${NAME}-cp`, namespace: NS }, spec: { replicas: 3, version: 'v1.33.0' } }));
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: API_VERSION, kind: 'Cluster', metadata: { name: NAME, namespace: NS },
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', name: NAME },
      controlPlaneRef: { apiGroup: CP_GROUP, kind: 'TestControlPlane', name: `${NAME}-cp` },
    },
  }));

  // The balancer, its endpoint on the LocalCluster and then on the Cluster.
  const lbName = loadBalancerName({ metadata: { name: NAME, namespace: NS } });
  const lb = await eventually('the control-plane load balancer', async () => (await c.cloud.client.listLoadBalancers()).find((b) => b.name === lbName));
  assert.deepEqual(lb.ports.map((p) => [p.port, p.targetPort]), [[6443, 6443]]);
  assert.deepEqual(lb.healthCheck, { port: 6443, path: '/readyz', protocol: 'HTTPS' });
  assert.match(lb.address, /^127\.0\.200\.\d+$/);
  const provisioned = await eventually('Cluster Provisioned', async () => {
    const cl = await cluster();
    return cl?.status?.phase === 'Provisioned' ? cl : undefined;
  });
  assert.deepEqual(provisioned.spec.controlPlaneEndpoint, { host: lb.address, port: 6443 });
  assert.equal(provisioned.status.initialization.infrastructureProvisioned, true);
  assert.deepEqual(provisioned.status.failureDomains.map((f: Obj) => f.name), ['local-a', 'local-b', 'local-c']);
  // Adopted: the control plane is the Cluster's.
  const cp = (await c.kube.get(cpResource, `${NAME}-cp`, NS)) as Obj;
  assert.equal(cp.metadata.ownerReferences[0].kind, 'Cluster');
  assert.equal(cp.metadata.labels[LABEL.clusterName], NAME);
  // Not initialized: Available is False and says what each part waits on.
  const waiting = condition(provisioned, 'Available');
  assert.equal(waiting.status, 'False');
  assert.match(waiting.message, /ControlPlaneInitialized: waiting for TestControlPlane dev-cp to initialize the control plane/);
  assert.match(waiting.message, /RemoteConnectionProbe: the control plane is not initialized yet/);

  // Control-plane machines come: the balancer's targets follow them, and TCP flows to them.
  await controlPlaneMachine(`${NAME}-cp-a`);
  await controlPlaneMachine(`${NAME}-cp-b`);
  const instances = await eventually('two control-plane instances behind the balancer', async () => {
    const lms = await Promise.all([`${NAME}-cp-a`, `${NAME}-cp-b`].map((n) => c.kube.read(LOCAL_MACHINES, n, NS) as Promise<Obj | undefined>));
    const ids = lms.map((lm) => lm?.status?.instanceID).filter(Boolean);
    const b = (await c.cloud.client.listLoadBalancers()).find((x) => x.name === lbName);
    return ids.length === 2 && JSON.stringify(b?.targets) === JSON.stringify([...ids].sort()) ? ids : undefined;
  }, 40_000);
  // In machine order: a is dev-cp-a's instance, b dev-cp-b's (the balancer lists them sorted by ID).
  const all = await c.cloud.client.listInstances();
  const [a, b] = instances.map((id: string) => all.find((i) => i.id === id)!);
  await serveOn(a.privateIp, 'a');
  const reached = await readThrough(lb.address, 6443);
  assert.equal(reached, 'a', 'the balancer reaches the machine that serves (the other refuses)');
  await serveOn(b.privateIp, 'b');
  const both = new Set(await Promise.all(Array.from({ length: 6 }, () => readThrough(lb.address, 6443))));
  assert.deepEqual([...both].sort(), ['a', 'b']);

  // `bosun cluster describe`: the tree, each part's state, and what the cluster waits on.
  const kubeconfigFlag = `--kubeconfig=${c.api.server.kubeconfigPath}`;
  const described = await runBosun(['cluster', 'describe', NAME, '-n', NS, kubeconfigFlag]);
  assert.equal(described.code, 0, described.stderr);
  const lines = described.stdout.split('\n');
  assert.match(lines[0], /^NAME +REPLICAS +AVAILABLE +READY +UP TO DATE +STATUS +REASON +SINCE +MESSAGE$/);
  assert.match(lines[1], /^Cluster\/dev +\S+ +0 +0 +\d+ +Available: False +NotAvailable +\S+ +ControlPlaneInitialized: waiting for TestControlPlane dev-cp to initialize the control plane/);
  assert.match(described.stdout, /├─ClusterInfrastructure - LocalCluster\/dev +True +LoadBalancerReady/);
  assert.match(described.stdout, /└─ControlPlane - TestControlPlane\/dev-cp/);
  assert.match(described.stdout, / {2}└─2 Machines\.\.\. +2 +0 +0 +2 +Ready: False +\S+ +\S+ +See dev-cp-a, dev-cp-b/);
  const ungrouped = await runBosun(['cluster', 'describe', NAME, '-n', NS, '--grouping=false', kubeconfigFlag]);
  assert.match(ungrouped.stdout, / {2}├─Machine\/dev-cp-a +1 +0 +0 +1 +Ready: False/);
  assert.match(ungrouped.stdout, / {2}└─Machine\/dev-cp-b +1 +0 +0 +1 +Ready: False/);
  const missing = await runBosun(['cluster', 'describe', 'nope', '-n', NS, kubeconfigFlag]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cluster workload\/nope not found \(clusters: workload\/dev; pick a namespace with -n\)/);
  const noKubeconfig = await runBosun(['cluster', 'get', 'kubeconfig', NAME, '-n', NS, kubeconfigFlag]);
  assert.equal(noKubeconfig.code, 1);
  assert.match(noKubeconfig.stderr, /Secret workload\/dev-kubeconfig does not exist/);

  // A machine being deleted leaves the balancer before it goes.
  await c.kube.delete(MACHINES, `${NAME}-cp-b`, NS);
  await eventually('the deleted machine out of the balancer', async () => {
    const x = (await c.cloud.client.listLoadBalancers()).find((y) => y.name === lbName);
    return JSON.stringify(x?.targets) === JSON.stringify([a.id]) ? true : undefined;
  }, 40_000);
  // A machine whose instance is terminated in the cloud, its Machine not yet replaced, leaves the
  // balancer too (the cloud refuses a terminated target), and the targets still follow new machines.
  await c.cloud.client.operate('terminate', a.id);
  await controlPlaneMachine(`${NAME}-cp-c`);
  await eventually('the terminated instance out of the balancer, the new machine\'s in', async () => {
    const lm = (await c.kube.read(LOCAL_MACHINES, `${NAME}-cp-c`, NS)) as Obj | undefined;
    const x = (await c.cloud.client.listLoadBalancers()).find((y) => y.name === lbName);
    return lm?.status?.instanceID && JSON.stringify(x?.targets) === JSON.stringify([lm.status.instanceID]) ? true : undefined;
  }, 40_000);

  // The control plane initializes and reports its counts; the workload API answers through the kubeconfig Secret.
  await c.kube.request('PUT', `/apis/${CP_GROUP}/v1beta2/namespaces/${NS}/testcontrolplanes/${NAME}-cp/status`, {
    body: {
      ...cp,
      status: {
        initialization: { controlPlaneInitialized: true }, replicas: 3, readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 3,
        conditions: [{ type: 'Available', status: 'True', reason: 'Available', message: '', lastTransitionTime: new Date().toISOString() }],
      },
    },
  });
  const probing = await eventually('RemoteConnectionProbe waits for the kubeconfig Secret', async () => {
    const cl = await cluster();
    return condition(cl, 'ControlPlaneInitialized')?.status === 'True' ? cl : undefined;
  }, 40_000);
  assert.deepEqual(probing.status.controlPlane, { desiredReplicas: 3, replicas: 3, readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 3 });
  assert.equal(probing.status.initialization.controlPlaneInitialized, true);
  assert.match(condition(probing, 'RemoteConnectionProbe').message, /Secret workload\/dev-kubeconfig with the workload cluster's kubeconfig does not exist yet/);
  // The management API stands in for the workload API here: what is probed is the Secret's kubeconfig.
  const kubeconfig = readFileSync(c.api.server.kubeconfigPath);
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', type: 'cluster.x-k8s.io/secret', metadata: { name: `${NAME}-kubeconfig`, namespace: NS, labels: { [LABEL.clusterName]: NAME } }, data: { value: kubeconfig.toString('base64') } }));
  const available = await eventually('Cluster Available', async () => {
    const cl = await cluster();
    return condition(cl, 'Available')?.status === 'True' ? cl : undefined;
  }, 30_000);
  for (const type of ['InfrastructureReady', 'ControlPlaneInitialized', 'ControlPlaneAvailable', 'WorkersAvailable', 'RemoteConnectionProbe']) {
    assert.equal(condition(available, type)?.status, 'True', type);
  }
  const got = await runBosun(['cluster', 'get', 'kubeconfig', NAME, '-n', NS, kubeconfigFlag]);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stdout, kubeconfig.toString());
  // kubectl's printer columns read the same status.
  const row = await c.kubectlOk(['get', 'cluster', NAME, '-n', NS, '--no-headers']);
  assert.match(row, /Provisioned/);
});

test('deleting the Cluster removes its machines, control plane, LocalCluster and load balancer: the cloud keeps nothing of it', { timeout: 120_000 }, async () => {
  const lbName = loadBalancerName({ metadata: { name: NAME, namespace: NS } });
  const r = await c.kubectl(['delete', 'cluster', NAME, '-n', NS, '--wait=true', '--timeout=90s']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await cluster(), undefined);
  assert.equal(await c.kube.read(cpResource, `${NAME}-cp`, NS), undefined);
  assert.equal(await c.kube.read(LOCAL_CLUSTERS, NAME, NS), undefined);
  assert.deepEqual(((await c.kube.list(MACHINES, NS)).items ?? []).map((m) => m.metadata.name), []);
  assert.equal((await c.cloud.client.listLoadBalancers()).find((b) => b.name === lbName), undefined);
  const left = (await c.cloud.client.listInstances()).filter((i) => i.name.startsWith(`${NAME}-cp`) && i.state !== 'terminated');
  assert.deepEqual(left.map((i) => i.name), []);
  // Its Secrets go with it when owned by it; the test's were not, so they stay for the user.
  assert.ok(await c.kube.read(resources.secrets, 'cp-data', NS));
});
