// The Cluster API CRDs (release-payload/manifests/0000_30_cluster-api_01_*): generated from
// src/capi/crds.ts without drift, structural, served by the embedded API server with Cluster API's
// names, short names, category, printer columns and scale subresources — so `kubectl get
// machines`, `kubectl get ma,ms,md,mhc`, `kubectl get cluster-api` and `kubectl scale
// machinedeployment` behave as with Cluster API — and Cluster API v1beta2 YAML loads unchanged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { structuralProblems } from '../../src/apiserver/crds/structural.js';
import { renderSource } from '../../src/cvo/payload/build.js';
import { includeManifest } from '../../src/cvo/payload/inclusion.js';
import { parseManifestFile } from '../../src/cvo/payload/manifest.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { CLUSTER_API_CRDS, crdYaml, webhooksYaml } from '../../src/capi/crds.js';
import { WEBHOOKS_FILE } from '../../src/capi/webhooks.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { CLUSTER, NS, installCrds, machineDeployment, machineSpec, payloadFile } from './capi-fixture.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  await installCrds(api.kubectlOk);
  await api.kubectlOk(['create', 'namespace', NS]);
});
after(() => api?.stop());

test('the payload files are what src/capi/crds.ts generates (npx tsx scripts/generate-capi-crds.ts)', () => {
  for (const { file, crd } of CLUSTER_API_CRDS) assert.equal(payloadFile(file), crdYaml(crd), `${file} drifted from src/capi/crds.ts`);
  assert.equal(payloadFile(WEBHOOKS_FILE), webhooksYaml(), `${WEBHOOKS_FILE} drifted from src/capi/webhooks.ts`);
});

test('every CRD is structural, namespaced, v1beta2 as the storage version, in the cluster-api category', () => {
  assert.deepEqual(CLUSTER_API_CRDS.map(({ crd }) => crd.spec.names.kind), ['Cluster', 'Machine', 'MachineSet', 'MachineDeployment', 'MachineHealthCheck', 'LocalCluster', 'LocalMachine', 'LocalMachineTemplate', 'KubeadmConfig', 'KubeadmConfigTemplate', 'KubeadmControlPlane']);
  for (const { file, crd } of CLUSTER_API_CRDS) {
    const parsed = parseYaml(payloadFile(file));
    assert.deepEqual(structuralProblems(parsed.spec.versions[0].schema.openAPIV3Schema), [], file);
    assert.equal(parsed.spec.scope, 'Namespaced');
    assert.deepEqual(parsed.spec.versions.map((v: any) => [v.name, v.served, v.storage]), [['v1beta2', true, true]]);
    assert.deepEqual(parsed.spec.names.categories, ['cluster-api']);
    assert.equal(parsed.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
  }
  const infra = CLUSTER_API_CRDS.filter(({ crd }) => crd.spec.group !== 'cluster.x-k8s.io');
  for (const { crd } of infra) assert.equal(crd.metadata.labels!['cluster.x-k8s.io/v1beta2'], 'v1beta2', 'the provider contract label');
});

test('short names and subresources are Cluster API\'s', async () => {
  const discovery = JSON.parse((await api.request('GET', '/apis/cluster.x-k8s.io/v1beta2')).text);
  const byName = Object.fromEntries(discovery.resources.map((r: any) => [r.name, r]));
  assert.deepEqual(byName.machines.shortNames, ['ma']);
  assert.deepEqual(byName.machinesets.shortNames, ['ms']);
  assert.deepEqual(byName.machinedeployments.shortNames, ['md']);
  assert.deepEqual(byName.machinehealthchecks.shortNames, ['mhc', 'mhcs']);
  assert.deepEqual(byName.clusters.shortNames, ['cl']);
  for (const r of ['machines', 'machinesets', 'machinedeployments', 'machinehealthchecks', 'clusters']) assert.ok(byName[`${r}/status`], `${r}/status`);
  assert.ok(byName['machinesets/scale'] && byName['machinedeployments/scale']);
  assert.equal(byName['machines/scale'], undefined, 'a Machine has no scale subresource');
});

test('Cluster API v1beta2 objects load unchanged, and kubectl shows Cluster API\'s columns', async () => {
  const machine = {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name: 'worker-a', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: machineSpec({ providerID: 'local://i-0123456789abcdef0', failureDomain: 'local-a', deletion: { nodeDrainTimeoutSeconds: 300 } }),
  };
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify(machine));
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify(machineDeployment('workers', 2, {
    rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
    deletion: { order: 'Oldest' },
  })));
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineHealthCheck', metadata: { name: 'workers', namespace: NS },
    spec: {
      clusterName: CLUSTER, selector: { matchLabels: { pool: 'workers' } },
      checks: { nodeStartupTimeoutSeconds: 600, unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }, { type: 'Ready', status: 'False', timeoutSeconds: 300 }] },
      remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '40%' } },
    },
  }));
  const stored = JSON.parse(await api.kubectlOk(['-n', NS, 'get', 'machine', 'worker-a', '-o', 'json']));
  assert.deepEqual(stored.spec, machine.spec, 'nothing pruned');
  const md = JSON.parse(await api.kubectlOk(['-n', NS, 'get', 'md', 'workers', '-o', 'json']));
  assert.deepEqual(md.spec.rollout.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });

  const header = (out: string) => out.split('\n')[0].split(/\s{2,}/);
  assert.deepEqual(header(await api.kubectlOk(['-n', NS, 'get', 'machines'])), ['NAME', 'CLUSTER', 'NODE NAME', 'FAILURE DOMAIN', 'READY', 'AVAILABLE', 'UP-TO-DATE', 'PHASE', 'AGE', 'VERSION']);
  const wide = await api.kubectlOk(['-n', NS, 'get', 'ma', '-o', 'wide']);
  assert.deepEqual(header(wide), ['NAME', 'CLUSTER', 'NODE NAME', 'PROVIDER ID', 'FAILURE DOMAIN', 'READY', 'AVAILABLE', 'UP-TO-DATE', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'PAUSED', 'PHASE', 'AGE', 'VERSION']);
  assert.match(wide.split('\n')[1], /^worker-a\s+local\s+local:\/\/i-0123456789abcdef0\s+/);
  assert.deepEqual(header(await api.kubectlOk(['-n', NS, 'get', 'md'])), ['NAME', 'CLUSTER', 'AVAILABLE', 'DESIRED', 'CURRENT', 'READY', 'AVAILABLE', 'UP-TO-DATE', 'PHASE', 'AGE', 'VERSION']);
  assert.deepEqual(header(await api.kubectlOk(['-n', NS, 'get', 'mhc'])), ['NAME', 'CLUSTER', 'REPLICAS', 'HEALTHY', 'AGE']);
  const all = await api.kubectlOk(['-n', NS, 'get', 'cluster-api', '-o', 'name']);
  assert.deepEqual(all.trim().split('\n').sort(), ['machine.cluster.x-k8s.io/worker-a', 'machinedeployment.cluster.x-k8s.io/workers', 'machinehealthcheck.cluster.x-k8s.io/workers']);
});

