// The kubeadm bootstrap provider end to end against the embedded API server, with the Machine
// controller beside it: two control-plane Machines race for the init lock and exactly one gets
// init data; a worker waits for the control plane; cloud-config and an unknown version are refused
// with a condition saying why; the data is Ignition that bosun's validator and the real Ignition
// client accept, in kubeadm's layout; once the Cluster is initialized the others get join data
// with a bootstrap token created in the workload cluster through `<cluster>-kubeconfig`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { X509Certificate, createHash } from 'node:crypto';
import type * as api from '../../src/api/index.js';
import { capiContext } from '../../src/capi/context.js';
import { kubeadmBootstrapController } from '../../src/capi/kubeadm/bootstrap-controller.js';
import { machineController } from '../../src/capi/machine-controller.js';
import { readKubeletFiles } from '../../src/cluster/node-agent/kubelet-files.js';
import { parseConfig } from '../../src/ignition/parse.js';
import { decodeDataUrl } from '../../src/ignition/data-url.js';
import { KubeClient, Manager, loadKubeConfig, resources } from '../../src/kube/index.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { IGNITION_VALIDATE, bootWithIgnition, skipWithoutIgnition } from '../helpers/ignition.js';
import { installCrds } from './capi-fixture.js';

const NS = 'default';
const CLUSTER = 'wl';
let mgmt: TestApiServer;
let workload: TestApiServer;
let kube: KubeClient;
let manager: Manager;
let running: Promise<void>;

const configs = resources.kubeadmConfigs;

function machine(name: string, o: { controlPlane?: boolean; version?: string } = {}): api.Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, ...(o.controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {}) } },
    spec: {
      clusterName: CLUSTER, version: o.version ?? 'v1.33.1',
      bootstrap: { configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name } },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name },
    },
  };
}

