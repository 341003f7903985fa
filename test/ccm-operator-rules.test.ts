// The cloud-controller-manager operator's pure rules (src/ccm-operator/operator): which platforms
// get a CCM — on Infrastructure objects shaped as OpenShift clusters have them (AWS, None,
// External), which also load unchanged through the payload's Infrastructure CRD —, where the cloud
// config comes from, and the ClusterOperator status for each state of the CCM's rollout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type * as api from '../src/api/index.js';
import { KubeClient, loadKubeConfig, resources as R } from '../src/kube/index.js';
import { cloudConfigFor, platformDecision } from '../src/ccm-operator/operator/platform.js';
import { operatorStatus } from '../src/ccm-operator/operator/status.js';
import { ccmOperands, rolledOut } from '../src/ccm-operator/operator/operands.js';
import { startTestApiServer } from './helpers/apiserver.js';

const infra = (spec: api.Infrastructure['spec'], status: NonNullable<api.Infrastructure['status']>): api.Infrastructure => ({ apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec, status });

/** As OpenShift 4.x clusters report them (openshift/api config/v1 types_infrastructure.go). */
const OPENSHIFT: Record<string, api.Infrastructure> = {
  aws: infra(
    { cloudConfig: { key: 'config', name: 'cloud-provider-config' }, platformSpec: { type: 'AWS', aws: {} } },
    {
      apiServerInternalURI: 'https://api-int.ci-ln-x.aws.example.com:6443', apiServerURL: 'https://api.ci-ln-x.aws.example.com:6443',
      controlPlaneTopology: 'HighlyAvailable', cpuPartitioning: 'None', etcdDiscoveryDomain: '', infrastructureName: 'ci-ln-x-7x2kq',
      infrastructureTopology: 'HighlyAvailable', platform: 'AWS',
      platformStatus: { type: 'AWS', aws: { region: 'us-east-1', resourceTags: [{ key: 'team', value: 'ci' }] } },
    },
  ),
  none: infra(
    { cloudConfig: { name: '' }, platformSpec: { type: 'None' } },
    { apiServerInternalURI: 'https://api-int.sno.example.com:6443', apiServerURL: 'https://api.sno.example.com:6443', controlPlaneTopology: 'SingleReplica', etcdDiscoveryDomain: '', infrastructureName: 'sno-2v9xk', infrastructureTopology: 'SingleReplica', platform: 'None', platformStatus: { type: 'None' } },
  ),
  oci: infra(
    { cloudConfig: { name: '' }, platformSpec: { type: 'External', external: { platformName: 'oci' } } },
    { apiServerInternalURI: 'https://api-int.oci.example.com:6443', apiServerURL: 'https://api.oci.example.com:6443', controlPlaneTopology: 'HighlyAvailable', etcdDiscoveryDomain: '', infrastructureName: 'oci-8k2lz', infrastructureTopology: 'HighlyAvailable', platform: 'External', platformStatus: { type: 'External', external: { cloudControllerManager: { state: 'External' } } } },
  ),
  local: infra(
    { cloudConfig: { name: 'cloud-provider-config', key: 'config' }, platformSpec: { type: 'External', external: { platformName: 'local' } } },
    { infrastructureName: 'bosun-local', controlPlaneTopology: 'HighlyAvailable', platform: 'External', platformStatus: { type: 'External', external: { cloudControllerManager: { state: 'External' } } } },
  ),
};

test('platformDecision: only External "local" asking for an external CCM gets one', () => {
  const cases: Array<[string, api.Infrastructure | undefined, RegExp | { provider: string }]> = [
    ['no Infrastructure', undefined, /^$/],
    ['AWS', OPENSHIFT.aws, /^platform AWS has no cloud controller manager in bosun .*; no cloud controller manager is deployed$/],
    ['None', OPENSHIFT.none, /^platform None has no cloud controller manager/],
    ['External oci', OPENSHIFT.oci, /^platform External "oci" has no cloud controller manager in bosun \(known: local\)/],
    ['External local', OPENSHIFT.local, { provider: 'local' }],
    ['External local, CCM state None', { ...OPENSHIFT.local, status: { platformStatus: { type: 'External', external: { cloudControllerManager: { state: 'None' } } } } }, /does not ask for an external cloud controller manager \(.*state is "None", not "External"\)/],
    ['External local, no CCM state', { ...OPENSHIFT.local, status: { platformStatus: { type: 'External' } } }, /state is unset/],
    ['only the deprecated status.platform', { status: { platform: 'AWS' } } as api.Infrastructure, /^platform AWS /],
  ];
  for (const [name, object, want] of cases) {
    const got = platformDecision(object);
    if (want instanceof RegExp) {
      if (object === undefined) assert.equal(got, undefined, name);
      else assert.match(got && !got.deploy ? got.message : JSON.stringify(got), want, name);
    } else assert.deepEqual(got, { deploy: true, provider: want.provider, name: 'local' }, name);
  }
});

