// test: shared-addresses (starts a local cloud)
// Cluster API's admission webhooks, served by the controllers' process (HTTPS on loopback) and
// called by the embedded API server through the webhook configurations: Cluster API's quick-start
// YAML — no MachineDeployment selector, empty infrastructure specs, a KubeadmConfigTemplate with
// only a join configuration — applies as it is with the real kubectl and is stored with Cluster
// API's defaults; what Cluster API refuses is refused with a message naming the field, on create,
// update and server-side dry run, and nothing is stored.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { CLUSTER_API_WEBHOOKS, jsonPatch, webhookConfigurations, webhookPath } from '../../src/capi/webhooks.js';
import { applyJsonPatch } from '../../src/apiserver/apply/patch.js';
import { resources } from '../../src/kube/index.js';
import { startCapiCluster, type CapiCluster } from './capi-fixture.js';

let c: CapiCluster;
before(async () => {
  c = await startCapiCluster({ webhooks: true });
});
after(() => c?.close());

const NAME = 'capi-quickstart';

/** Cluster API's quick start (v1beta2) with only the infrastructure kinds replaced by the local provider's. */
const QUICK_START = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: ${NAME}
  namespace: default
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
    serviceDomain: cluster.local
    services:
      cidrBlocks: ["10.128.0.0/12"]
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: KubeadmControlPlane
    name: ${NAME}-control-plane
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: LocalCluster
    name: ${NAME}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: LocalCluster
metadata:
  name: ${NAME}
  namespace: default
spec: {}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: LocalMachineTemplate
metadata:
  name: ${NAME}-control-plane
  namespace: default
spec:
  template:
    spec: {}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: ${NAME}-control-plane
  namespace: default
spec:
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        certSANs: [localhost, 127.0.0.1, 0.0.0.0, host.docker.internal]
    initConfiguration:
      nodeRegistration:
        kubeletExtraArgs:
          - name: eviction-hard
            value: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
    joinConfiguration:
      nodeRegistration:
        kubeletExtraArgs:
          - name: eviction-hard
            value: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
  machineTemplate:
    spec:
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: LocalMachineTemplate
        name: ${NAME}-control-plane
  replicas: 3
  version: v1.33.0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: LocalMachineTemplate
metadata:
  name: ${NAME}-md-0
  namespace: default
spec:
  template:
    spec: {}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: ${NAME}-md-0
  namespace: default
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          kubeletExtraArgs:
            - name: eviction-hard
              value: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: ${NAME}-md-0
  namespace: default
spec:
  clusterName: ${NAME}
  replicas: 2
  template:
    spec:
      bootstrap:
        configRef:
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: KubeadmConfigTemplate
          name: ${NAME}-md-0
      clusterName: ${NAME}
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: LocalMachineTemplate
        name: ${NAME}-md-0
      version: v1.33.0
`;

const get = async <T>(kind: string, name: string): Promise<T> => JSON.parse(await c.kubectlOk(['-n', 'default', 'get', kind, name, '-o', 'json'])) as T;

/** kubectl's refusal: exits non-zero with stderr matching every pattern. */
async function refused(args: string[], input: string | undefined, ...patterns: RegExp[]): Promise<string> {
  const r = await c.kubectl(args, input);
  assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should have been refused; it printed ${r.stdout}`);
  for (const p of patterns) assert.match(r.stderr, p);
  return r.stderr;
}

