// The kubeadm providers' CRDs served by the embedded API server with real kubectl: the manifests
// `bosun cluster generate` prints apply (server-side dry run) as Cluster API's quick start does,
// `kubectl get kcp` shows Cluster API's columns, the scale subresource works, and what OpenAPI can
// refuse is refused with the field that is wrong.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateCluster } from '../../src/cli/cluster-generate.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { installCrds } from './capi-fixture.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  await installCrds(api.kubectlOk);
});
after(() => api?.stop());

const generated = (workers = 2) => generateCluster('dev', { kubernetesVersion: 'v1.33.1', controlPlaneMachineCount: 3, workerMachineCount: workers, targetNamespace: 'default', flavor: '' }, {});

test('the generated quick-start manifests apply unchanged (server-side dry run)', async () => {
  const out = await api.kubectlOk(['apply', '--dry-run=server', '-f', '-'], generated());
  assert.deepEqual(out.trim().split('\n'), [
    'cluster.cluster.x-k8s.io/dev created (server dry run)',
    'localcluster.infrastructure.cluster.x-k8s.io/dev created (server dry run)',
    'localmachinetemplate.infrastructure.cluster.x-k8s.io/dev-control-plane created (server dry run)',
    'kubeadmcontrolplane.controlplane.cluster.x-k8s.io/dev-control-plane created (server dry run)',
    'localmachinetemplate.infrastructure.cluster.x-k8s.io/dev-md-0 created (server dry run)',
    'kubeadmconfigtemplate.bootstrap.cluster.x-k8s.io/dev-md-0 created (server dry run)',
    'machinedeployment.cluster.x-k8s.io/dev-md-0 created (server dry run)',
  ]);
});

test('kubectl get kcp shows Cluster API\'s columns; the scale subresource scales it', async () => {
  await api.kubectlOk(['apply', '-f', '-'], generated());
  await api.kubectlOk(['label', 'kcp', 'dev-control-plane', 'cluster.x-k8s.io/cluster-name=dev']);
  const table = await api.kubectlOk(['get', 'kcp']);
  const [header, row] = table.trim().split('\n');
  assert.deepEqual(header.split(/\s{2,}/), ['NAME', 'CLUSTER', 'AVAILABLE', 'DESIRED', 'CURRENT', 'READY', 'AVAILABLE', 'UP-TO-DATE', 'INITIALIZED', 'AGE', 'VERSION']);
  assert.match(row, /^dev-control-plane\s+dev\s+3\s+.*v1\.33\.1$/);
  await api.kubectlOk(['scale', 'kcp', 'dev-control-plane', '--replicas=5']);
  assert.equal(await api.kubectlOk(['get', 'kubeadmcontrolplane', 'dev-control-plane', '-o', 'jsonpath={.spec.replicas}']), '5');
  // The KubeadmConfigTemplate without a spec was stored as written.
  assert.equal(await api.kubectlOk(['get', 'kubeadmconfigtemplates', 'dev-md-0', '-o', 'jsonpath={.spec}']), '');
  const discovery = JSON.parse((await api.request('GET', '/apis/controlplane.cluster.x-k8s.io/v1beta2')).text);
  const kcp = discovery.resources.find((r: { name: string }) => r.name === 'kubeadmcontrolplanes');
  assert.deepEqual(kcp.shortNames, ['kcp']);
  assert.deepEqual(kcp.categories, ['cluster-api']);
});

test('bad input is refused with the field that is wrong: maxSurge 2, replicas 0, format of another kind, no version', async () => {
  const kcp = (spec: Record<string, unknown>) => JSON.stringify({
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlane', metadata: { name: 'bad', namespace: 'default' },
    spec: { version: 'v1.33.1', machineTemplate: { spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 'x' } } }, ...spec },
  });
  const surge = await api.kubectl(['apply', '-f', '-'], { input: kcp({ rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } } } }) });
  assert.notEqual(surge.code, 0);
  assert.match(surge.stderr, /spec\.rollout\.strategy\.rollingUpdate\.maxSurge: Unsupported value: 2: supported values: 0, 1/);
  const zero = await api.kubectl(['apply', '-f', '-'], { input: kcp({ replicas: 0 }) });
  assert.match(zero.stderr, /spec\.replicas: Invalid value: 0: spec\.replicas in body should be greater than or equal to 1/);
  const noVersion = await api.kubectl(['apply', '-f', '-'], { input: kcp({ version: undefined }) });
  assert.match(noVersion.stderr, /spec\.version: Required value/);
  const format = await api.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfig', metadata: { name: 'bad', namespace: 'default' }, spec: { format: 'cloud-init' } }) });
  assert.match(format.stderr, /spec\.format: Unsupported value: "cloud-init": supported values: "cloud-config", "ignition"/);
  assert.equal((await api.kubectl(['get', 'kcp', 'bad'])).code, 1, 'nothing was stored');
});