test('cloudConfigFor: openshift-config-managed/kube-cloud-config first, else the ConfigMap spec.cloudConfig names', () => {
  const maps = (entries: Record<string, { data: Record<string, string> }>) => (ns: string, name: string) => entries[`${ns}/${name}`] as api.ConfigMap | undefined;
  const local = OPENSHIFT.local;
  assert.deepEqual(cloudConfigFor(local, maps({ 'openshift-config/cloud-provider-config': { data: { config: 'url = u' } } })), { text: 'url = u', from: 'ConfigMap openshift-config/cloud-provider-config key config' });
  assert.deepEqual(
    cloudConfigFor(local, maps({ 'openshift-config-managed/kube-cloud-config': { data: { 'cloud.conf': 'managed' } }, 'openshift-config/cloud-provider-config': { data: { config: 'x' } } })),
    { text: 'managed', from: 'ConfigMap openshift-config-managed/kube-cloud-config key cloud.conf' },
  );
  const keyDefault = { ...local, spec: { ...local.spec, cloudConfig: { name: 'c' } } };
  assert.deepEqual(cloudConfigFor(keyDefault, maps({ 'openshift-config/c': { data: { config: 't' } } })), { text: 't', from: 'ConfigMap openshift-config/c key config' });
  assert.match((cloudConfigFor(local, maps({ 'openshift-config/cloud-provider-config': { data: { other: '' } } })) as { missing: string }).missing, /has no key "config"/);
  assert.match((cloudConfigFor(OPENSHIFT.none, maps({})) as { missing: string }).missing, /spec.cloudConfig names no ConfigMap/);
});