test('the webhook configurations list every kind at Cluster API\'s paths', async () => {
  const shown = await c.kubectlOk(['get', 'mutatingwebhookconfigurations,validatingwebhookconfigurations']);
  assert.match(shown, new RegExp(`capi-mutating-webhook-configuration\\s+${CLUSTER_API_WEBHOOKS.length}\\s`));
  assert.match(shown, new RegExp(`capi-validating-webhook-configuration\\s+${CLUSTER_API_WEBHOOKS.length + 1}\\s`), 'and the KubeadmControlPlane scale validator');
  const [mutating] = webhookConfigurations();
  const md = mutating.webhooks!.find((w) => w.name === 'default.machinedeployment.cluster.x-k8s.io')!;
  assert.equal(md.clientConfig.service?.path, '/mutate-cluster-x-k8s-io-v1beta2-machinedeployment');
  assert.equal(webhookPath('validate', { group: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane' }), '/validate-controlplane-cluster-x-k8s-io-v1beta2-kubeadmcontrolplane');
});

test('Cluster API\'s quick start applies as it is and is stored with Cluster API\'s defaults', async () => {
  const out = await c.kubectlOk(['apply', '-f', '-'], QUICK_START);
  assert.equal(out.trim().split('\n').length, 7, out);

  const md = await get<api.MachineDeployment>('machinedeployment', `${NAME}-md-0`);
  const wanted = { 'cluster.x-k8s.io/cluster-name': NAME, 'cluster.x-k8s.io/deployment-name': `${NAME}-md-0` };
  assert.deepEqual(md.spec.selector.matchLabels, wanted);
  assert.deepEqual(md.spec.template.metadata?.labels, wanted);
  assert.equal(md.metadata.labels?.['cluster.x-k8s.io/cluster-name'], NAME);

  const kcp = await get<api.KubeadmControlPlane>('kcp', `${NAME}-control-plane`);
  assert.equal(kcp.spec.kubeadmConfigSpec?.format, 'ignition');
  assert.deepEqual(kcp.spec.rollout?.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } });

  for (const name of [`${NAME}-control-plane`, `${NAME}-md-0`]) {
    assert.equal((await get<api.LocalMachineTemplate>('localmachinetemplate', name)).spec.template.spec?.instanceType, 'local.medium');
  }
  assert.equal((await get<api.KubeadmConfigTemplate>('kubeadmconfigtemplate', `${NAME}-md-0`)).spec?.template?.spec?.format, 'ignition');
  // An empty LocalCluster is valid; its controller fills in the endpoint from the cloud.
  assert.ok(await get<api.LocalCluster>('localcluster', NAME));

  // Applying it again changes nothing: the defaults are what is stored.
  const again = await c.kubectlOk(['apply', '-f', '-'], QUICK_START);
  assert.ok(again.trim().split('\n').every((l) => l.endsWith(' unchanged')), again);
});

test('defaults: a `v` before versions, replicas 1, a MachineSet\'s own selector, a Machine\'s cluster label', async () => {
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlane', metadata: { name: 'bare', namespace: 'default' },
        spec: { version: '1.33.0', machineTemplate: { spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: `${NAME}-control-plane` } } } } },
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet', metadata: { name: 'loose', namespace: 'default' },
        spec: { clusterName: 'other', template: { spec: { clusterName: 'other', version: '1.33.0', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: `${NAME}-md-0` } } } } },
      { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', metadata: { name: 'empty', namespace: 'default' } },
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { name: 'single', namespace: 'default' },
        spec: { clusterName: 'other', version: '1.33.0', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name: 'single' } } },
    ],
  }));
  const kcp = await get<api.KubeadmControlPlane>('kcp', 'bare');
  assert.equal(kcp.spec.version, 'v1.33.0');
  assert.equal(kcp.spec.replicas, 1);
  const ms = await get<api.MachineSet>('machineset', 'loose');
  assert.deepEqual(ms.spec.selector.matchLabels, { 'cluster.x-k8s.io/cluster-name': 'other', 'cluster.x-k8s.io/set-name': 'loose' });
  assert.equal(ms.spec.replicas, 1);
  assert.equal(ms.spec.template.spec.version, 'v1.33.0');
  assert.equal((await get<api.KubeadmConfigTemplate>('kubeadmconfigtemplate', 'empty')).spec, undefined, 'a KubeadmConfigTemplate without a spec stays without');
  const machine = await get<api.Machine>('machine', 'single');
  assert.equal(machine.metadata.labels?.['cluster.x-k8s.io/cluster-name'], 'other');
  assert.equal(machine.spec.version, 'v1.33.0');
});

const kcpYaml = (name: string, extra: string) => `
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: ${name}
  namespace: default
spec:
  version: v1.33.0
  machineTemplate:
    spec:
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: LocalMachineTemplate
        name: ${NAME}-control-plane
${extra}`;

test('what Cluster API refuses is refused with the field named, on create and on a server-side dry run, and nothing is stored', async () => {
  const even = kcpYaml('even', '  replicas: 2\n');
  for (const args of [['apply', '-f', '-'], ['apply', '--dry-run=server', '-f', '-']]) {
    // kubectl prints the Invalid status the webhook answered as kubectl prints any: the kind, the name, the fields.
    await refused(args, even, /The KubeadmControlPlane "even" is invalid: spec\.replicas: Forbidden: cannot be an even number when etcd is stacked/);
  }
  const raw = await c.kube.create(resources.kubeadmControlPlanes, { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlane', metadata: { name: 'even', namespace: 'default' }, spec: { replicas: 4, version: 'v1.33.0', machineTemplate: { spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 'x' } } } } }).then(() => undefined, (e: Error) => e);
  assert.match(String(raw?.message), /admission webhook "validation\.kubeadmcontrolplane\.controlplane\.cluster\.x-k8s\.io" denied the request: KubeadmControlPlane\.controlplane\.cluster\.x-k8s\.io "even" is invalid: spec\.replicas: Forbidden: cannot be an even number when etcd is stacked/);
  assert.notEqual((await c.kubectl(['-n', 'default', 'get', 'kcp', 'even'])).code, 0, 'nothing stored');
  await refused(['apply', '-f', '-'], kcpYaml('surge', '  replicas: 3\n  rollout:\n    strategy:\n      type: RollingUpdate\n      rollingUpdate:\n        maxSurge: 2\n'), /spec\.rollout\.strategy\.rollingUpdate\.maxSurge/);
  await refused(['apply', '-f', '-'], kcpYaml('few', '  replicas: 1\n  rollout:\n    strategy:\n      type: RollingUpdate\n      rollingUpdate:\n        maxSurge: 0\n'), /spec\.rollout\.strategy\.rollingUpdate: Required value: when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3/);
  await refused(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', metadata: { name: 'cloudy', namespace: 'default' }, spec: { template: { spec: { format: 'cloud-config' } } },
  }), /The KubeadmConfigTemplate "cloudy" is invalid: spec\.template\.spec\.format: Unsupported value: "cloud-config"/, /bosun's machines boot from Ignition/);
  await refused(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', metadata: { name: 'mismatch', namespace: 'default' },
    spec: { clusterName: NAME, selector: { matchLabels: { pool: 'a' } }, template: { metadata: { labels: { pool: 'b' } }, spec: { clusterName: NAME, bootstrap: { dataSecretName: 'x' }, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: `${NAME}-md-0` } } } },
  }), /spec\.template\.metadata\.labels: Invalid value: .*must match spec\.selector/);
});

