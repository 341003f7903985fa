// pods/binding as kube-apiserver's binding storage does it: spec.nodeName set once, the Binding's
// annotations copied onto the pod, PodScheduled turned True (an unschedulable verdict does not
// outlive the binding), and a second binding refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';

test('a binding sets the node once, copies annotations and marks the pod scheduled', async () => {
  const api = await startTestApiServer();
  try {
    const pods = '/api/v1/namespaces/default/pods';
    assert.equal((await api.request('POST', pods, { body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } })).status, 201);
    // What the scheduler writes when nothing fits.
    const unschedulable = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' };
    assert.equal((await api.request('PATCH', `${pods}/p/status`, { body: { status: { conditions: [unschedulable] } }, contentType: 'application/merge-patch+json' })).status, 200);

    const bound = await api.request('POST', `${pods}/p/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p', annotations: { 'example.com/why': 'fits' } }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } } });
    assert.equal(bound.status, 201, bound.text);
    const pod = (await api.request('GET', `${pods}/p`)).json;
    assert.equal(pod.spec.nodeName, 'node-1');
    assert.equal(pod.metadata.annotations['example.com/why'], 'fits');
    const scheduled = pod.status.conditions.filter((c: { type: string }) => c.type === 'PodScheduled');
    assert.equal(scheduled.length, 1);
    assert.equal(scheduled[0].status, 'True');
    assert.equal(scheduled[0].reason, undefined);
    assert.notEqual(scheduled[0].lastTransitionTime, '2026-01-01T00:00:00Z');

    const again = await api.request('POST', `${pods}/p/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { name: 'node-2' } } });
    assert.equal(again.status, 409);
    assert.equal(again.json.kind, 'Status');
    assert.equal((await api.request('GET', `${pods}/p`)).json.spec.nodeName, 'node-1');
  } finally {
    await api.stop();
  }
});
