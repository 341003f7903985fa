// test: shared-addresses (starts a local cloud)
// A workload cluster's workers against two embedded API servers — the management cluster, running
// Cluster API's controllers and the local cloud, and the workload cluster, reached only through
// `<cluster>-kubeconfig` — with a control plane that a third-party provider stands in for:
//   - a MachineDeployment whose template names a KubeadmConfigTemplate that does not exist creates
//     nothing and says which template it waits on; once the template (with no spec, as Cluster
//     API allows) exists, each Machine gets a KubeadmConfig cloned from it, named as the Machine,
//     annotated with where it came from, owned by the Machine, and join-worker Ignition from the
//     kubeadm bootstrap provider, with a bootstrap token created in the workload cluster;
//   - the Machines' nodeRef, nodeInfo and node conditions come from the workload cluster's Nodes
//     (by providerID), not from a management-cluster Node with the same providerID;
//   - a MachineHealthCheck judges the workload cluster's Nodes; the Machine it marks is replaced,
//     and its Node (drained there), KubeadmConfig, data Secret and LocalMachine go with it;
//   - a workload API that stops answering leaves nodeRef and phase as they were, with the node
//     conditions Unknown (ConnectionDown), and remediates nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { API_VERSION, CLUSTERS, INFRA_API_VERSION, LABEL, LOCAL_MACHINES, MACHINES, MACHINE_SETS } from '../../src/capi/api.js';
import { BOOTSTRAP_API_VERSION } from '../../src/capi/kubeadm/api.js';
import { BOOTSTRAP_KUBELET_KUBECONFIG_PATH } from '../../src/capi/kubeadm/bootstrap-ignition.js';
import { lookupOrGenerateCertificates } from '../../src/capi/kubeadm/certificates.js';
import { parseConfig } from '../../src/ignition/parse.js';
import { type Obj, resources, rfc3339 } from '../../src/kube/index.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { type CapiCluster, startCapiCluster, TEST_CONTROL_PLANE_CRD, TEST_CONTROL_PLANE_GROUP, testControlPlanes } from './capi-fixture.js';

const NS = 'workload';
const NAME = 'dev';
const CP_GROUP = TEST_CONTROL_PLANE_GROUP;
const VERSION = 'v1.33.1';
const POOL = 'cluster.x-k8s.io/deployment-name=md-0';

const cpResource = testControlPlanes;

let c: CapiCluster;
let wl: TestApiServer;
let wlStopped = false;

const apply = (o: Obj) => c.kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
const condition = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((x: Obj) => x.type === type);
const machines = async () => ((await c.kube.list(MACHINES, NS, { labelSelector: POOL })).items ?? []).filter((m) => !m.metadata.deletionTimestamp) as Obj[];
const wlNodes = async () => (JSON.parse(await wl.kubectlOk(['get', 'nodes', '-o', 'json'])).items ?? []) as Obj[];

function readyCondition(status: 'True' | 'False') {
  return { type: 'Ready', status, reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady', message: `kubelet says ${status}`, lastHeartbeatTime: rfc3339(), lastTransitionTime: rfc3339() };
}

/** What the workload cluster's kubelet and cloud controller manager would make of an instance: a Node with its providerID. */
async function registerWorkloadNode(name: string, providerID: string): Promise<void> {
  await wl.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID } } });
  const status = { conditions: [readyCondition('True')], nodeInfo: { kubeletVersion: VERSION, machineID: name, systemUUID: name, bootID: name, kernelVersion: 'bosun', osImage: 'bosun', containerRuntimeVersion: 'bosun://1', kubeProxyVersion: VERSION, operatingSystem: 'linux', architecture: 'amd64' } };
  const r = await wl.request('PATCH', `/api/v1/nodes/${name}/status`, { body: { status }, contentType: 'application/merge-patch+json' });
  assert.equal(r.status, 200, r.text);
}