test('kubectl scale kcp: an even number while etcd is stacked is refused by the scale validator, none by the schema; an odd one is taken', async () => {
  await c.kubectlOk(['apply', '-f', '-'], kcpYaml('scaled', '  replicas: 3\n'));
  await refused(['-n', 'default', 'scale', 'kcp', 'scaled', '--replicas=4'], undefined,
    /^Error from server \(Forbidden\): admission webhook "validation-scale\.kubeadmcontrolplane\.controlplane\.cluster\.x-k8s\.io" denied the request: replicas cannot be an even number when etcd is stacked/);
  // None: the CRD's schema (minimum 1) refuses it before any webhook, as kube-apiserver orders them.
  await refused(['-n', 'default', 'scale', 'kcp', 'scaled', '--replicas=0'], undefined, /The KubeadmControlPlane "scaled" is invalid: spec\.replicas: Invalid value: 0/);
  assert.equal((await get<api.KubeadmControlPlane>('kcp', 'scaled')).spec.replicas, 3, 'nothing changed');
  assert.match(await c.kubectlOk(['-n', 'default', 'scale', 'kcp', 'scaled', '--replicas=5']), /kubeadmcontrolplane\.controlplane\.cluster\.x-k8s\.io\/scaled scaled/);
  assert.equal((await get<api.KubeadmControlPlane>('kcp', 'scaled')).spec.replicas, 5);
  // With external etcd an even number keeps no quorum at risk: the validator read the object to know.
  await c.kubectlOk(['apply', '-f', '-'], kcpYaml('external', '  replicas: 3\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      etcd:\n        external:\n          endpoints: ["https://127.0.0.1:2379"]\n          caFile: /ca\n          certFile: /cert\n          keyFile: /key\n'));
  await c.kubectlOk(['-n', 'default', 'scale', 'kcp', 'external', '--replicas=4']);
  assert.equal((await get<api.KubeadmControlPlane>('kcp', 'external')).spec.replicas, 4);
  await c.kubectlOk(['-n', 'default', 'delete', 'kcp', 'scaled', 'external']);
});

test('updates Cluster API forbids: local and external etcd swapped, a template\'s spec, a deployment\'s cluster', async () => {
  await c.kubectlOk(['apply', '-f', '-'], kcpYaml('etcd', '  replicas: 3\n'));
  const external = kcpYaml('etcd', '  replicas: 3\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      etcd:\n        external:\n          endpoints: ["https://127.0.0.1:2379"]\n          caFile: /ca\n          certFile: /cert\n          keyFile: /key\n');
  await refused(['apply', '-f', '-'], external, /spec\.kubeadmConfigSpec\.clusterConfiguration\.etcd\.external: Forbidden: cannot change between external and local etcd/);
  await refused(['-n', 'default', 'patch', 'localmachinetemplate', `${NAME}-md-0`, '--type=merge', '-p', '{"spec":{"template":{"spec":{"instanceType":"local.large"}}}}'],
    undefined, /spec\.template\.spec: Forbidden: LocalMachineTemplate spec\.template\.spec field is immutable/);
  await refused(['-n', 'default', 'patch', 'machinedeployment', `${NAME}-md-0`, '--type=merge', '-p', '{"spec":{"clusterName":"elsewhere","template":{"spec":{"clusterName":"elsewhere"}}}}'],
    undefined, /spec\.clusterName: Forbidden: field is immutable/);
  // Scaling goes through (the scale subresource is not a webhook's), and the selector stays.
  await c.kubectlOk(['-n', 'default', 'scale', 'machinedeployment', `${NAME}-md-0`, '--replicas=0']);
  assert.equal((await get<api.MachineDeployment>('machinedeployment', `${NAME}-md-0`)).spec.replicas, 0);
});

test('the patch the mutating webhooks answer turns the object into its defaulted self', () => {
  const from = { metadata: { name: 'a', labels: { x: '1', 'a/b': '2' } }, spec: { list: [1, 2], gone: true } };
  const to = { metadata: { name: 'a', labels: { x: '1', 'a/b': '3', y: '4' } }, spec: { list: [1, 2, 3], added: { deep: 1 } } };
  assert.deepEqual(applyJsonPatch(from, jsonPatch(from, to)), to);
  assert.deepEqual(jsonPatch(to, to), []);
});
