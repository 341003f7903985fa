// Condition helpers (lastTransitionTime only on a status change) and the apply helpers against
// the embedded API server: only the manifest's fields are written, and only when they differ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { setCondition, findCondition, sameConditions, removeCondition } from '../../src/kube/conditions.js';
import { applyObject, applyStatus } from '../../src/kube/apply.js';
import { isSubset as isSubsetOf } from '../../src/common/subset.js';

// applyObject's comparison: a null in the manifest means the field is to be absent.
const isSubset = (desired: unknown, live: unknown) => isSubsetOf(desired, live, { nullMeans: 'absent' });
import { KubeClient, type ResourceRef } from '../../src/kube/client.js';
import type * as api from '../../src/api/index.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';

test('setCondition moves lastTransitionTime only when the status changes', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const t1 = new Date('2026-01-01T01:00:00Z');
  let conditions = setCondition([], { type: 'Available', status: 'False', reason: 'Starting', message: 'starting' }, t0);
  assert.equal(conditions[0].lastTransitionTime, '2026-01-01T00:00:00Z');
  conditions = setCondition(conditions, { type: 'Available', status: 'False', reason: 'StillStarting', message: 'still' }, t1);
  assert.equal(conditions[0].lastTransitionTime, '2026-01-01T00:00:00Z', 'a new reason alone keeps the time');
  assert.equal(conditions[0].reason, 'StillStarting');
  conditions = setCondition(conditions, { type: 'Available', status: 'True', reason: 'AsExpected', message: '' }, t1);
  assert.equal(conditions[0].lastTransitionTime, '2026-01-01T01:00:00Z');
  conditions = setCondition(conditions, { type: 'Degraded', status: 'False' }, t1);
  assert.deepEqual(conditions.map((c) => c.type), ['Available', 'Degraded']);
  assert.equal(findCondition(conditions, 'Degraded')?.status, 'False');
  assert.ok(sameConditions(conditions, setCondition(conditions, { type: 'Degraded', status: 'False' }, new Date())));
  assert.ok(!sameConditions(conditions, setCondition(conditions, { type: 'Degraded', status: 'True' })));
  assert.deepEqual(removeCondition(conditions, 'Available').map((c) => c.type), ['Degraded']);
});

test('isSubset: what a manifest sets, ignoring what others added', () => {
  const live = { spec: { replicas: 2, template: { containers: [{ name: 'a', image: 'x', imagePullPolicy: 'IfNotPresent' }] } }, metadata: { labels: { a: '1', b: '2' } } };
  assert.ok(isSubset({ spec: { replicas: 2 } }, live));
  assert.ok(isSubset({ spec: { template: { containers: [{ name: 'a', image: 'x' }] } } }, live), 'defaulted fields in list items are not differences');
  assert.ok(isSubset({ metadata: { labels: { a: '1' } } }, live));
  assert.ok(!isSubset({ spec: { replicas: 3 } }, live));
  assert.ok(!isSubset({ spec: { template: { containers: [] } } }, live), 'list length matters');
  assert.ok(!isSubset({ metadata: { labels: { c: '3' } } }, live));
  assert.ok(isSubset({ metadata: { labels: { c: null } } }, live), 'null means absent');
  assert.ok(!isSubset({ metadata: { labels: { a: null } } }, live));
});

test('applyObject creates, leaves an equal object alone, and patches only differing manifest fields', async () => {
  const api = await startTestApiServer();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    const desired = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', labels: { app: 'x' } }, data: { a: '1' } };
    const created = await applyObject(client, desired);
    assert.equal(created.action, 'created');

    // Someone else adds a label and a key: not a difference, not overwritten.
    await client.mergePatch({ group: '', version: 'v1', resource: 'configmaps', namespaced: true }, 'cm', 'default', { metadata: { labels: { other: 'y' } }, data: { b: '2' } });
    const again = await applyObject(client, desired);
    assert.equal(again.action, 'unchanged');
    const rv = again.object.metadata.resourceVersion;

    const changed = await applyObject(client, { ...desired, data: { a: '2' } });
    assert.equal(changed.action, 'updated');
    assert.notEqual(changed.object.metadata.resourceVersion, rv);
    assert.deepEqual(changed.object.data, { a: '2', b: '2' }, 'merge keeps keys the manifest does not set');
    assert.deepEqual(changed.object.metadata.labels, { app: 'x', other: 'y' });

    // Status: written through the subresource only when it differs.
    const nsRef: ResourceRef<api.Namespace> = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };
    const ns = await client.get(nsRef, 'default');
    assert.equal(await applyStatus(client, nsRef, ns, ns.status!), false);

    await assert.rejects(applyObject(client, { apiVersion: 'example.com/v1', kind: 'Nope', metadata: { name: 'x' } }), /no resource for kind Nope/);
  } finally {
    await api.stop();
  }
});
