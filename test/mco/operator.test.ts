// The machine-config operator, controller and server together against the embedded API server:
// the operator fills ControllerConfig from the cluster, creates the pools, the workloads and the
// user-data Secrets, and reports ClusterOperator/machine-config; the controller renders; the
// server serves each pool's rendered config from the API; the real Ignition client boots from the
// worker user data exactly as a new machine would. A new release version is reported only once
// the pools are rendered for it; a degraded pool degrades the operator, naming it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repositoryRoot } from '../../src/cli/release.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { bootWithIgnition, skipWithoutIgnition } from '../helpers/ignition.js';
import { KubeClient, type ResourceRef, type Obj } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { runMachineConfigOperator } from '../../src/mco/operator/operator.js';
import { runMachineConfigController } from '../../src/mco/controller/run.js';
import { ApiRenderedConfigSource } from '../../src/mco/server/api-config-source.js';
import { MachineConfigServer } from '../../src/mco/server/server.js';
import { generateCa, issueServingCert } from '../../src/mco/server/serving-tls.js';
import { decodeDataUrl } from '../../src/ignition/data-url.js';

// Debian installs the client under dracut's modules; elsewhere it may be on PATH (as .ci/run accepts).

const ref = (group: string, resource: string, namespaced = false, version = 'v1'): ResourceRef<Obj> => ({ group, version, resource, namespaced });
const MCO = 'machineconfiguration.openshift.io';
const R = {
  crds: ref('apiextensions.k8s.io', 'customresourcedefinitions'),
  namespaces: ref('', 'namespaces'),
  configMaps: ref('', 'configmaps', true),
  secrets: ref('', 'secrets', true),
  infrastructures: ref('config.openshift.io', 'infrastructures'),
  clusterOperators: ref('config.openshift.io', 'clusteroperators'),
  controllerConfigs: ref(MCO, 'controllerconfigs'),
  pools: ref(MCO, 'machineconfigpools'),
  machineConfigs: ref(MCO, 'machineconfigs'),
  deployments: ref('apps', 'deployments', true),
  daemonSets: ref('apps', 'daemonsets', true),
};

let api: TestApiServer;
let client: KubeClient;
let work: string;
let ca: { cert: string; key: string };
let server: MachineConfigServer;
const stop = new AbortController();
let version = '1.0.0';
let running: Promise<unknown>;

const cond = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);

before(async () => {
  api = await startTestApiServer();
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  work = mkdtempSync(join(tmpdir(), 'bosun-mco-operator-'));
  // What the installer and the CVO give the cluster before the operator runs: the CRDs, the
  // operator's namespace and images ConfigMap, Infrastructure, the CAs and the pull secret.
  const manifests = join(repositoryRoot, 'release-payload', 'manifests');
  for (const file of readdirSync(manifests).sort()) {
    const wanted = file.endsWith('.crd.yaml') || file.startsWith('0000_80_machine-config_00') || file.startsWith('0000_80_machine-config_02');
    if (!wanted) continue;
    for (const doc of parseAllDocuments(readFileSync(join(manifests, file), 'utf8').split('{{VERSION}}').join('1.0.0'))) {
      const o = doc.toJS();
      if (!o) continue;
      const r = o.kind === 'CustomResourceDefinition' ? R.crds : o.kind === 'Namespace' ? R.namespaces : R.configMaps;
      await client.create(r, o);
    }
  }
  for (const ns of ['openshift-config', 'openshift-config-managed']) await client.create(R.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  ca = await generateCa('bosun-test-root-ca');
  await client.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'root-ca', namespace: 'kube-system' }, data: { 'ca.crt': ca.cert } });
  await client.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-apiserver-server-ca', namespace: 'openshift-config-managed' }, data: { 'ca-bundle.crt': api.caPem } });
  await client.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull-secret', namespace: 'openshift-config' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('{"auths":{"bosun.local":{"auth":"Ym9zdW46c2VjcmV0"}}}').toString('base64') } });
  await eventually('the Infrastructure kind to be served', async () => client.resourceFor('config.openshift.io/v1', 'Infrastructure'));
  const infra = await client.create(R.infrastructures, { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'None' } } });
  await client.mergePatch(R.infrastructures, 'cluster', undefined, { metadata: { resourceVersion: infra.metadata.resourceVersion }, status: { infrastructureName: 'bosun-test', platform: 'None', platformStatus: { type: 'None' }, apiServerURL: 'https://127.0.0.1:6443', apiServerInternalURI: 'https://127.0.0.1:6443' } }, 'status');

  // The server first (its port goes into the user data), trusting the root CA.
  const kubeconfig = loadKubeConfig(api.kubeconfigPath);
  const source = new ApiRenderedConfigSource(kubeconfig);
  await source.start(stop.signal);
  server = new MachineConfigServer({ source, tls: await issueServingCert(ca, ['127.0.0.1']), listenTls: { host: '127.0.0.1', port: 0 }, listenHttp: { host: '127.0.0.1', port: 0 }, bootstrapKubeconfig: 'apiVersion: v1\nkind: Config\n' });
  await server.start();
  running = Promise.all([
    runMachineConfigOperator({ kubeconfig, signal: stop.signal, releaseVersion: () => version, serverPort: server.port('tls'), leaderElection: false }),
    runMachineConfigController({ kubeconfig, signal: stop.signal, leaderElection: false, renderDelayMs: 100, renderedGCGraceMs: 3_600_000 }),
  ]);
});