test('operatorStatus: the version only once the Deployment rolled out; what was reported stays meanwhile', () => {
  const deploy = { deploy: true as const, provider: 'local', name: 'local' };
  const d = (generation: number, s: NonNullable<api.Deployment['status']>) => ({ metadata: { namespace: 'openshift-cloud-controller-manager', name: 'local-cloud-controller-manager', generation }, spec: { replicas: 2 }, status: s }) as api.Deployment;
  const old = { status: { versions: [{ name: 'operator', version: '1.0.0' }] } } as api.ClusterOperator;
  const full = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 };
  const cases: Array<[string, Parameters<typeof operatorStatus>[0], Record<string, string>, string | undefined]> = [
    ['rolled out', { version: '1.0.1', decision: deploy, deployment: d(3, full), current: old }, { Available: 'True', Progressing: 'False', Degraded: 'False', Upgradeable: 'True' }, '1.0.1'],
    ['generation not observed yet', { version: '1.0.1', decision: deploy, deployment: d(4, full), current: old }, { Available: 'True', Progressing: 'True', Degraded: 'False' }, '1.0.0'],
    ['an old replica left', { version: '1.0.1', decision: deploy, deployment: d(3, { ...full, replicas: 3 }), current: old }, { Progressing: 'True' }, '1.0.0'],
    ['none available', { version: '1.0.1', decision: deploy, deployment: d(3, { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 0 }) }, { Available: 'False', Progressing: 'True' }, undefined],
    ['stalled', { version: '1.0.1', decision: deploy, deployment: d(3, { observedGeneration: 3, replicas: 2, updatedReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "x" has timed out progressing.' }] }), current: old }, { Available: 'True', Degraded: 'True' }, '1.0.0'],
    ['no CCM for the platform', { version: '1.0.1', decision: { deploy: false, message: 'platform None …' }, current: old }, { Available: 'True', Progressing: 'False', Degraded: 'False' }, '1.0.1'],
    ['no platform yet', { version: '1.0.1' }, { Available: 'False', Progressing: 'True' }, undefined],
    ['images of the last release', { version: '1.0.1', decision: deploy, waiting: 'images of 1.0.0', current: { status: { ...old.status, conditions: [{ type: 'Available', status: 'True' }] } } as api.ClusterOperator }, { Available: 'True', Progressing: 'True', Degraded: 'False' }, '1.0.0'],
    ['failing', { version: '1.0.1', decision: deploy, failure: { reason: 'CloudConfigMissing', message: 'no config' }, current: old }, { Available: 'False', Degraded: 'True', Upgradeable: 'False' }, '1.0.0'],
  ];
  for (const [name, input, conditions, version] of cases) {
    const got = operatorStatus(input, new Date('2026-01-01T00:00:00Z'));
    for (const [type, status] of Object.entries(conditions)) assert.equal(got.conditions.find((c) => c.type === type)?.status, status, `${name}: ${type}`);
    assert.equal(got.versions?.[0]?.version, version, `${name}: version`);
  }
});

test('ccmOperands: a single-replica control plane gets one replica and no PDB; rolledOut reads the Deployment controller\'s counters', () => {
  const ha = ccmOperands({ provider: 'local', name: 'local', image: 'i', cloudConfig: 'c', clusterCidr: '127.1.0.0/16' });
  assert.equal(ha.deployment.spec.replicas, 2);
  assert.ok(ha.pdb);
  assert.deepEqual(ha.deployment.spec.template.spec.containers[0].command.slice(-3), ['--cluster-cidr', '127.1.0.0/16', '--leader-elect']);
  // Metrics: HTTPS on the node's address, port 10258, with the service CA's certificate for the Service.
  assert.ok(ha.deployment.spec.template.spec.containers[0].command.includes('--metrics-listen=$(HOST_IP):10258'));
  assert.deepEqual(ha.deployment.spec.template.spec.volumes[1], { name: 'metrics-tls', secret: { secretName: 'cloud-controller-manager-tls' } });
  assert.equal(ha.service.metadata.annotations['service.beta.openshift.io/serving-cert-secret-name'], 'cloud-controller-manager-tls');
  assert.deepEqual(ha.service.spec.selector, ha.deployment.spec.selector.matchLabels);
  assert.deepEqual(ha.service.spec.ports, [{ name: 'metrics', port: 10258, targetPort: 10258, protocol: 'TCP' }]);
  const sno = ccmOperands({ provider: 'local', name: 'local', image: 'i', cloudConfig: 'c', singleReplica: true });
  assert.equal(sno.deployment.spec.replicas, 1);
  assert.equal(sno.pdb, undefined);
  assert.equal(rolledOut(undefined), false);
  assert.equal(rolledOut({ metadata: { name: 'ccm', generation: 2 }, spec: { replicas: 1, selector: {}, template: {} }, status: { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 } }), true);
});

test("OpenShift's Infrastructure objects load through the payload's CRD unchanged", async () => {
  const api = await startTestApiServer();
  try {
    const crd = fileURLToPath(new URL('../release-payload/manifests/0000_10_config-operator_01_infrastructures.crd.yaml', import.meta.url));
    await api.kubectlOk(['apply', '-f', crd]);
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    for (const [name, object] of Object.entries(OPENSHIFT)) {
      const created = await (async () => {
        for (let i = 0; ; i++) {
          try {
            return await client.create(R.infrastructures, { ...object, metadata: { name }, status: undefined });
          } catch (e) {
            if (i > 50) throw e;
            await new Promise((r) => setTimeout(r, 100)); // the CRD is being established
          }
        }
      })();
      const written = await client.mergePatch(R.infrastructures, name, undefined, { metadata: { resourceVersion: created.metadata.resourceVersion }, status: object.status }, 'status');
      assert.deepEqual(written.spec, object.spec, `${name}: spec`);
      assert.deepEqual(written.status, object.status, `${name}: status`);
      assert.deepEqual(platformDecision(written), platformDecision(object), `${name}: the same decision once stored`);
    }
  } finally {
    await api.stop();
  }
});
