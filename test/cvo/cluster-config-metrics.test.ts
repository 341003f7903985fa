// The cluster-configuration metrics the CVO process exports in place of OpenShift's
// kube-apiserver operator: names, labels and values as upstream's configmetrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { createClusterConfigMetrics } from '../../src/cvo/cluster-config-metrics.js';

const lines = async (source: Parameters<typeof createClusterConfigMetrics>[0]) =>
  (await createClusterConfigMetrics(source).metrics()).split('\n').filter((l) => l && !l.startsWith('#'));

const infra = (platformSpec: object, platformStatus: object) =>
  ({ apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec }, status: { platformStatus, controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'SingleReplica' } }) as unknown as api.Infrastructure;

test('nothing is reported before the objects exist', async () => {
  assert.deepEqual(await lines({ infrastructure: () => undefined, featureGate: () => undefined, proxy: () => undefined }), []);
});

test('platform None is 0, External names its platform, feature set and proxy as upstream', async () => {
  const none = await lines({
    infrastructure: () => infra({ type: 'None' }, { type: 'None' }),
    featureGate: () => ({ apiVersion: 'config.openshift.io/v1', kind: 'FeatureGate', metadata: { name: 'cluster' }, spec: {} }) as api.FeatureGate,
    proxy: () => ({ apiVersion: 'config.openshift.io/v1', kind: 'Proxy', metadata: { name: 'cluster' }, spec: { httpsProxy: 'http://proxy:3128', trustedCA: { name: '' } } }) as api.Proxy,
  });
  assert.deepEqual(none, [
    'cluster_infrastructure_provider{type="None",region="",external=""} 0',
    'cluster_controlplane_topology{mode="HighlyAvailable"} 1',
    'cluster_infrastructure_topology{mode="SingleReplica"} 1',
    'cluster_feature_set{name=""} 1',
    'cluster_proxy_enabled{type="http"} 0',
    'cluster_proxy_enabled{type="https"} 1',
    'cluster_proxy_enabled{type="trusted_ca"} 0',
  ]);
  const external = await lines({
    infrastructure: () => infra({ type: 'External', external: { platformName: 'local' } }, { type: 'External' }),
    featureGate: () => ({ apiVersion: 'config.openshift.io/v1', kind: 'FeatureGate', metadata: { name: 'cluster' }, spec: { featureSet: 'TechPreviewNoUpgrade' } }) as api.FeatureGate,
    proxy: () => undefined,
  });
  assert.ok(external.includes('cluster_infrastructure_provider{type="External",region="",external="local"} 1'), external.join('\n'));
  assert.ok(external.includes('cluster_feature_set{name="TechPreviewNoUpgrade"} 0'));
  assert.ok(!external.some((l) => l.startsWith('cluster_proxy_enabled')));
});