after(async () => {
  stop.abort();
  await running;
  await server?.close();
  await api?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('the operator brings the machine-config component up and reports it Available at its version', async () => {
  const co = await eventually('machine-config to be Available at 1.0.0', async () => {
    const o = await client.read(R.clusterOperators, 'machine-config');
    return cond(o, 'Available')?.status === 'True' && o?.status?.versions?.[0]?.version === '1.0.0' ? o : undefined;
  });
  assert.equal(cond(co, 'Degraded').status, 'False');
  assert.equal(cond(co, 'Progressing').status, 'False');
  assert.equal(cond(co, 'Upgradeable').status, 'True');
  const table = await api.kubectl(['get', 'co', 'machine-config']);
  assert.match(table.stdout, /^machine-config\s+1\.0\.0\s+True\s+False\s+False\s+/m);

  const cc = await client.get(R.controllerConfigs, 'machine-config-controller');
  assert.equal(Buffer.from(cc.spec.rootCAData, 'base64').toString(), ca.cert);
  assert.equal(Buffer.from(cc.spec.kubeAPIServerServingCAData, 'base64').toString(), api.caPem);
  assert.deepEqual(cc.spec.pullSecret, { namespace: 'openshift-config', name: 'pull-secret' });
  assert.equal(cc.metadata.annotations['machineconfiguration.openshift.io/release-image-version'], '1.0.0');
  assert.equal(cc.spec.platform, 'none');
  assert.equal(cc.spec.images.infraImageKey, 'bosun.local/pause:1.0.0', "images.json's infraImage, as the templates read it");
  for (const pool of ['master', 'worker']) {
    const rendered = await eventually(`${pool}'s rendered config`, async () => {
      const name = (await client.get(R.pools, pool)).spec.configuration?.name;
      return name && client.get(R.machineConfigs, name);
    });
    const crio = rendered.spec.config.storage.files.find((f: { path: string }) => f.path === '/etc/crio/crio.conf.d/01-bosun-base');
    assert.match(decodeDataUrl(crio.contents.source).toString(), /pause_image = "bosun\.local\/pause:1\.0\.0"/, `${pool}: CRI-O's pause image from the release`);
  }

  for (const pool of ['master', 'worker']) {
    const p = await client.get(R.pools, pool);
    assert.match(p.spec.configuration.name, new RegExp(`^rendered-${pool}-[0-9a-f]+$`));
  }
  const deployment = await client.get(R.deployments, 'machine-config-controller', 'openshift-machine-config-operator');
  assert.equal(deployment.spec.template.spec.containers[0].image, 'bosun.local/machine-config-operator:1.0.0');
  const daemonSet = await client.get(R.daemonSets, 'machine-config-server', 'openshift-machine-config-operator');
  assert.equal(daemonSet.spec.template.spec.hostNetwork, true);

  // User data: a pointer config at the server, trusting the root CA.
  const secret = await client.get(R.secrets, 'worker-user-data', 'openshift-machine-api');
  const userData = JSON.parse(Buffer.from(secret.data.userData, 'base64').toString());
  assert.deepEqual(userData.ignition.config.merge, [{ source: `https://127.0.0.1:${server.port('tls')}/config/worker` }]);
  assert.equal(decodeDataUrl(userData.ignition.security.tls.certificateAuthorities[0].source).toString(), ca.cert);
  const masterData = JSON.parse(Buffer.from((await client.get(R.secrets, 'master-user-data', 'openshift-machine-api')).data.userData, 'base64').toString());
  assert.match(masterData.ignition.config.merge[0].source, /\/config\/master$/);
});

test('the server serves each pool its rendered config from the API', async () => {
  const pool = await client.get(R.pools, 'worker');
  const rendered = await client.get(R.machineConfigs, pool.spec.configuration.name);
  const res = await fetch(`http://127.0.0.1:${server.port('http')}/config/worker`, { headers: { accept: 'application/vnd.coreos.ignition+json;version=3.2.0' } });
  assert.equal(res.status, 200);
  const served = (await res.json()) as any;
  assert.equal(served.ignition.version, '3.2.0');
  const paths = served.storage.files.map((f: any) => f.path);
  for (const f of rendered.spec.config.storage.files) assert.ok(paths.includes(f.path), `${f.path} served`);
  const annotations = served.storage.files.find((f: any) => f.path === '/etc/machine-config-daemon/node-annotations.json');
  assert.equal(JSON.parse(decodeDataUrl(annotations.contents.source).toString())['machineconfiguration.openshift.io/currentConfig'], pool.spec.configuration.name);
  assert.equal((await fetch(`http://127.0.0.1:${server.port('http')}/config/nosuchpool`)).status, 404);
});

test('the real Ignition client boots from the worker user data', { skip: skipWithoutIgnition, timeout: 90_000 }, async () => {
  const secret = await client.get(R.secrets, 'worker-user-data', 'openshift-machine-api');
  const pointer = join(work, 'user-data.ign');
  writeFileSync(pointer, Buffer.from(secret.data.userData, 'base64'));
  const root = await bootWithIgnition(pointer, work);
  const pool = await client.get(R.pools, 'worker');
  const rendered = await client.get(R.machineConfigs, pool.spec.configuration.name);
  for (const file of rendered.spec.config.storage.files) {
    assert.deepEqual(readFileSync(join(root, file.path)), decodeDataUrl(file.contents.source), file.path);
    if (file.mode !== undefined) assert.equal(statSync(join(root, file.path)).mode & 0o7777, file.mode, `${file.path} mode`);
  }
  for (const unit of rendered.spec.config.systemd?.units ?? []) {
    if (unit.contents) assert.equal(readFileSync(join(root, 'etc/systemd/system', unit.name), 'utf8'), unit.contents, unit.name);
  }
  const annotations = JSON.parse(readFileSync(join(root, 'etc/machine-config-daemon/node-annotations.json'), 'utf8'));
  assert.equal(annotations['machineconfiguration.openshift.io/desiredConfig'], pool.spec.configuration.name);
});

test('a new root CA reaches ControllerConfig and the user data', async () => {
  const rotated = await generateCa('bosun-test-root-ca-2');
  await client.mergePatch(R.configMaps, 'root-ca', 'kube-system', { data: { 'ca.crt': rotated.cert } });
  await eventually('ControllerConfig to carry the new root CA', async () => Buffer.from((await client.get(R.controllerConfigs, 'machine-config-controller')).spec.rootCAData, 'base64').toString() === rotated.cert);
  await eventually('the worker user data to trust the new CA', async () => {
    const secret = await client.get(R.secrets, 'worker-user-data', 'openshift-machine-api');
    const userData = JSON.parse(Buffer.from(secret.data.userData, 'base64').toString());
    return decodeDataUrl(userData.ignition.security.tls.certificateAuthorities[0].source).toString() === rotated.cert;
  });
  // Put the original back for the server's certificate (issued by it) and the tests after.
  await client.mergePatch(R.configMaps, 'root-ca', 'kube-system', { data: { 'ca.crt': ca.cert } });
  await eventually('ControllerConfig back on the original CA', async () => Buffer.from((await client.get(R.controllerConfigs, 'machine-config-controller')).spec.rootCAData, 'base64').toString() === ca.cert);
});

test('a degraded pool degrades the operator; a new release is reported once rendered for it', async () => {
  // An invalid MachineConfig for the workers: the pool is RenderDegraded, the operator Degraded.
  await client.create(R.machineConfigs, { apiVersion: `${MCO}/v1`, kind: 'MachineConfig', metadata: { name: '99-worker-bad', labels: { [`${MCO}/role`]: 'worker' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: 'relative/path', contents: { source: 'data:,x' } }] } } } });
  const degraded = await eventually('machine-config to be Degraded', async () => {
    const o = await client.read(R.clusterOperators, 'machine-config');
    return cond(o, 'Degraded')?.status === 'True' ? o : undefined;
  });
  assert.match(cond(degraded, 'Degraded').message, /pool worker is degraded: .*99-worker-bad/);
  assert.equal(cond(degraded, 'Upgradeable').status, 'False');
  await client.delete(R.machineConfigs, '99-worker-bad');
  await eventually('the degradation to clear', async () => cond(await client.read(R.clusterOperators, 'machine-config'), 'Degraded')?.status === 'False');

  // The operator of release 1.0.1: Progressing until both pools are rendered for 1.0.1.
  version = '1.0.1';
  await client.mergePatch(R.infrastructures, 'cluster', undefined, { metadata: { labels: { nudge: '1' } } }); // any input change wakes the operator
  const done = await eventually('machine-config to report 1.0.1', async () => {
    const o = await client.read(R.clusterOperators, 'machine-config');
    return o?.status?.versions?.[0]?.version === '1.0.1' ? o : undefined;
  });
  assert.equal(cond(done, 'Available').status, 'True');
  // The templates do not change between these two releases, so the rendered name may stay: what
  // matters is that the pool's config was rendered for 1.0.1.
  const after = await client.get(R.pools, 'worker');
  const rendered = await client.get(R.machineConfigs, after.spec.configuration.name);
  assert.equal(rendered.metadata.annotations['machineconfiguration.openshift.io/release-image-version'], '1.0.1');
});