before(async () => {
  c = await startCapiCluster();
  wl = await startTestApiServer();
  await c.kubectlOk(['create', 'namespace', NS]);
  await apply(TEST_CONTROL_PLANE_CRD);
  await c.kubectlOk(['wait', '--for=condition=Established', `crd/testcontrolplanes.${CP_GROUP}`, '--timeout=20s']);
  // The control plane, initialized and Available, as its provider would report it; the workload
  // API's endpoint and kubeconfig, and the cluster's certificates, as that provider writes them.
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: { name: NAME, namespace: NS }, spec: { controlPlaneEndpoint: { host: '127.0.0.1', port: wl.port } } });
  await apply({ apiVersion: `${CP_GROUP}/v1beta2`, kind: 'TestControlPlane', metadata: { name: `${NAME}-cp`, namespace: NS }, spec: { replicas: 1, version: VERSION } });
  const cp = (await c.kube.get(cpResource, `${NAME}-cp`, NS)) as Obj;
  await c.kube.request('PUT', `/apis/${CP_GROUP}/v1beta2/namespaces/${NS}/testcontrolplanes/${NAME}-cp/status`, {
    body: { ...cp, status: { initialization: { controlPlaneInitialized: true }, replicas: 1, readyReplicas: 1, availableReplicas: 1, upToDateReplicas: 1, conditions: [{ type: 'Available', status: 'True', reason: 'Available', message: '', lastTransitionTime: rfc3339() }] } },
  });
  await apply({
    apiVersion: API_VERSION, kind: 'Cluster', metadata: { name: NAME, namespace: NS },
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', name: NAME },
      controlPlaneRef: { apiGroup: CP_GROUP, kind: 'TestControlPlane', name: `${NAME}-cp` },
    },
  });
  await apply({ apiVersion: 'v1', kind: 'Secret', type: 'cluster.x-k8s.io/secret', metadata: { name: `${NAME}-kubeconfig`, namespace: NS, labels: { [LABEL.clusterName]: NAME } }, data: { value: readFileSync(wl.kubeconfigPath).toString('base64') } });
  await lookupOrGenerateCertificates(c.kube, { name: NAME, namespace: NS });
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalMachineTemplate', metadata: { name: 'small', namespace: NS }, spec: { template: { spec: { instanceType: 'local.small' } } } });
});

after(async () => {
  if (!wlStopped) await wl?.stop();
  await c?.close();
});

test('a missing KubeadmConfigTemplate blocks the MachineDeployment, naming it; once it exists, each Machine gets a clone and join-worker data', { timeout: 180_000 }, async () => {
  await apply({
    apiVersion: API_VERSION, kind: 'MachineDeployment', metadata: { name: 'md-0', namespace: NS },
    spec: {
      clusterName: NAME, replicas: 2,
      selector: { matchLabels: { [LABEL.deploymentName]: 'md-0' } },
      template: {
        metadata: { labels: { [LABEL.deploymentName]: 'md-0' } },
        spec: {
          clusterName: NAME, version: VERSION,
          bootstrap: { configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfigTemplate', name: 'md-0' } },
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 'small' },
        },
      },
    },
  });
  const blocked = await eventually('the MachineSet says which template it waits on', async () => {
    const sets = (await c.kube.list(MACHINE_SETS, NS)).items ?? [];
    const scaling = condition(sets[0] as Obj | undefined, 'ScalingUp');
    return scaling?.message?.includes('does not exist') ? scaling : undefined;
  }, 30_000);
  assert.equal(blocked.status, 'True');
  assert.match(blocked.message, /^Scaling up from 0 to 2 replicas is blocked: KubeadmConfigTemplate workload\/md-0 \(spec\.template\.spec\.bootstrap\.configRef\) does not exist$/);
  // Nothing was touched: no Machine, no clone of either template.
  assert.deepEqual(await machines(), []);
  assert.deepEqual(((await c.kube.list(LOCAL_MACHINES, NS)).items ?? []).map((m) => m.metadata.name), []);
  assert.deepEqual(((await c.kube.list(resources.kubeadmConfigs, NS)).items ?? []).map((m) => m.metadata.name), []);
  const events = JSON.parse(await c.kubectlOk(['get', 'events', '-n', NS, '-o', 'json'])).items as Obj[];
  assert.ok(events.some((e) => e.reason === 'TemplateNotFound' && e.involvedObject.kind === 'MachineSet' && /KubeadmConfigTemplate workload\/md-0/.test(e.message)));

  // The template, with no spec at all (Cluster API's webhook accepts it).
  await apply({ apiVersion: BOOTSTRAP_API_VERSION, kind: 'KubeadmConfigTemplate', metadata: { name: 'md-0', namespace: NS } });
  // (The MachineSet creates both clones owned by itself; the Machine controller then adopts each.)
  const ms = await eventually('two Machines, each with its KubeadmConfig and LocalMachine adopted', async () => {
    const list = await machines();
    if (list.length !== 2) return undefined;
    const configs = await Promise.all(list.map((m) => c.kube.read(resources.kubeadmConfigs, m.metadata.name, NS)));
    const infras = await Promise.all(list.map((m) => c.kube.read(LOCAL_MACHINES, m.metadata.name, NS)));
    return [...configs, ...infras].every((k) => k?.metadata.ownerReferences?.some((o) => o.kind === 'Machine' && o.controller)) ? list : undefined;
  }, 40_000);
  for (const m of ms) {
    const name = m.metadata.name;
    assert.deepEqual(m.spec.bootstrap.configRef, { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name });
    assert.deepEqual(m.spec.infrastructureRef, { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name });
    const config = (await c.kube.get(resources.kubeadmConfigs, name, NS)) as Obj;
    assert.equal(config.metadata.annotations['cluster.x-k8s.io/cloned-from-name'], 'md-0');
    assert.equal(config.metadata.annotations['cluster.x-k8s.io/cloned-from-groupkind'], 'KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io');
    assert.equal(config.metadata.labels[LABEL.clusterName], NAME);
    assert.deepEqual(config.metadata.ownerReferences.map((o: Obj) => [o.kind, o.name, o.controller]), [['Machine', name, true]]);
    const infra = (await c.kube.get(LOCAL_MACHINES, name, NS)) as Obj;
    assert.equal(infra.metadata.annotations['cluster.x-k8s.io/cloned-from-name'], 'small');
    assert.deepEqual(infra.metadata.ownerReferences.map((o: Obj) => [o.kind, o.name, o.controller]), [['Machine', name, true]]);
  }

  // The bootstrap provider gives each clone join-worker data, with a token made in the workload cluster.
  const done = await eventually('both Machines with bootstrap data', async () => {
    const list = await machines();
    return list.length === 2 && list.every((m) => m.spec.bootstrap.dataSecretName === m.metadata.name) ? list : undefined;
  }, 60_000);
  for (const m of done) {
    const config = (await c.kube.get(resources.kubeadmConfigs, m.metadata.name, NS)) as Obj;
    assert.equal(condition(config, 'DataSecretAvailable')?.status, 'True');
    const token: string = config.spec.joinConfiguration.discovery.bootstrapToken.token;
    assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    const found = await wl.request('GET', `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${token.split('.')[0]}`);
    assert.equal(found.status, 200, 'the token Secret is in the workload cluster');
    const secret = await c.kube.get(resources.secrets, m.metadata.name, NS);
    const ignition = parseConfig(Buffer.from(secret.data!.value, 'base64').toString('utf8')).config;
    const paths = (ignition.storage?.files ?? []).map((f) => f.path);
    assert.ok(paths.includes(BOOTSTRAP_KUBELET_KUBECONFIG_PATH), 'a worker joins with the bootstrap kubeconfig');
    assert.ok(!paths.some((p) => p.includes('manifests/etcd')), 'no control-plane static pods on a worker');
  }
});