test('kubectl scale machinedeployment goes through the scale subresource', async () => {
  assert.match(await api.kubectlOk(['-n', NS, 'scale', 'machinedeployment', 'workers', '--replicas', '3']), /machinedeployment.cluster.x-k8s.io\/workers scaled/);
  assert.equal(JSON.parse(await api.kubectlOk(['-n', NS, 'get', 'md', 'workers', '-o', 'json'])).spec.replicas, 3);
});

test('bad input is refused with the field that is wrong', async () => {
  // @ts-expect-error: an order the CRD refuses (the type does too)
  const bad = await api.kubectl(['apply', '-f', '-'], { input: JSON.stringify(machineDeployment('bad', -1, { deletion: { order: 'Sideways' } })) });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /spec.replicas/);
  assert.match(bad.stderr, /spec.deletion.order/);
  const noRef = await api.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { name: 'x', namespace: NS }, spec: { clusterName: CLUSTER, bootstrap: { dataSecretName: 'w' } } }) });
  assert.notEqual(noRef.code, 0);
  assert.match(noRef.stderr, /spec.infrastructureRef: Required value/);
});

test('the payload: the namespace, CRDs, controllers, their RBAC and ClusterOperator, on the default feature set (no gate)', () => {
  const dir = join(repositoryRoot, 'release-payload/manifests');
  const manifests = readdirSync(dir).filter((f) => f.startsWith('0000_30_cluster-api_')).flatMap((file) => {
    const { manifests: parsed, problems } = parseManifestFile(file, renderSource(file, payloadFile(file), '1.0.0'));
    assert.deepEqual(problems, [], file);
    return parsed;
  });
  const included = manifests.filter((m) => includeManifest(m, { enabledFeatureGates: new Set(), featureSet: '' }).included).map((m) => `${m.gvk.kind}/${m.object.metadata.name}`);
  assert.deepEqual(included.sort(), [
    'Namespace/openshift-cluster-api', ...CLUSTER_API_CRDS.map(({ crd }) => `CustomResourceDefinition/${crd.metadata.name}`),
    'ClusterOperator/cluster-api', 'ClusterRole/cluster-api-controllers', 'ClusterRoleBinding/cluster-api-controllers', 'Deployment/cluster-api-controllers', 'ServiceAccount/cluster-api-controllers',
    'ClusterRoleBinding/cluster-api-controllers-auth-delegator', 'Service/capi-controllers', 'CredentialsRequest/openshift-cluster-api',
    'MutatingWebhookConfiguration/capi-mutating-webhook-configuration', 'ValidatingWebhookConfiguration/capi-validating-webhook-configuration',
  ].sort());
  const deployment = manifests.find((m) => m.gvk.kind === 'Deployment')!.object as any;
  assert.deepEqual(deployment.spec.template.spec.containers[0].args, [
    'cluster-api-controllers', '--cloud-config-map', 'openshift-config/cloud-provider-config', '--cloud-credentials-file=/etc/cloud-credentials/credential',
    '--metrics-listen=$(POD_IP):8443', '--tls-cert-file=/etc/tls/private/tls.crt', '--tls-private-key-file=/etc/tls/private/tls.key',
    '--webhook-listen=$(POD_IP):9443', '--webhook-cert-dir=/etc/tls/private',
  ]);
  assert.equal(deployment.spec.template.spec.containers[0].image, 'bosun.local/cluster-api-controllers:1.0.0');
});