test('with a daemon image the operator runs the daemon on every node, and reports a new release only once the master pool\'s nodes run its config', async () => {
  const NODES = ref('', 'nodes');
  const images = await client.get(R.configMaps, 'machine-config-operator-images', 'openshift-machine-config-operator');
  const json = JSON.parse(images.data['images.json']);
  await client.mergePatch(R.configMaps, 'machine-config-operator-images', 'openshift-machine-config-operator', { data: { 'images.json': JSON.stringify({ ...json, machineConfigDaemon: json.machineConfigOperator }) } });
  const ds = await eventually('the daemon DaemonSet', () => client.read(R.daemonSets, 'machine-config-daemon', 'openshift-machine-config-operator'));
  const pod = ds.spec.template.spec;
  assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }], 'on every node, whatever its taints');
  assert.equal(pod.hostNetwork, true);
  assert.equal(pod.containers[0].securityContext.privileged, true);
  // (With what kube-apiserver defaults in a template: a hostPath's type, a secret's file mode.)
  assert.deepEqual(pod.volumes, [{ name: 'rootfs', hostPath: { path: '/', type: '' } }, { name: 'metrics-tls', secret: { secretName: 'proxy-tls', defaultMode: 0o644 } }]);
  assert.equal(pod.containers[0].volumeMounts[0].mountPath, '/rootfs');
  assert.deepEqual(pod.containers[0].command, ['bosun', 'machine-config-daemon']);
  // Metrics on the node's address (hostNetwork), HTTPS with the service CA's certificate.
  assert.deepEqual(pod.containers[0].args, ['--metrics-listen=$(HOST_IP):9001', '--tls-cert-file=/etc/tls/private/tls.crt', '--tls-private-key-file=/etc/tls/private/tls.key']);
  assert.ok(pod.containers[0].env.some((e: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }) => e.name === 'HOST_IP' && e.valueFrom?.fieldRef?.fieldPath === 'status.hostIP'));
  assert.ok(pod.containers[0].env.some((e: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }) => e.name === 'NODE_NAME' && e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName'));
  const target = (await client.get(R.pools, 'master')).spec.configuration.name;
  // A master whose daemon has not moved it: the node controller targets it, it stays behind.
  await client.create(NODES, {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name: 'master-0', labels: { 'node-role.kubernetes.io/master': '' }, annotations: { [`${MCO}/currentConfig`]: 'rendered-master-older', [`${MCO}/desiredConfig`]: 'rendered-master-older', [`${MCO}/state`]: 'Done' } },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  version = '1.0.2';
  await client.mergePatch(R.infrastructures, 'cluster', undefined, { metadata: { labels: { nudge: '2' } } });
  const waiting = await eventually('machine-config Progressing on the master pool', async () => {
    const o = await client.read(R.clusterOperators, 'machine-config');
    return /master pool is rolling out/.test(cond(o, 'Progressing')?.message ?? '') ? o : undefined;
  });
  assert.equal(waiting.status.versions[0].version, '1.0.1', 'the old version stays reported');
  const now = (await client.get(R.pools, 'master')).spec.configuration.name;
  assert.ok(now === target || now.startsWith('rendered-master-'));
  // The daemon's part: the node now runs the target.
  await client.mergePatch(NODES, 'master-0', undefined, { metadata: { annotations: { [`${MCO}/currentConfig`]: now, [`${MCO}/desiredConfig`]: now, [`${MCO}/state`]: 'Done' } } });
  await eventually('machine-config to report 1.0.2', async () => (await client.read(R.clusterOperators, 'machine-config'))?.status?.versions?.[0]?.version === '1.0.2');
});