test('the Machines get their nodeRef from the workload cluster, not from the management cluster', { timeout: 120_000 }, async () => {
  const provisioned = await eventually('both Machines Provisioned with a providerID', async () => {
    const list = await machines();
    return list.length === 2 && list.every((m) => m.status?.phase === 'Provisioned' && m.spec.providerID) ? list : undefined;
  }, 60_000);
  // A management-cluster Node with the first Machine's providerID: it must not be taken.
  const [first, second] = provisioned;
  await c.kube.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'decoy' }, spec: { providerID: first.spec.providerID } });
  await c.kube.mergePatch(resources.nodes, 'decoy', undefined, { status: { conditions: [readyCondition('True')] } }, 'status');
  // Not in the workload cluster yet: waiting, in the workload cluster's words.
  const waiting = await eventually('the first Machine waits for its Node', async () => {
    const m = (await c.kube.get(MACHINES, first.metadata.name, NS)) as Obj;
    return condition(m, 'NodeReady')?.reason === 'NodeDoesNotExist' ? m : undefined;
  });
  assert.equal(waiting.status.nodeRef, undefined);
  assert.equal(waiting.status.phase, 'Provisioned');

  await registerWorkloadNode('wl-worker-a', first.spec.providerID);
  await registerWorkloadNode('wl-worker-b', second.spec.providerID);
  const running = await eventually('both Machines Running on the workload cluster\'s Nodes', async () => {
    const list = await machines();
    return list.length === 2 && list.every((m) => m.status?.phase === 'Running' && condition(m, 'NodeHealthy')?.status === 'True') ? list : undefined;
  }, 30_000);
  const byName = new Map(running.map((m) => [m.metadata.name, m]));
  const a = byName.get(first.metadata.name)!;
  assert.deepEqual(a.status.nodeRef, { name: 'wl-worker-a' });
  assert.equal(a.status.nodeInfo.kubeletVersion, VERSION);
  assert.equal(condition(a, 'NodeReady')?.status, 'True');
  assert.deepEqual(byName.get(second.metadata.name)!.status.nodeRef, { name: 'wl-worker-b' });
  // The workload Nodes lead back to their Machines; the management cluster's decoy is left alone.
  const nodeA = (await wlNodes()).find((n) => n.metadata.name === 'wl-worker-a')!;
  assert.equal(nodeA.metadata.annotations['cluster.x-k8s.io/machine'], first.metadata.name);
  assert.equal(nodeA.metadata.annotations['cluster.x-k8s.io/cluster-namespace'], NS);
  const decoy = await c.kube.get(resources.nodes, 'decoy');
  assert.equal(decoy.metadata.annotations?.['cluster.x-k8s.io/machine'], undefined);

  const cluster = await eventually('the Cluster counts its workers', async () => {
    const x = (await c.kube.get(CLUSTERS, NAME, NS)) as Obj;
    return x.status?.workers?.readyReplicas === 2 ? x : undefined;
  }, 30_000);
  assert.equal(condition(cluster, 'RemoteConnectionProbe')?.status, 'True');
});

