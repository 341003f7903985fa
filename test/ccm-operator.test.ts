// The cloud-controller-manager operator (src/ccm-operator/operator) against the embedded API
// server with RBAC on, running as its payload ServiceAccount with exactly the payload's rules
// (release-payload/manifests/0000_26_*, applied from a release `bosun release build` made): no
// platform yet → waiting; platform None → Available, saying no CCM is deployed, nothing deployed;
// External "local" without its cloud config → Degraded naming what is missing; with it → the
// cloud-conf ConfigMap, the CCM Deployment and its PDB as OpenShift shapes them, and the version
// reported only once the Deployment's status (driven here as the Deployment controller writes it)
// says it rolled out — again on an update to a new release.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, Manager, type Obj, loadKubeConfig, resources as R } from '../src/kube/index.js';
import { enableAccessControl } from '../src/apiserver/auth/access-control.js';
import { buildRelease } from '../src/cvo/payload/build.js';
import { addCloudControllerManagerOperator, CLOUD_CONTROLLER_MANAGER_OPERATOR, OPERATOR_NAMESPACE } from '../src/ccm-operator/operator/operator.js';
import { CCM_NAMESPACE } from '../src/ccm-operator/operator/operands.js';
import { startTestApiServer, type TestApiServer } from './helpers/apiserver.js';
import { createReleaseCrds } from './helpers/cluster-objects.js';
import { eventually } from './helpers/eventually.js';

const root = fileURLToPath(new URL('../', import.meta.url));
let api: TestApiServer;
let admin: KubeClient;
let store: string;
let version = '1.0.0';
let stop = new AbortController();
let running: Promise<void> | undefined;

const co = () => admin.read(R.clusterOperators, 'cloud-controller-manager');
const cond = (o: Obj | undefined, type: string) => (o?.status?.conditions ?? []).find((c: Obj) => c.type === type);
const deployment = () => admin.read(R.deployments, 'local-cloud-controller-manager', CCM_NAMESPACE);

before(async () => {
  api = await startTestApiServer();
  await enableAccessControl(api.server, api.dataDir);
  admin = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  store = mkdtempSync(join(tmpdir(), 'bosun-ccm-operator-'));
  const release = buildRelease({ version: '1.0.0', from: join(root, 'release-payload'), cvoManifests: join(root, 'manifests'), store });
  await createReleaseCrds(admin, release.dir);
  // The config namespaces and the cloud-credential namespace and CRD (run level 03), and every cloud-controller-manager
  // operator manifest (its CredentialsRequest among them), rendered for 1.0.0.
  const dir = join(release.dir, 'release-manifests');
  const files = readdirSync(dir).filter((f) => f.startsWith('0000_03_config-operator_00_') || f.startsWith('0000_03_cloud-credential-operator_') || f.startsWith('0000_26_cloud-controller-manager-operator_')).sort();
  assert.equal(files.length, 11, `the payload's files: ${files.join(', ')}`);
  const text = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n---\n');
  await eventually('the payload applied (CRDs established)', async () => (await api.kubectl(['apply', '-f', '-'], { input: text })).code === 0, 20_000);

  const token = (await api.kubectlOk(['create', 'token', 'cluster-cloud-controller-manager', '-n', OPERATOR_NAMESPACE, '--duration=1h'])).trim();
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: api.url, caData: Buffer.from(api.caPem).toString('base64') }],
    users: [{ name: 'operator', token }],
    contexts: [{ name: 'operator', cluster: 'c', user: 'operator' }],
    currentContext: 'operator',
  });
  const { name, lease } = CLOUD_CONTROLLER_MANAGER_OPERATOR;
  const manager = new Manager({ name, kubeconfig: kc, leaderElection: { ...lease, identity: 'test', leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 } });
  addCloudControllerManagerOperator(manager, { releaseVersion: () => version });
  running = manager.start(stop.signal);
});

after(async () => {
  stop.abort();
  await running;
  await api.stop();
  rmSync(store, { recursive: true, force: true });
});