function config(name: string, spec: api.KubeadmConfig['spec'] = {}): api.KubeadmConfig {
  return { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfig', metadata: { name, namespace: NS }, spec };
}

const CP_SPEC: api.KubeadmConfig['spec'] = {
  files: [
    { path: '/etc/motd', content: 'a bosun workload cluster\n', permissions: '0640', owner: 'root:root' },
    { path: '/etc/from-secret', contentFrom: { secret: { name: 'extra-file', key: 'data' } } },
  ],
  preKubeadmCommands: ['echo pre > /tmp/pre'],
  postKubeadmCommands: ['echo post'],
};

const condition = (c: api.KubeadmConfig | undefined, type = 'DataSecretAvailable') => c?.status?.conditions?.find((x) => x.type === type);
const read = (name: string) => kube.read(configs, name, NS);
const secretValue = (s: api.Secret, key: string) => Buffer.from(s.data![key], 'base64').toString('utf8');
const ignitionFiles = (value: string) => new Map((parseConfig(value).config.storage?.files ?? []).map((f) => [f.path, f]));
const fileText = (files: ReturnType<typeof ignitionFiles>, path: string) => decodeDataUrl(files.get(path)!.contents!.source!).toString('utf8');

before(async () => {
  mgmt = await startTestApiServer();
  workload = await startTestApiServer();
  await installCrds(mgmt.kubectlOk);
  kube = new KubeClient(loadKubeConfig(mgmt.kubeconfigPath));
  manager = new Manager({ name: 'cluster-api-controllers', kubeconfig: loadKubeConfig(mgmt.kubeconfigPath), logLevel: process.env.BOSUN_LOG_LEVEL ?? 'warn' });
  const ctx = capiContext(manager);
  manager.add(kubeadmBootstrapController(ctx), machineController(ctx));
  running = manager.start();

  const cluster = await kube.create(resources.clusters, {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: CLUSTER, namespace: NS },
    spec: { clusterNetwork: { pods: { cidrBlocks: ['127.70.0.0/16'] }, services: { cidrBlocks: ['127.134.0.0/16'] } }, controlPlaneEndpoint: { host: '127.0.200.9', port: 6443 } },
  });
  await kube.update(resources.clusters, { ...cluster, status: { initialization: { infrastructureProvisioned: true } } }, 'status');
  await kube.create(resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'extra-file', namespace: NS }, data: { data: Buffer.from('from a Secret\n').toString('base64') } });
  await kube.create(configs, config('cp-0', CP_SPEC));
  await kube.create(configs, config('cp-1', CP_SPEC));
  await kube.create(configs, config('w-0', { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA core@bosun'], sudo: 'ALL=(ALL) NOPASSWD:ALL', groups: 'wheel, adm' }] }));
  await kube.create(configs, config('cc-0', { format: 'cloud-config' }));
  await kube.create(configs, config('old-0'));
  for (const m of [machine('cp-0', { controlPlane: true }), machine('cp-1', { controlPlane: true }), machine('w-0'), machine('cc-0', { controlPlane: true }), machine('old-0', { version: 'v1.20.0' })]) {
    await kube.create(resources.machines, m);
  }
});

after(async () => {
  manager?.stop();
  await running;
  await workload?.stop();
  await mgmt?.stop();
});

let initName = '';
let joinName = '';

test('two control-plane Machines: exactly one takes the init lock and gets init data, the other waits naming it', async () => {
  const [a, b] = await eventually('one control-plane config with data, the other waiting on the lock', async () => {
    const both = await Promise.all([read('cp-0'), read('cp-1')]);
    const done = both.filter((c) => c?.status?.initialization?.dataSecretCreated);
    const waiting = both.filter((c) => condition(c)?.reason === 'WaitingForInitLock');
    return done.length === 1 && waiting.length === 1 ? [done[0]!, waiting[0]!] : undefined;
  });
  initName = a.metadata.name;
  joinName = b.metadata.name;
  assert.equal(a.status?.dataSecretName, initName);
  assert.equal(condition(a)?.status, 'True');
  assert.equal(condition(a, 'Ready')?.status, 'True');
  assert.match(condition(b)!.message, new RegExp(`waiting for Machine ${initName} to initialize the control plane \\(it holds the ConfigMap default/wl-lock\\)`));
  const lock = await kube.get(resources.configMaps, 'wl-lock', NS);
  assert.deepEqual(JSON.parse(lock.data!['lock-information']), { machineName: initName });
  // The Machine controller owns the config and copies the data Secret's name to the Machine.
  assert.ok(a.metadata.ownerReferences?.some((r) => r.kind === 'Machine' && r.name === initName && r.controller));
  const m = await eventually('the Machine names its bootstrap data', async () => { const m = await kube.get(resources.machines, initName, NS); return m.spec.bootstrap.dataSecretName === initName && m.status?.initialization?.bootstrapDataSecretCreated ? m : undefined; });
  assert.equal(m.status?.conditions?.find((c) => c.type === 'BootstrapConfigReady')?.status, 'True');
});

test('the data Secret: named as the config, type cluster.x-k8s.io/secret, the cluster-name label, owned by the config, format ignition', async () => {
  const secret = await kube.get(resources.secrets, initName, NS);
  assert.equal(secret.type, 'cluster.x-k8s.io/secret');
  assert.equal(secret.metadata.labels?.['cluster.x-k8s.io/cluster-name'], CLUSTER);
  assert.deepEqual(secret.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['KubeadmConfig', initName, true]]);
  assert.equal(secretValue(secret, 'format'), 'ignition');
  for (const purpose of ['ca', 'etcd', 'proxy', 'sa']) {
    const s = await kube.get(resources.secrets, `${CLUSTER}-${purpose}`, NS);
    assert.equal(s.type, 'cluster.x-k8s.io/secret');
    assert.deepEqual(Object.keys(s.data ?? {}).sort(), ['tls.crt', 'tls.key']);
  }
});

