// metadata.generation only where kube-apiserver keeps one: 1 on create and bumped by the kind's
// own rule (spec changes; for Deployments annotations too) on workloads, Pods,
// PodDisruptionBudgets, CRDs and custom resources (any non-metadata change, or spec only with the
// status subresource); never on ConfigMaps, Secrets, ServiceAccounts, Namespaces, Services,
// Nodes, Leases, Events, Endpoints or RBAC objects. Checked over HTTPS for every kind and with kubectl.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

type Obj = Record<string, any>;
const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'i' }] } });
const selector = (app: string) => ({ matchLabels: { app } });

interface Case {
  path: string;
  body: Obj;
  /** A merge patch that changes what the kind's generation rule watches (or, for untracked kinds, its content). */
  change: Obj;
  /** The generation after create and after the change; undefined: the kind has none. */
  want: [number, number] | undefined;
}

const NS = '/api/v1/namespaces/default';
const CASES: Record<string, Case> = {
  configmaps: { path: `${NS}/configmaps`, body: { metadata: { name: 'g' }, data: { a: '1' } }, change: { data: { a: '2' } }, want: undefined },
  secrets: { path: `${NS}/secrets`, body: { metadata: { name: 'g' }, stringData: { a: '1' } }, change: { data: { a: 'Mg==' } }, want: undefined },
  serviceaccounts: { path: `${NS}/serviceaccounts`, body: { metadata: { name: 'g' } }, change: { automountServiceAccountToken: false }, want: undefined },
  namespaces: { path: '/api/v1/namespaces', body: { metadata: { name: 'gen-ns' } }, change: { metadata: { labels: { a: 'b' } } }, want: undefined },
  services: { path: `${NS}/services`, body: { metadata: { name: 'g' }, spec: { ports: [{ port: 80 }] } }, change: { spec: { selector: { app: 'x' } } }, want: undefined },
  endpoints: { path: `${NS}/endpoints`, body: { metadata: { name: 'g' }, subsets: [] }, change: { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }, want: undefined },
  nodes: { path: '/api/v1/nodes', body: { metadata: { name: 'gen-node' }, spec: {} }, change: { spec: { unschedulable: true } }, want: undefined },
  events: { path: `${NS}/events`, body: { metadata: { name: 'g' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R', message: 'm' }, change: { message: 'n' }, want: undefined },
  leases: { path: '/apis/coordination.k8s.io/v1/namespaces/default/leases', body: { metadata: { name: 'g' }, spec: { holderIdentity: 'a' } }, change: { spec: { holderIdentity: 'b' } }, want: undefined },
  roles: { path: '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', body: { metadata: { name: 'g' }, rules: [] }, change: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, want: undefined },
  pods: { path: `${NS}/pods`, body: { metadata: { name: 'g' }, spec: { containers: [{ name: 'c', image: 'i' }] } }, change: { spec: { activeDeadlineSeconds: 30 } }, want: [1, 2] },
  deployments: { path: '/apis/apps/v1/namespaces/default/deployments', body: { metadata: { name: 'g' }, spec: { selector: selector('g'), template: template('g') } }, change: { metadata: { annotations: { why: 'annotations count for Deployments' } } }, want: [1, 2] },
  replicasets: { path: '/apis/apps/v1/namespaces/default/replicasets', body: { metadata: { name: 'g' }, spec: { selector: selector('g'), template: template('g') } }, change: { spec: { replicas: 3 } }, want: [1, 2] },
  daemonsets: { path: '/apis/apps/v1/namespaces/default/daemonsets', body: { metadata: { name: 'g' }, spec: { selector: selector('g'), template: template('g') } }, change: { spec: { minReadySeconds: 5 } }, want: [1, 2] },
  statefulsets: { path: '/apis/apps/v1/namespaces/default/statefulsets', body: { metadata: { name: 'g' }, spec: { selector: selector('g'), template: template('g'), serviceName: 'g' } }, change: { spec: { replicas: 2 } }, want: [1, 2] },
  jobs: { path: '/apis/batch/v1/namespaces/default/jobs', body: { metadata: { name: 'g' }, spec: { template: { ...template('g'), spec: { ...template('g').spec, restartPolicy: 'Never' } } } }, change: { spec: { parallelism: 2 } }, want: [1, 2] },
  poddisruptionbudgets: { path: '/apis/policy/v1/namespaces/default/poddisruptionbudgets', body: { metadata: { name: 'g' }, spec: { minAvailable: 1, selector: selector('g') } }, change: { spec: { minAvailable: 2 } }, want: [1, 2] },
};

test('each built-in kind keeps metadata.generation exactly when kube-apiserver does', async () => {
  for (const [kind, c] of Object.entries(CASES)) {
    const created = await api.request('POST', c.path, { body: { ...c.body, metadata: { ...c.body.metadata, generation: 7 } } });
    assert.equal(created.status, 201, `${kind}: ${created.text}`);
    assert.equal(created.json.metadata.generation, c.want?.[0], `${kind}: generation after create`);
    const name = created.json.metadata.name;
    const changed = await api.request('PATCH', `${c.path}/${name}`, { body: c.change, contentType: 'application/merge-patch+json' });
    assert.equal(changed.status, 200, `${kind}: ${changed.text}`);
    assert.notEqual(changed.json.metadata.resourceVersion, created.json.metadata.resourceVersion, `${kind}: the change was written`);
    assert.equal(changed.json.metadata.generation, c.want?.[1], `${kind}: generation after the change`);
    const relabelled = await api.request('PATCH', `${c.path}/${name}`, { body: { metadata: { labels: { relabelled: 'yes' } } }, contentType: 'application/merge-patch+json' });
    assert.equal(relabelled.json.metadata.generation, c.want?.[1], `${kind}: a label change leaves the generation`);
  }
});

test('status writes leave the generation; a first deletion request bumps it where there is one', async () => {
  const pod = CASES.pods;
  const status = await api.request('PATCH', `${pod.path}/g/status`, { body: { status: { phase: 'Running' } }, contentType: 'application/merge-patch+json' });
  assert.equal(status.status, 200, status.text);
  assert.equal(status.json.metadata.generation, 2);

  const dep = await api.request('POST', CASES.deployments.path, { body: { metadata: { name: 'held', finalizers: ['example.com/hold'] }, spec: { selector: selector('h'), template: template('h') } } });
  assert.equal(dep.json.metadata.generation, 1);
  const deleting = await api.request('DELETE', `${CASES.deployments.path}/held`);
  assert.equal(deleting.status, 200);
  assert.ok(deleting.json.metadata.deletionTimestamp);
  assert.equal(deleting.json.metadata.generation, 2);
  const again = await api.request('DELETE', `${CASES.deployments.path}/held`);
  assert.equal(again.json.metadata.generation, 2, 'only the first deletion request bumps it');
  const cm = await api.request('POST', CASES.configmaps.path, { body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
  assert.equal(cm.status, 201);
  const cmDeleting = await api.request('DELETE', `${CASES.configmaps.path}/held`);
  assert.equal(cmDeleting.json.metadata.generation, undefined);
});

test('custom resources: spec changes bump with the status subresource, any non-metadata change without it; the CRD itself on spec changes', async () => {
  const crd = (plural: string, status: boolean) => ({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.gen.example.com` },
    spec: {
      group: 'gen.example.com', scope: 'Namespaced', names: { plural, singular: plural.slice(0, -1), kind: plural[0].toUpperCase() + plural.slice(1, -1) },
      versions: [{ name: 'v1', served: true, storage: true, ...(status ? { subresources: { status: {} } } : {}), schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const [plural, status] of [['gadgets', true], ['gizmos', false]] as const) {
    const created = await api.request('POST', crds, { body: crd(plural, status) });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.generation, 1);
  }
  const changedCrd = await api.request('PATCH', `${crds}/gadgets.gen.example.com`, { body: { spec: { names: { shortNames: ['gd'] } } }, contentType: 'application/merge-patch+json' });
  assert.equal(changedCrd.json.metadata.generation, 2);

  const base = '/apis/gen.example.com/v1/namespaces/default';
  await eventually('the custom resources are served', async () => (await api.request('GET', `${base}/gizmos`)).status === 200 && (await api.request('GET', `${base}/gadgets`)).status === 200);
  const merge = (path: string, body: Obj) => api.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });

  const gadget = await api.request('POST', `${base}/gadgets`, { body: { apiVersion: 'gen.example.com/v1', kind: 'Gadget', metadata: { name: 'a' }, spec: { size: 1 } } });
  assert.equal(gadget.json.metadata.generation, 1);
  assert.equal((await merge(`${base}/gadgets/a`, { spec: { size: 2 } })).json.metadata.generation, 2);
  assert.equal((await merge(`${base}/gadgets/a/status`, { status: { phase: 'Ready' } })).json.metadata.generation, 2);
  assert.equal((await merge(`${base}/gadgets/a`, { other: 'top-level fields count' })).json.metadata.generation, 3);
  assert.equal((await merge(`${base}/gadgets/a`, { metadata: { labels: { a: 'b' } } })).json.metadata.generation, 3);

  const gizmo = await api.request('POST', `${base}/gizmos`, { body: { apiVersion: 'gen.example.com/v1', kind: 'Gizmo', metadata: { name: 'a' }, spec: { size: 1 } } });
  assert.equal(gizmo.json.metadata.generation, 1);
  assert.equal((await merge(`${base}/gizmos/a`, { status: { phase: 'Ready' } })).json.metadata.generation, 2, 'without a status subresource, status is content');
  assert.equal((await merge(`${base}/gizmos/a`, { metadata: { annotations: { a: 'b' } } })).json.metadata.generation, 2);
});

test('kubectl: a ConfigMap has no generation, a Deployment counts spec changes (scale included)', async () => {
  await api.kubectlOk(['create', 'configmap', 'by-kubectl', '--from-literal=a=1']);
  await api.kubectlOk(['label', 'configmap', 'by-kubectl', 'x=y']);
  assert.equal(await api.kubectlOk(['get', 'configmap', 'by-kubectl', '-o', 'jsonpath={.metadata.generation}']), '');
  await api.kubectlOk(['create', 'deployment', 'by-kubectl', '--image=nginx:1']);
  assert.equal(await api.kubectlOk(['get', 'deployment', 'by-kubectl', '-o', 'jsonpath={.metadata.generation}']), '1');
  await api.kubectlOk(['scale', 'deployment', 'by-kubectl', '--replicas=3']);
  await api.kubectlOk(['set', 'image', 'deployment/by-kubectl', 'nginx=nginx:2']);
  assert.equal(await api.kubectlOk(['get', 'deployment', 'by-kubectl', '-o', 'jsonpath={.metadata.generation}']), '3');
  await api.kubectlOk(['label', 'deployment', 'by-kubectl', 'x=y']);
  assert.equal(await api.kubectlOk(['get', 'deployment', 'by-kubectl', '-o', 'jsonpath={.metadata.generation}']), '3');
});

test('a PUT that says what is stored, its keys in another order, writes nothing: the resourceVersion stays', async () => {
  const created = await api.request('POST', `${NS}/configmaps`, { body: { metadata: { name: 'same', labels: { a: '1', b: '2' } }, data: { x: '1', y: '2' } } });
  assert.equal(created.status, 201);
  const stored = created.json;
  // The same object with every map's keys reversed, as another client's encoder may send it.
  const reversed = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(reversed) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)])) : value;
  const put = await api.request('PUT', `${NS}/configmaps/same`, { body: reversed(stored) });
  assert.equal(put.status, 200);
  assert.equal(put.json.metadata.resourceVersion, stored.metadata.resourceVersion);
  // A real change is written, and the body the server was sent is what it stores.
  const changed = await api.request('PUT', `${NS}/configmaps/same`, { body: { ...stored, data: { x: '1', y: '3' } } });
  assert.notEqual(changed.json.metadata.resourceVersion, stored.metadata.resourceVersion);
  assert.deepEqual((await api.request('GET', `${NS}/configmaps/same`)).json.data, { x: '1', y: '3' });
});