test('a MachineHealthCheck judges the workload cluster\'s Nodes; the replaced Machine takes its Node, KubeadmConfig, data Secret and LocalMachine with it', { timeout: 180_000 }, async () => {
  await apply({
    apiVersion: API_VERSION, kind: 'MachineHealthCheck', metadata: { name: 'md-0', namespace: NS },
    spec: { clusterName: NAME, selector: { matchLabels: { [LABEL.deploymentName]: 'md-0' } }, checks: { unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: 1 }] } },
  });
  const victim = (await machines()).find((m) => m.status?.nodeRef?.name === 'wl-worker-a')!;
  const r = await wl.request('PATCH', '/api/v1/nodes/wl-worker-a/status', { body: { status: { conditions: [readyCondition('False')] } }, contentType: 'application/merge-patch+json' });
  assert.equal(r.status, 200, r.text);
  // The decoy in the management cluster stays Ready: only the workload Node can have made it unhealthy.
  await eventually('the Machine gone with its Node, KubeadmConfig, data Secret and LocalMachine', async () => {
    const gone = await Promise.all([
      c.kube.read(MACHINES, victim.metadata.name, NS), c.kube.read(resources.kubeadmConfigs, victim.metadata.name, NS),
      c.kube.read(resources.secrets, victim.metadata.name, NS), c.kube.read(LOCAL_MACHINES, victim.metadata.name, NS),
    ]);
    const nodes = (await wlNodes()).map((n) => n.metadata.name);
    return gone.every((x) => x === undefined) && !nodes.includes('wl-worker-a') ? true : undefined;
  }, 120_000);
  const events = JSON.parse(await c.kubectlOk(['get', 'events', '-n', NS, '-o', 'json'])).items as Obj[];
  const about = events.filter((e) => e.involvedObject.name === victim.metadata.name).map((e) => e.reason);
  for (const reason of ['MachineMarkedUnhealthy', 'SuccessfulDrainNode', 'MachineNodeDeleted']) assert.ok(about.includes(reason), `${reason} in ${about.join(', ')}`);
  assert.ok(await c.kube.read(resources.nodes, 'decoy'), 'the management cluster\'s Node is not the Machine\'s to delete');
  assert.ok((await wlNodes()).some((n) => n.metadata.name === 'wl-worker-b'));
  // Its replacement comes, with a clone of its own.
  await eventually('a replacement Machine with its KubeadmConfig', async () => {
    const list = await machines();
    const fresh = list.find((m) => m.metadata.name !== victim.metadata.name && m.status?.nodeRef?.name !== 'wl-worker-b');
    return fresh && (await c.kube.read(resources.kubeadmConfigs, fresh.metadata.name, NS)) ? fresh : undefined;
  }, 60_000);
});

test('a workload API that stops answering leaves nodeRef and phase, turns the node conditions Unknown, and remediates nothing', { timeout: 120_000 }, async () => {
  const before = (await machines()).find((m) => m.status?.nodeRef?.name === 'wl-worker-b')!;
  await wl.stop();
  wlStopped = true;
  const down = await eventually('NodeHealthy Unknown, ConnectionDown', async () => {
    const m = (await c.kube.get(MACHINES, before.metadata.name, NS)) as Obj;
    return condition(m, 'NodeHealthy')?.reason === 'ConnectionDown' ? m : undefined;
  }, 60_000);
  assert.equal(condition(down, 'NodeHealthy').status, 'Unknown');
  assert.equal(condition(down, 'NodeReady').status, 'Unknown');
  assert.match(condition(down, 'NodeReady').message, /^Cannot read the Node wl-worker-b: /);
  assert.deepEqual(down.status.nodeRef, { name: 'wl-worker-b' });
  assert.equal(down.status.phase, 'Running');
  // Not judged while unreadable: no NodeDeleted verdict, the Machine stays.
  await new Promise((r) => setTimeout(r, 3_000));
  const still = (await c.kube.get(MACHINES, before.metadata.name, NS)) as Obj;
  assert.equal(still.metadata.deletionTimestamp, undefined);
  assert.notEqual(condition(still, 'HealthCheckSucceeded')?.status, 'False');
});