test('init data is kubeadm\'s layout before kubeadm runs: CA keys, kubelet files, the version, kubeadm.yaml, the spec\'s files and commands around bosun kubeadm init', async () => {
  const value = secretValue(await kube.get(resources.secrets, initName, NS), 'value');
  const files = ignitionFiles(value);
  for (const path of ['ca.crt', 'ca.key', 'sa.key', 'sa.pub', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'etcd/ca.crt', 'etcd/ca.key']) assert.ok(files.has(`/etc/kubernetes/pki/${path}`), path);
  const ca = await kube.get(resources.secrets, 'wl-ca', NS);
  assert.equal(fileText(files, '/etc/kubernetes/pki/ca.crt'), secretValue(ca, 'tls.crt'));
  // What names the machine (leaf certificates, kubeconfigs, static pods) is made on it by `bosun kubeadm init`.
  assert.ok(![...files.keys()].some((p) => p.startsWith('/etc/kubernetes/manifests/') || /\/(apiserver|etcd\/server)\.crt$/.test(p)), 'no static pods or leaf certificates in the data');
  for (const path of ['kubelet.conf', 'admin.conf', 'controller-manager.conf', 'scheduler.conf', 'bootstrap-kubelet.conf']) assert.ok(!files.has(`/etc/kubernetes/${path}`), path);
  assert.equal(fileText(files, '/etc/bosun/kubernetes-version'), 'v1.33.1\n');
  assert.equal(fileText(files, '/var/lib/kubelet/kubeadm-flags.env'), 'KUBELET_KUBEADM_ARGS="--node-labels=node-role.kubernetes.io/control-plane= --register-with-taints=node-role.kubernetes.io/control-plane:NoSchedule"\n');
  assert.match(fileText(files, '/var/lib/kubelet/config.yaml'), /clusterDNS:\n- 127\.134\.0\.10\n/);
  // The cluster's pod network, of which the node agent takes its machine's /24.
  assert.match(fileText(files, '/var/lib/kubelet/config.yaml'), /^podCIDR: 127\.70\.0\.0\/16$/m);
  assert.equal(fileText(files, '/etc/from-secret'), 'from a Secret\n');
  assert.equal(files.get('/etc/motd')!.mode, 0o640);
  const [clusterConfig, initConfig] = parseAllDocuments(fileText(files, '/run/kubeadm/kubeadm.yaml')).map((d) => d.toJS());
  assert.equal(clusterConfig.kind, 'ClusterConfiguration');
  assert.deepEqual([clusterConfig.clusterName, clusterConfig.kubernetesVersion, clusterConfig.controlPlaneEndpoint, clusterConfig.imageRepository], ['wl', 'v1.33.1', '127.0.200.9:6443', 'bosun.local']);
  assert.deepEqual(clusterConfig.networking, { serviceSubnet: '127.134.0.0/16', podSubnet: '127.70.0.0/16', dnsDomain: 'cluster.local' });
  assert.deepEqual(initConfig.nodeRegistration, { name: initName, taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] });
  assert.match(fileText(files, '/etc/kubeadm.sh'), /set -e\necho pre > \/tmp\/pre\nbosun kubeadm init --config \/run\/kubeadm\/kubeadm\.yaml\necho post\n/);
});

