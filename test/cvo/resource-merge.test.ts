// Merge semantics per kind: only fields the manifest sets are written, only when they differ,
// fields owned by the server or other controllers are kept, and merging the result again
// reports no change (no hot-looping).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { merge } from '../../src/cvo/resource-merge/merge.js';
import type { JsonObject } from '../../src/cvo/resource-merge/ensure.js';

interface Case {
  name: string;
  existing: JsonObject;
  required: JsonObject;
  modified: boolean;
  check?: (o: any) => void;
  recreate?: RegExp;
}

const meta = (extra: JsonObject = {}): JsonObject => ({ name: 'x', namespace: 'ns', resourceVersion: '7', uid: 'u-1', ...extra });

const deployment = (spec: JsonObject, metadata: JsonObject = meta()): JsonObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec });
const podTemplate = (containers: JsonObject[], extra: JsonObject = {}): JsonObject => ({ metadata: { labels: { app: 'x' } }, spec: { containers, ...extra } });
// What the API server adds to a container it stores.
const serverContainer = (c: JsonObject): JsonObject => ({ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent', resources: {}, ...c });

const cases: Case[] = [
  {
    name: 'Namespace: labels and annotations merged, manifest keys win, others kept; spec and status untouched',
    existing: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { a: '1', keep: 'k' }, annotations: { other: 'o' } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } },
    required: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { a: '2' }, annotations: { mine: 'm' } } },
    modified: true,
    check: (o) => {
      assert.deepEqual(o.metadata.labels, { a: '2', keep: 'k' });
      assert.deepEqual(o.metadata.annotations, { other: 'o', mine: 'm' });
      assert.deepEqual(o.spec, { finalizers: ['kubernetes'] });
      assert.deepEqual(o.status, { phase: 'Active' });
    },
  },
  {
    name: 'Namespace already as the manifest says: not modified',
    existing: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { a: '1', extra: 'e' }, resourceVersion: '3' } },
    required: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { a: '1' }, creationTimestamp: null } },
    modified: false,
  },
  {
    name: 'a label key ending in "-" removes that label',
    existing: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { old: '1', a: '1' } } },
    required: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { 'old-': '' } } },
    modified: true,
    check: (o) => assert.deepEqual(o.metadata.labels, { a: '1' }),
  },
  {
    name: 'owner reference to the ClusterVersion added once, others kept',
    existing: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ ownerReferences: [{ apiVersion: 'v1', kind: 'Foo', name: 'f', uid: 'f1' }] }) },
    required: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', name: 'version', uid: 'cv1', controller: true }] } },
    modified: true,
    check: (o) => assert.deepEqual(o.metadata.ownerReferences.map((r: any) => r.uid), ['f1', 'cv1']),
  },
  {
    name: 'ServiceAccount: secrets and imagePullSecrets belong to others',
    existing: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(), secrets: [{ name: 'x-token-abc' }], imagePullSecrets: [{ name: 'x-dockercfg' }] },
    required: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x', namespace: 'ns' } },
    modified: false,
  },
  {
    name: 'ConfigMap: data merged by key',
    existing: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(), data: { a: '1', injected: 'ca-bundle' } },
    required: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns' }, data: { a: '2', b: '3' } },
    modified: true,
    check: (o) => assert.deepEqual(o.data, { a: '2', injected: 'ca-bundle', b: '3' }),
  },
  {
    name: 'Secret: stringData compared as the data the server stores',
    existing: { apiVersion: 'v1', kind: 'Secret', metadata: meta(), type: 'Opaque', data: { pw: Buffer.from('s3cret').toString('base64') } },
    required: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'ns' }, type: 'Opaque', stringData: { pw: 's3cret' } },
    modified: false,
  },
  {
    name: 'Secret: changed data written, other keys kept',
    existing: { apiVersion: 'v1', kind: 'Secret', metadata: meta(), type: 'Opaque', data: { pw: 'b2xk', token: 'dA==' } },
    required: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'ns' }, stringData: { pw: 'new' } },
    modified: true,
    check: (o) => {
      assert.deepEqual(o.data, { pw: Buffer.from('new').toString('base64'), token: 'dA==' });
      assert.equal(o.stringData, undefined);
    },
  },
  {
    name: 'Service: clusterIP and allocated nodePorts kept, port defaults not a difference',
    existing: {
      apiVersion: 'v1', kind: 'Service', metadata: meta(),
      spec: { type: 'NodePort', clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], selector: { app: 'x' }, sessionAffinity: 'None', ports: [{ name: 'https', port: 443, targetPort: 8443, protocol: 'TCP', nodePort: 30443 }] },
      status: { loadBalancer: {} },
    },
    required: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'ns' }, spec: { type: 'NodePort', selector: { app: 'x' }, ports: [{ name: 'https', port: 443, targetPort: 8443 }] } },
    modified: false,
  },
  {
    name: 'Service: a changed targetPort is written with the allocated nodePort kept; selector owned whole',
    existing: {
      apiVersion: 'v1', kind: 'Service', metadata: meta(),
      spec: { type: 'NodePort', clusterIP: '10.0.0.5', selector: { app: 'x', stale: 'y' }, ports: [{ name: 'https', port: 443, targetPort: 8443, protocol: 'TCP', nodePort: 30443 }] },
    },
    required: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'ns' }, spec: { clusterIP: 'None', selector: { app: 'x' }, ports: [{ name: 'https', port: 443, targetPort: 9443 }] } },
    modified: true,
    check: (o) => {
      assert.deepEqual(o.spec.ports, [{ name: 'https', port: 443, targetPort: 9443, nodePort: 30443 }]);
      assert.deepEqual(o.spec.selector, { app: 'x' });
      assert.equal(o.spec.clusterIP, '10.0.0.5');
    },
  },
  {
    name: 'Deployment: server-defaulted fields are not differences',
    existing: deployment({
      replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: 'x' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: podTemplate([serverContainer({ name: 'op', image: 'bosun.local/op:1.0.0', env: [{ name: 'NODE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } }], livenessProbe: { httpGet: { path: '/healthz', port: 8443, scheme: 'HTTPS' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 } })], { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', securityContext: {} }),
    }),
    required: deployment(
      {
        replicas: 1,
        selector: { matchLabels: { app: 'x' } },
        template: podTemplate([{ name: 'op', image: 'bosun.local/op:1.0.0', env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }], livenessProbe: { httpGet: { path: '/healthz', port: 8443, scheme: 'HTTPS' } } }]),
      },
      { name: 'x', namespace: 'ns' },
    ),
    modified: false,
  },
  {
    name: 'Deployment: image, env replaced; unknown container removed; replicas enforced; status kept',
    existing: {
      ...deployment({
        replicas: 3,
        selector: { matchLabels: { app: 'x' } },
        template: podTemplate([
          serverContainer({ name: 'sidecar', image: 'other' }),
          serverContainer({ name: 'op', image: 'bosun.local/op:1.0.0', env: [{ name: 'RELEASE_VERSION', value: '1.0.0' }, { name: 'EXTRA', value: 'x' }], resources: { requests: { cpu: '10m' } } }),
        ]),
      }),
      status: { readyReplicas: 3 },
    },
    required: deployment(
      {
        replicas: 1,
        selector: { matchLabels: { app: 'x' } },
        template: podTemplate([{ name: 'op', image: 'bosun.local/op:1.0.1', env: [{ name: 'RELEASE_VERSION', value: '1.0.1' }] }]),
      },
      { name: 'x', namespace: 'ns' },
    ),
    modified: true,
    check: (o) => {
      assert.equal(o.spec.replicas, 1);
      const cs = o.spec.template.spec.containers;
      assert.deepEqual(cs.map((c: any) => c.name), ['op']);
      assert.equal(cs[0].image, 'bosun.local/op:1.0.1');
      assert.deepEqual(cs[0].env, [{ name: 'RELEASE_VERSION', value: '1.0.1' }]);
      assert.deepEqual(cs[0].resources, { requests: { cpu: '10m' } }, 'fields the manifest does not set are kept');
      assert.deepEqual(o.status, { readyReplicas: 3 });
    },
  },
  {
    name: 'Deployment: strategy replaced whole (Recreate drops rollingUpdate); nodeSelector owned whole',
    existing: deployment({
      selector: { matchLabels: { app: 'x' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: podTemplate([serverContainer({ name: 'op', image: 'i' })], { nodeSelector: { 'node-role.kubernetes.io/master': '', zone: 'a' } }),
    }),
    required: deployment(
      { selector: { matchLabels: { app: 'x' } }, strategy: { type: 'Recreate' }, template: podTemplate([{ name: 'op', image: 'i' }], { nodeSelector: { 'node-role.kubernetes.io/master': '' } }) },
      { name: 'x', namespace: 'ns' },
    ),
    modified: true,
    check: (o) => {
      assert.deepEqual(o.spec.strategy, { type: 'Recreate' });
      assert.deepEqual(o.spec.template.spec.nodeSelector, { 'node-role.kubernetes.io/master': '' });
    },
  },
  {
    name: 'DaemonSet: template merged, updateStrategy defaults not a difference',
    existing: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta(), spec: { selector: { matchLabels: { app: 'x' } }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, template: podTemplate([serverContainer({ name: 'd', image: 'a' })]) } },
    required: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'x', namespace: 'ns' }, spec: { selector: { matchLabels: { app: 'x' } }, updateStrategy: { type: 'RollingUpdate' }, template: podTemplate([{ name: 'd', image: 'b' }]) } },
    modified: true,
    check: (o) => {
      assert.equal(o.spec.template.spec.containers[0].image, 'b');
      assert.equal(o.spec.template.spec.containers[0].terminationMessagePolicy, 'File');
    },
  },
  {
    name: 'Job: the same spec (with server-added selector and labels) is no change',
    existing: { apiVersion: 'batch/v1', kind: 'Job', metadata: meta(), spec: { backoffLimit: 6, selector: { matchLabels: { 'controller-uid': 'c' } }, template: { metadata: { labels: { 'controller-uid': 'c', job: 'x' } }, spec: { restartPolicy: 'Never', containers: [serverContainer({ name: 'j', image: 'a' })] } } }, status: { succeeded: 1 } },
    required: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'x', namespace: 'ns' }, spec: { template: { metadata: { labels: { job: 'x' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'j', image: 'a' }] } } } },
    modified: false,
  },
  {
    name: 'Job: a different spec cannot be an update and asks for a recreate',
    existing: { apiVersion: 'batch/v1', kind: 'Job', metadata: meta(), spec: { template: { spec: { restartPolicy: 'Never', containers: [serverContainer({ name: 'j', image: 'a' })] } } } },
    required: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'x', namespace: 'ns' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'j', image: 'b' }] } } } },
    modified: false,
    recreate: /Job cannot be changed/,
  },
  {
    name: 'ClusterRole: rules replaced whole when they differ',
    existing: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }, { apiGroups: [''], resources: ['secrets'], verbs: ['*'] }] },
    required: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }] },
    modified: true,
    check: (o) => assert.deepEqual(o.rules, [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }]),
  },
  {
    name: 'ClusterRole with an aggregationRule: rules belong to the aggregation controller',
    existing: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'true' } }] }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    required: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'true' } }] }, rules: [] },
    modified: false,
  },
  {
    name: 'ClusterRoleBinding: subject apiGroup defaults are not differences',
    existing: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }, { kind: 'Group', name: 'g', apiGroup: 'rbac.authorization.k8s.io' }] },
    required: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'b' }, roleRef: { kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }, { kind: 'Group', name: 'g' }] },
    modified: false,
  },
  {
    name: 'RoleBinding: a different roleRef asks for a recreate',
    existing: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta(), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'a' }, subjects: [] },
    required: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'x', namespace: 'ns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'b' }, subjects: [] },
    modified: false,
    recreate: /roleRef/,
  },
  {
    name: 'CRD: the whole spec replaced when it differs',
    existing: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'foos.x.io' }, spec: { group: 'x.io', conversion: { strategy: 'None' }, names: { kind: 'Foo', plural: 'foos' }, scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] }, status: { conditions: [{ type: 'Established', status: 'True' }] } },
    required: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'foos.x.io' }, spec: { group: 'x.io', names: { kind: 'Foo', plural: 'foos' }, scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } } }] } },
    modified: true,
    check: (o) => {
      assert.equal(o.spec.conversion, undefined, 'replaced whole');
      assert.ok(o.spec.versions[0].schema.openAPIV3Schema.properties.spec);
      assert.equal(o.status.conditions[0].type, 'Established');
    },
  },
  {
    name: 'CRD: server defaults (conversion strategy) are no difference',
    existing: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'foos.x.io' }, spec: { group: 'x.io', conversion: { strategy: 'None' }, names: { kind: 'Foo', plural: 'foos', singular: 'foo', listKind: 'FooList' }, scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true }] } },
    required: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'foos.x.io' }, spec: { group: 'x.io', names: { kind: 'Foo', plural: 'foos' }, scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true }] } },
    modified: false,
  },
  {
    name: "ClusterOperator: the operator's status is never written",
    existing: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'dns' }, spec: {}, status: { versions: [{ name: 'operator', version: '1.0.0' }], conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] } },
    required: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'dns', annotations: { 'include.release.openshift.io/self-managed-high-availability': 'true' } }, spec: {}, status: { versions: [{ name: 'operator', version: '1.0.1' }] } },
    modified: true,
    check: (o) => assert.deepEqual(o.status.versions, [{ name: 'operator', version: '1.0.0' }]),
  },
  {
    name: 'any other kind: top-level fields merged, status kept',
    existing: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1, colour: 'red' }, status: { ok: true } },
    required: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 2 }, status: { ok: false } },
    modified: true,
    check: (o) => {
      assert.deepEqual(o.spec, { size: 2, colour: 'red' });
      assert.deepEqual(o.status, { ok: true });
    },
  },
];

for (const c of cases) {
  test(`merge — ${c.name}`, () => {
    const existingBefore = structuredClone(c.existing);
    const r = merge(c.existing, c.required);
    assert.equal(r.modified, c.modified, 'modified');
    if (c.recreate) assert.match(r.recreate ?? '', c.recreate);
    else assert.equal(r.recreate, undefined);
    c.check?.(r.object);
    assert.deepEqual(c.existing, existingBefore, 'the input is not mutated');
    assert.equal((r.object as any).metadata.resourceVersion, (c.existing as any).metadata.resourceVersion, 'resourceVersion kept');
    if (!c.recreate) {
      const again = merge(r.object, c.required);
      assert.equal(again.modified, false, 'merging the result again changes nothing (no hot-looping)');
      assert.deepEqual(again.object, r.object);
    }
  });
}