test('no platform yet: not Available, waiting; platform None: Available, no CCM deployed, version reported', async () => {
  await admin.create(R.infrastructures, { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'None' } } });
  const waiting = await eventually('WaitingForInfrastructure', async () => {
    const o = await co();
    return cond(o, 'Available')?.reason === 'WaitingForInfrastructure' ? o : undefined;
  }, 10_000);
  assert.equal(cond(waiting, 'Available').status, 'False');
  assert.equal(cond(waiting, 'Progressing').status, 'True');

  await admin.mergePatch(R.infrastructures, 'cluster', undefined, { status: { platform: 'None', platformStatus: { type: 'None' }, infrastructureName: 'bosun-test', controlPlaneTopology: 'HighlyAvailable' } }, 'status');
  const none = await eventually('Available with no CCM', async () => {
    const o = await co();
    return cond(o, 'Available')?.reason === 'NoCloudControllerManager' ? o : undefined;
  }, 10_000);
  assert.equal(cond(none, 'Available').status, 'True');
  assert.match(cond(none, 'Available').message, /platform None has no cloud controller manager in bosun .*; no cloud controller manager is deployed/);
  for (const [type, status] of [['Progressing', 'False'], ['Degraded', 'False'], ['Upgradeable', 'True']]) assert.equal(cond(none, type).status, status, type);
  assert.deepEqual(none.status!.versions, [{ name: 'operator', version: '1.0.0' }]);
  assert.deepEqual((await admin.list(R.deployments, CCM_NAMESPACE)).items, []);
  assert.equal(await admin.read(R.configMaps, 'cloud-conf', CCM_NAMESPACE), undefined);
});