test('the real Ignition client accepts the init data and writes kubeadm\'s files where the node agent reads them', { skip: skipWithoutIgnition, timeout: 90_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'bosun-kubeadm-ign-'));
  try {
    const file = join(work, 'config.ign');
    writeFileSync(file, secretValue(await kube.get(resources.secrets, initName, NS), 'value'));
    execFileSync(IGNITION_VALIDATE, [file]);
    const root = await bootWithIgnition(file, work);
    assert.equal(readFileSync(join(root, 'etc/bosun/kubernetes-version'), 'utf8'), 'v1.33.1\n');
    assert.equal(statSync(join(root, 'etc/kubernetes/pki/ca.key')).mode & 0o777, 0o600);
    assert.match(readFileSync(join(root, 'run/kubeadm/kubeadm.yaml'), 'utf8'), /kind: InitConfiguration/);
    const kubelet = readKubeletFiles(root);
    assert.equal(kubelet.kubeconfigPath, '/etc/kubernetes/kubelet.conf');
    assert.equal(kubelet.bootstrapKubeconfigPath, '/etc/kubernetes/bootstrap-kubelet.conf');
    assert.equal(kubelet.config.staticPodPath, '/etc/kubernetes/manifests');
    assert.equal(kubelet.config.authentication?.x509?.clientCAFile, '/etc/kubernetes/pki/ca.crt');
    assert.equal(kubelet.config.podCIDR, '127.70.0.0/16');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('a worker waits for the control plane; cloud-config and an unknown version are refused, and the Machine says why', async () => {
  await eventually('the worker waits', async () => condition(await read('w-0'))?.reason === 'WaitingForControlPlaneInitialization');
  assert.match(condition(await read('w-0'))!.message, /waiting for Cluster wl's control plane to be initialized before a worker joins it/);
  const cc = await eventually('cloud-config refused', async () => { const c = await read('cc-0'); return condition(c)?.reason === 'InvalidSpec' ? c : undefined; });
  assert.match(condition(cc)!.message, /spec\.format "cloud-config" is not supported: bosun's machines boot from Ignition/);
  assert.equal(cc!.status?.dataSecretName, undefined);
  const old = await eventually('unknown version refused', async () => { const c = await read('old-0'); return condition(c)?.reason === 'InvalidSpec' ? c : undefined; });
  assert.match(condition(old)!.message, /Kubernetes version "v1\.20\.0" cannot be installed by bosun; supported versions: v1\.32\.5, v1\.33\.1/);
  await eventually('the Machine names the refusal', async () => {
    const m = await kube.get(resources.machines, 'cc-0', NS);
    return m.status?.conditions?.some((c) => c.type === 'BootstrapConfigReady' && c.status === 'False' && c.message.includes('cloud-config'));
  });
  assert.equal(await kube.read(resources.secrets, 'cc-0', NS), undefined, 'no data for a refused config');
});

test('after the control plane is initialized: the lock goes, joins wait for the workload cluster, then get join data with a bootstrap token made there', async () => {
  const cluster = await kube.get(resources.clusters, CLUSTER, NS);
  await kube.update(resources.clusters, { ...cluster, status: { ...cluster.status, initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true } } }, 'status');
  await eventually('the init lock released', async () => (await kube.read(resources.configMaps, 'wl-lock', NS)) === undefined);
  await eventually('the worker waits for the workload cluster', async () => condition(await read('w-0'))?.reason === 'WaitingForWorkloadCluster');
  assert.match(condition(await read('w-0'))!.message, /waiting for Secret default\/wl-kubeconfig \(the workload cluster's kubeconfig\) to create a bootstrap token/);

  // The workload cluster's admin kubeconfig (here: a second API server's).
  await kube.create(resources.secrets, { apiVersion: 'v1', kind: 'Secret', type: 'cluster.x-k8s.io/secret', metadata: { name: 'wl-kubeconfig', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } }, data: { value: Buffer.from(readFileSync(workload.kubeconfigPath)).toString('base64') } });
  for (const name of ['w-0', joinName]) await kube.mergePatch(configs, name, NS, { metadata: { annotations: { poke: '1' } } });

  const worker = await eventually('join data for the worker', async () => { const c = await read('w-0'); return c?.status?.initialization?.dataSecretCreated ? c : undefined; }, 30_000);
  const token = worker.spec?.joinConfiguration?.discovery?.bootstrapToken?.token;
  assert.match(token ?? '', /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
  const [id, secret] = token!.split('.');
  const stored = JSON.parse((await workload.request('GET', `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${id}`)).text) as api.Secret;
  assert.equal(stored.type, 'bootstrap.kubernetes.io/token');
  assert.equal(Buffer.from(stored.data!['token-secret'], 'base64').toString(), secret);
  assert.equal(Buffer.from(stored.data!['usage-bootstrap-authentication'], 'base64').toString(), 'true');

  const value = secretValue(await kube.get(resources.secrets, 'w-0', NS), 'value');
  const files = ignitionFiles(value);
  const bootstrap = parseYaml(fileText(files, '/etc/kubernetes/bootstrap-kubelet.conf'));
  assert.equal(bootstrap.users[0].user.token, token);
  assert.equal(bootstrap.clusters[0].cluster.server, 'https://127.0.200.9:6443');
  assert.ok(files.has('/etc/kubernetes/pki/ca.crt') && !files.has('/etc/kubernetes/pki/ca.key'), 'a worker gets the CA certificate, not its key');
  const joinConfig = parseYaml(fileText(files, '/run/kubeadm/kubeadm.yaml'));
  assert.equal(joinConfig.kind, 'JoinConfiguration');
  assert.equal(joinConfig.discovery.bootstrapToken.token, token);
  assert.equal(joinConfig.discovery.bootstrapToken.apiServerEndpoint, '127.0.200.9:6443');
  const caSpki = new X509Certificate(fileText(files, '/etc/kubernetes/pki/ca.crt')).publicKey.export({ type: 'spki', format: 'der' });
  assert.deepEqual(joinConfig.discovery.bootstrapToken.caCertHashes, [`sha256:${createHash('sha256').update(caSpki).digest('hex')}`]);
  assert.equal(joinConfig.controlPlane, undefined, 'a worker joins without a control-plane section');
  assert.ok(![...files.keys()].some((p) => p.startsWith('/etc/kubernetes/manifests/')), 'no static pods on a worker');
  assert.equal(fileText(files, '/var/lib/kubelet/kubeadm-flags.env'), 'KUBELET_KUBEADM_ARGS=""\n');
  assert.equal(fileText(files, '/etc/sudoers.d/core'), 'core ALL=(ALL) NOPASSWD:ALL\n');
  assert.deepEqual(parseConfig(value).config.passwd?.users, [{ name: 'core', groups: ['wheel', 'adm'], sshAuthorizedKeys: ['ssh-ed25519 AAAA core@bosun'] }]);
  if (!skipWithoutIgnition) {
    const work = mkdtempSync(join(tmpdir(), 'bosun-kubeadm-ign-'));
    try {
      writeFileSync(join(work, 'w.ign'), value);
      execFileSync(IGNITION_VALIDATE, [join(work, 'w.ign')]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  const joiner = await eventually('join data for the second control-plane machine', async () => { const c = await read(joinName); return c?.status?.initialization?.dataSecretCreated ? c : undefined; }, 30_000);
  const cpFiles = ignitionFiles(secretValue(await kube.get(resources.secrets, joiner.metadata.name, NS), 'value'));
  assert.ok(cpFiles.has('/etc/kubernetes/pki/ca.key') && cpFiles.has('/etc/kubernetes/bootstrap-kubelet.conf') && !cpFiles.has('/etc/kubernetes/kubelet.conf'));
  // A control-plane join brings the ClusterConfiguration its static pods are made from, and the control-plane section.
  const [cpCluster, cpJoin] = parseAllDocuments(fileText(cpFiles, '/run/kubeadm/kubeadm.yaml')).map((d) => d.toJS());
  assert.deepEqual([cpCluster.kind, cpCluster.controlPlaneEndpoint, cpCluster.networking.serviceSubnet], ['ClusterConfiguration', '127.0.200.9:6443', '127.134.0.0/16']);
  assert.deepEqual([cpJoin.kind, cpJoin.controlPlane], ['JoinConfiguration', {}]);
  assert.match(fileText(cpFiles, '/etc/kubeadm.sh'), /^bosun kubeadm join --config \/run\/kubeadm\/kubeadm\.yaml$/m);
  // Done is done: the init config's data is not rewritten.
  const before = (await kube.get(resources.secrets, initName, NS)).metadata.resourceVersion;
  await kube.mergePatch(configs, initName, NS, { metadata: { annotations: { poke: '2' } } });
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await kube.get(resources.secrets, initName, NS)).metadata.resourceVersion, before);
});

test('a clusterNetwork the local machines cannot serve: no data, a condition naming each range and why; corrected, the data comes', async () => {
  const far = await kube.create(resources.clusters, {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: 'far', namespace: NS },
    spec: { clusterNetwork: { pods: { cidrBlocks: ['10.244.0.0/16'] }, services: { cidrBlocks: ['127.1.0.0/24'] } }, controlPlaneEndpoint: { host: '127.0.200.10', port: 6443 } },
  });
  await kube.update(resources.clusters, { ...far, status: { initialization: { infrastructureProvisioned: true } } }, 'status');
  await kube.create(configs, { ...config('far-0'), metadata: { name: 'far-0', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'far' } } });
  await kube.create(resources.machines, { ...machine('far-0', { controlPlane: true }), metadata: { name: 'far-0', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'far', 'cluster.x-k8s.io/control-plane': '' } }, spec: { ...machine('far-0').spec, clusterName: 'far' } });
  const refused = await eventually('the config refused for its Cluster\'s networks', async () => { const c = await read('far-0'); return condition(c)?.reason === 'InvalidClusterNetwork' ? c : undefined; });
  assert.equal(condition(refused)!.status, 'False');
  assert.equal(condition(refused)!.message, 'Cluster far\'s networks cannot be served: '
    + 'spec.clusterNetwork.pods.cidrBlocks[0] "10.244.0.0/16" cannot be served by the local cloud\'s machines: their pod and Service addresses are loopback addresses, so the range must lie inside 127.0.0.0/8 (bosun cluster generate picks one, such as 127.70.0.0/16); '
    + 'spec.clusterNetwork.services.cidrBlocks[0] "127.1.0.0/24" overlaps 127.1.0.0/16, the management cluster\'s pods');
  assert.equal(refused.status?.dataSecretName, undefined);
  assert.equal(await kube.read(resources.secrets, 'far-0', NS), undefined, 'no data for a cluster whose networks cannot be served');
  assert.equal(await kube.read(resources.configMaps, 'far-lock', NS), undefined, 'the init lock is not taken either');
  await eventually('the Machine says why', async () => {
    const m = await kube.get(resources.machines, 'far-0', NS);
    return m.status?.conditions?.some((c) => c.type === 'BootstrapConfigReady' && c.status === 'False' && c.message.includes('10.244.0.0/16'));
  });

  // A pod range too narrow for a /24 per machine is refused too; ranges the machines can serve are taken.
  await kube.mergePatch(resources.clusters, 'far', NS, { spec: { clusterNetwork: { pods: { cidrBlocks: ['127.72.0.0/20'] }, services: { cidrBlocks: ['127.136.0.0/16'] } } } });
  await eventually('the narrow pod range refused', async () => /"127\.72\.0\.0\/20" is too narrow: each machine takes the \/24 numbered after its address's last octet, so the pods need a \/16 or wider$/.test(condition(await read('far-0'))?.message ?? ''));
  await kube.mergePatch(resources.clusters, 'far', NS, { spec: { clusterNetwork: { pods: { cidrBlocks: ['127.72.0.0/16'] } } } });
  const done = await eventually('data once the networks can be served', async () => { const c = await read('far-0'); return c?.status?.initialization?.dataSecretCreated ? c : undefined; });
  assert.equal(condition(done)!.status, 'True');
  const files = ignitionFiles(secretValue(await kube.get(resources.secrets, 'far-0', NS), 'value'));
  assert.match(fileText(files, '/var/lib/kubelet/config.yaml'), /^podCIDR: 127\.72\.0\.0\/16$/m);
});
