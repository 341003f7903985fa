// The pure rules of a Subscription's spec.config (checked, then applied to a CSV's Deployment as OLM
// applies it), of copied CSVs (which namespaces, what the copy says) and of an OperatorGroup's
// olm.providedAPIs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { copiedCsv, copiedStatus, copyTargets } from '../../src/olm/copied-csv-controller.js';
import { subscriptionConfig, withSubscriptionConfig } from '../../src/olm/install-strategy.js';
import { providedApis } from '../../src/olm/operator-group-controller.js';

const deployment = (): NonNullable<api.Deployment['spec']> => ({
  selector: { matchLabels: { app: 'op' } },
  template: {
    metadata: { labels: { app: 'op' }, annotations: { keep: 'me' } },
    spec: {
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'a', operator: 'Exists' }],
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [{ name: 'op', image: 'x', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], volumeMounts: [{ name: 'data', mountPath: '/data' }], resources: { requests: { cpu: '1m' } } }],
    },
  },
});

test('spec.config applied as OLM applies it: env and volumes merged by name, envFrom and tolerations added, resources, nodeSelector, affinity replaced, annotations added', () => {
  const config = subscriptionConfig({
    env: [{ name: 'B', value: 'two' }, { name: 'C', value: '3' }],
    envFrom: [{ configMapRef: { name: 'settings' } }],
    volumes: [{ name: 'data', configMap: { name: 'd' } }, { name: 'extra', emptyDir: {} }],
    volumeMounts: [{ name: 'extra', mountPath: '/extra' }],
    tolerations: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }],
    resources: { limits: { memory: '1Gi' } },
    nodeSelector: { zone: 'a' },
    affinity: { nodeAffinity: {} },
    annotations: { added: 'yes' },
  });
  assert.equal(config.problem, undefined);
  const out = withSubscriptionConfig(deployment(), config.config);
  const pod = out.template.spec!;
  const c = pod.containers[0];
  assert.deepEqual(c.env, [{ name: 'A', value: '1' }, { name: 'B', value: 'two' }, { name: 'C', value: '3' }]);
  assert.deepEqual(c.envFrom, [{ configMapRef: { name: 'settings' } }]);
  assert.deepEqual(c.volumeMounts, [{ name: 'data', mountPath: '/data' }, { name: 'extra', mountPath: '/extra' }]);
  assert.deepEqual(c.resources, { limits: { memory: '1Gi' } });
  assert.deepEqual(pod.volumes, [{ name: 'data', configMap: { name: 'd' } }, { name: 'extra', emptyDir: {} }]);
  assert.deepEqual(pod.tolerations, [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }]);
  assert.deepEqual(pod.nodeSelector, { zone: 'a' });
  assert.deepEqual(pod.affinity, { nodeAffinity: {} });
  assert.deepEqual(out.template.metadata?.annotations, { keep: 'me', added: 'yes' });
  assert.deepEqual(withSubscriptionConfig(deployment(), undefined), deployment(), 'no config: unchanged');
  assert.deepEqual(withSubscriptionConfig(deployment(), {}), deployment(), 'an empty config: unchanged');
});

test('a spec.config that is not one is named', () => {
  const cases: Array<[unknown, string]> = [
    ['x', 'spec.config must be an object'],
    [{ envs: [] }, 'spec.config.envs is not a field of a Subscription\'s config (env, envFrom, resources, nodeSelector, tolerations, volumes, volumeMounts, affinity, annotations)'],
    [{ env: 'A=1' }, 'spec.config.env must be a list'],
    [{ env: [{ value: '1' }] }, 'spec.config.env[0] has no name'],
    [{ nodeSelector: { zone: 1 } }, 'spec.config.nodeSelector must map names to strings'],
    [{ volumes: [{ emptyDir: {} }] }, 'spec.config.volumes[0] has no name'],
  ];
  for (const [value, problem] of cases) assert.equal(subscriptionConfig(value).problem, problem, JSON.stringify(value));
  assert.deepEqual(subscriptionConfig(undefined), {});
});

const ns = (name: string, deleting = false): api.Namespace => ({ metadata: { name, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) } });

test('copied CSVs: into every target but the operator\'s own namespace (all live namespaces for AllNamespaces), labelled olm.copiedFrom, their phase mirrored with reason Copied', () => {
  const all = [ns('ops'), ns('a'), ns('b'), ns('gone', true)];
  assert.deepEqual(copyTargets('ops', [''], all), ['a', 'b']);
  assert.deepEqual(copyTargets('ops', ['ops'], all), []);
  assert.deepEqual(copyTargets('ops', ['b', 'missing', 'gone'], all), ['b']);
  const csv = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', metadata: { name: 'x.v1', namespace: 'ops', uid: 'u', resourceVersion: '5', labels: { l: '1' }, annotations: { 'olm.targetNamespaces': '' } }, spec: { displayName: 'X' }, status: { phase: 'Succeeded', reason: 'InstallSucceeded', lastTransitionTime: 't' } } as unknown as api.ClusterServiceVersion;
  assert.deepEqual(copiedCsv(csv, 'a').metadata, { name: 'x.v1', namespace: 'a', labels: { l: '1', 'olm.copiedFrom': 'ops' }, annotations: { 'olm.targetNamespaces': '' } });
  assert.deepEqual(copiedStatus(csv), { phase: 'Succeeded', reason: 'Copied', message: 'The operator is running in ops but is managing this namespace', lastTransitionTime: 't' });
});

test('olm.providedAPIs: the owned CRDs of the namespace\'s installed CSVs as Kind.version.group, sorted, copies and departing CSVs left out', () => {
  const csv = (name: string, owned: Array<[string, string, string]>, extra: Partial<api.ClusterServiceVersion['metadata']> = {}, phase = 'Succeeded') => ({
    metadata: { name, namespace: 'ops', ...extra },
    spec: { customresourcedefinitions: { owned: owned.map(([plural, version, kind]) => ({ name: plural, version, kind })) } },
    status: { phase },
  }) as unknown as api.ClusterServiceVersion;
  assert.equal(providedApis([
    csv('b', [['widgets.demo.bosun.io', 'v1', 'Widget'], ['gadgets.demo.bosun.io', 'v1beta1', 'Gadget']]),
    csv('copy', [['others.x.io', 'v1', 'Other']], { labels: { 'olm.copiedFrom': 'elsewhere' } }),
    csv('old', [['olds.x.io', 'v1', 'Old']], {}, 'Deleting'),
  ]), 'Gadget.v1beta1.demo.bosun.io,Widget.v1.demo.bosun.io');
  assert.equal(providedApis([]), '');
});