test('External "local": cloud config missing → Degraded; then the CCM deployed, the version reported only after it rolled out', async () => {
  await admin.mergePatch(R.infrastructures, 'cluster', undefined, { spec: { platformSpec: { type: 'External', external: { platformName: 'local' } }, cloudConfig: { name: 'cloud-provider-config', key: 'config' } } });
  await admin.mergePatch(R.infrastructures, 'cluster', undefined, { status: { platform: 'External', platformStatus: { type: 'External', external: { cloudControllerManager: { state: 'External' } } } } }, 'status');
  const missing = await eventually('Degraded: no cloud config', async () => {
    const o = await co();
    return cond(o, 'Degraded')?.reason === 'CloudConfigMissing' ? o : undefined;
  }, 10_000);
  assert.equal(cond(missing, 'Degraded').status, 'True');
  assert.match(cond(missing, 'Degraded').message, /ConfigMap openshift-config\/cloud-provider-config, named by Infrastructure\/cluster spec.cloudConfig, does not exist/);
  assert.equal(cond(missing, 'Upgradeable').status, 'False');
  // The platform changed under a running cluster (OpenShift forbids that; here it saves a second
  // API server): the None phase reported 1.0.0. A new ClusterOperator starts without a version.
  await admin.delete(R.clusterOperators, 'cloud-controller-manager');
  const fresh = await eventually('the ClusterOperator recreated, still Degraded', async () => {
    const o = await co();
    return cond(o, 'Degraded')?.reason === 'CloudConfigMissing' ? o : undefined;
  }, 10_000);
  assert.equal(fresh.status!.versions, undefined);

  const cloudConf = 'url = http://127.0.0.1:8082\n';
  await admin.create(R.configMaps, { metadata: { name: 'cloud-provider-config', namespace: 'openshift-config' }, data: { config: cloudConf } });
  const d = await eventually('the CCM Deployment', deployment, 10_000);
  const labels = { 'k8s-app': 'local-cloud-controller-manager', 'infrastructure.openshift.io/cloud-controller-manager': 'local' };
  assert.deepEqual(d.spec!.selector.matchLabels, labels);
  assert.equal(d.spec!.replicas, 2);
  const pod = d.spec!.template.spec;
  assert.deepEqual(pod!.nodeSelector, { 'node-role.kubernetes.io/master': '' });
  assert.equal(pod!.serviceAccountName, 'cloud-controller-manager');
  for (const key of ['node.cloudprovider.kubernetes.io/uninitialized', 'node.kubernetes.io/not-ready', 'node-role.kubernetes.io/master']) {
    assert.ok(pod!.tolerations!.some((t: Obj) => t.key === key && t.operator === 'Exists' && t.effect === 'NoSchedule'), `tolerates ${key}`);
  }
  const [container] = pod!.containers;
  assert.equal(container.image, 'bosun.local/cloud-controller-manager:1.0.0');
  assert.deepEqual(container.command, [
    'bosun', 'cloud-controller-manager', '--cloud-provider', 'local', '--cloud-config', '/etc/cloud-controller-manager/config/cloud.conf',
    '--cloud-credentials-file', '/etc/cloud-credentials/credential',
    '--metrics-listen=$(HOST_IP):10258', '--tls-cert-file=/etc/tls/private/tls.crt', '--tls-private-key-file=/etc/tls/private/tls.key',
    '--cluster-name', 'bosun-test', '--leader-elect',
  ]);
  assert.deepEqual(container.volumeMounts, [
    { name: 'cloud-config', mountPath: '/etc/cloud-controller-manager/config', readOnly: true }, { name: 'metrics-tls', mountPath: '/etc/tls/private', readOnly: true },
    { name: 'cloud-credentials', mountPath: '/etc/cloud-credentials', readOnly: true },
  ]);
  // (The file modes not set are kube-apiserver's default, 0644.)
  assert.deepEqual(pod!.volumes, [
    { name: 'cloud-config', configMap: { name: 'cloud-conf', items: [{ key: 'cloud.conf', path: 'cloud.conf' }], defaultMode: 0o644 } }, { name: 'metrics-tls', secret: { secretName: 'cloud-controller-manager-tls', defaultMode: 0o644 } },
    { name: 'cloud-credentials', secret: { secretName: 'cloud-controller-manager-cloud-credentials', defaultMode: 0o400 } },
  ]);
  const metricsService = await admin.get(R.services, 'cloud-controller-manager', CCM_NAMESPACE);
  assert.equal(metricsService.metadata.annotations?.['service.beta.openshift.io/serving-cert-secret-name'], 'cloud-controller-manager-tls');
  assert.deepEqual((await admin.get(R.configMaps, 'cloud-conf', CCM_NAMESPACE)).data, { 'cloud.conf': cloudConf });
  const pdb = await admin.get(R.podDisruptionBudgets, 'local-cloud-controller-manager', CCM_NAMESPACE);
  assert.equal(pdb.spec!.minAvailable, 1);
  assert.deepEqual(pdb.spec!.selector!.matchLabels, labels);

  // Not rolled out: Progressing, no version, not Available while no replica is.
  const progressing = await eventually('Progressing towards 1.0.0', async () => {
    const o = await co();
    return cond(o, 'Progressing')?.reason === 'SyncingResources' && cond(o, 'Degraded')?.status === 'False' ? o : undefined;
  }, 10_000);
  assert.equal(cond(progressing, 'Available').status, 'False');
  assert.equal(cond(progressing, 'Available').reason, 'DeploymentUnavailable');
  assert.equal(progressing.status!.versions, undefined, 'no version before the rollout');

  // One replica available: Available, still Progressing, still no version.
  const setStatus = async (s: Obj) => {
    const live = await admin.get(R.deployments, 'local-cloud-controller-manager', CCM_NAMESPACE);
    await admin.mergePatch(R.deployments, live.metadata.name, CCM_NAMESPACE, { status: { observedGeneration: live.metadata.generation, ...s } }, 'status');
  };
  await setStatus({ replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 });
  const partly = await eventually('Available with one replica', async () => {
    const o = await co();
    return cond(o, 'Available')?.status === 'True' ? o : undefined;
  }, 10_000);
  assert.equal(cond(partly, 'Progressing').status, 'True');
  assert.match(cond(partly, 'Progressing').message, /2 of 2 updated, 1 available/);
  assert.equal(partly.status!.versions, undefined);

  await setStatus({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
  const done = await eventually('version 1.0.0 reported', async () => {
    const o = await co();
    return o?.status?.versions?.[0]?.version === '1.0.0' ? o : undefined;
  }, 10_000);
  assert.equal(cond(done, 'Progressing').status, 'False');
  assert.equal(cond(done, 'Available').reason, 'AsExpected');

  // An update: the new release's image rolls out; 1.0.0 stays reported until it has.
  const before = await deployment();
  version = '1.0.1';
  const images = await admin.get(R.configMaps, 'cloud-controller-manager-images', OPERATOR_NAMESPACE);
  await admin.mergePatch(R.configMaps, images.metadata.name, OPERATOR_NAMESPACE, { data: { 'images.json': images.data!['images.json'].replaceAll('1.0.0', '1.0.1') } });
  const updated = await eventually('the new image', async () => {
    const live = await deployment();
    return live?.spec!.template.spec!.containers[0].image === 'bosun.local/cloud-controller-manager:1.0.1' ? live : undefined;
  }, 10_000);
  assert.ok(updated.metadata.generation! > before!.metadata.generation!);
  const moving = await eventually('Progressing towards 1.0.1', async () => {
    const o = await co();
    return /towards operator: 1\.0\.1/.test(cond(o, 'Progressing')?.message ?? '') ? o : undefined;
  }, 10_000);
  assert.deepEqual(moving.status!.versions, [{ name: 'operator', version: '1.0.0' }], 'the old version until the rollout');
  await setStatus({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
  await eventually('version 1.0.1 reported', async () => (await co())?.status?.versions?.[0]?.version === '1.0.1', 10_000);

  // A changed cloud config reaches cloud-conf and rolls the pods (the template's config hash).
  const hash = (o: Obj | undefined) => o?.spec.template.metadata.annotations['operator.openshift.io/config-hash'];
  await admin.mergePatch(R.configMaps, 'cloud-provider-config', 'openshift-config', { data: { config: 'url = http://127.0.0.1:8083\n' } });
  await eventually('cloud-conf follows', async () => (await admin.get(R.configMaps, 'cloud-conf', CCM_NAMESPACE)).data!['cloud.conf'] === 'url = http://127.0.0.1:8083\n', 10_000);
  await eventually('the pods roll', async () => hash(await deployment()) !== hash(updated), 10_000);
});

test('run outside its Deployment (followDeployment), the operator takes its version from the Deployment the CVO applied', async () => {
  // The payload's operator: the one above stops, one with the admin's credentials takes over.
  stop.abort();
  await running;
  stop = new AbortController();
  const { name, lease } = CLOUD_CONTROLLER_MANAGER_OPERATOR;
  const manager = new Manager({ name, kubeconfig: loadKubeConfig(api.kubeconfigPath), leaderElection: { ...lease, identity: 'in-process', leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 } });
  addCloudControllerManagerOperator(manager, { releaseVersion: 'not-this-one', followDeployment: true });
  running = manager.start(stop.signal);

  // The CVO applies 1.0.2: the operator's Deployment and the images it names.
  const own = await admin.get(R.deployments, 'cluster-cloud-controller-manager-operator', OPERATOR_NAMESPACE);
  const hostIp = { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } };
  assert.deepEqual(own.spec!.template.spec!.containers[0].env, [{ name: 'RELEASE_VERSION', value: '1.0.0' }, hostIp], 'the payload\'s Deployment, rendered for 1.0.0');
  const containers = own.spec!.template.spec!.containers.map((c: Obj) => ({ ...c, env: [{ name: 'RELEASE_VERSION', value: '1.0.2' }, hostIp] }));
  await admin.mergePatch(R.deployments, own.metadata.name, OPERATOR_NAMESPACE, { spec: { template: { spec: { containers } } } });
  const images = await admin.get(R.configMaps, 'cloud-controller-manager-images', OPERATOR_NAMESPACE);
  await admin.mergePatch(R.configMaps, images.metadata.name, OPERATOR_NAMESPACE, { data: { 'images.json': images.data!['images.json'].replaceAll('1.0.1', '1.0.2') } });
  await eventually('Progressing towards 1.0.2', async () => /towards operator: 1\.0\.2/.test(cond(await co(), 'Progressing')?.message ?? ''), 20_000);
  const live = await eventually('the 1.0.2 image', async () => {
    const d = await deployment();
    return d?.spec!.template.spec!.containers[0].image === 'bosun.local/cloud-controller-manager:1.0.2' ? d : undefined;
  }, 10_000);
  await admin.mergePatch(R.deployments, live.metadata.name, CCM_NAMESPACE, { status: { observedGeneration: live.metadata.generation, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 } }, 'status');
  await eventually('version 1.0.2 reported', async () => (await co())?.status?.versions?.[0]?.version === '1.0.2', 10_000);
});
