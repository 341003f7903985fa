// HorizontalPodAutoscalers served at autoscaling/v2 (stored, preferred) and autoscaling/v1 (a
// conversion): one object whichever version wrote it — created, read, listed, watched and patched
// at either; `kubectl autoscale` (a protobuf body: v1 before kubectl 1.33, v2 from it) stores what
// kubectl sends; kube's defaults, validation messages and kubectl's columns.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let s: TestApiServer;
before(async () => {
  s = await startTestApiServer();
});
after(async () => s?.stop());

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';

test('discovery: autoscaling at v2 (preferred) and v1', async () => {
  const group = (await s.request('GET', '/apis/autoscaling')).json;
  assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v2', 'v1']);
  assert.equal(group.preferredVersion.version, 'v2');
  for (const version of ['v1', 'v2']) {
    const list = (await s.request('GET', `/apis/autoscaling/${version}`)).json;
    const hpa = list.resources.find((r: { name: string }) => r.name === 'horizontalpodautoscalers');
    assert.deepEqual([hpa.kind, hpa.shortNames, hpa.namespaced], ['HorizontalPodAutoscaler', ['hpa'], true]);
    assert.ok(list.resources.some((r: { name: string }) => r.name === 'horizontalpodautoscalers/status'));
  }
});

test('one object at both versions: written at v1, read at v2 and back; patched at v1, the v2-only fields kept', async () => {
  const created = await s.request('POST', V1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'a' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 4, targetCPUUtilizationPercentage: 70 } } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.apiVersion, 'autoscaling/v1');
  assert.deepEqual(created.json.spec, { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 70 });
  const v2 = (await s.request('GET', `${V2}/a`)).json;
  assert.equal(v2.apiVersion, 'autoscaling/v2');
  assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
  assert.deepEqual(v2.status, { desiredReplicas: 0 });
  assert.equal(v2.metadata.annotations, undefined, 'no conversion annotations at v2');

  // A memory metric at v2; v1 carries it in an annotation, and a v1 patch keeps it.
  const added = await s.request('PATCH', `${V2}/a`, { contentType: 'application/merge-patch+json', body: { spec: { metrics: [...v2.spec.metrics, { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '200Mi' } } }] } } });
  assert.equal(added.status, 200, added.text);
  const asV1 = (await s.request('GET', `${V1}/a`)).json;
  // In v1's own shape, as kube writes it (v2beta1's spelling).
  assert.deepEqual(JSON.parse(asV1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']), [{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '200Mi' } }]);
  const patched = await s.request('PATCH', `${V1}/a`, { contentType: 'application/merge-patch+json', body: { spec: { targetCPUUtilizationPercentage: 40 } } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.spec.targetCPUUtilizationPercentage, 40);
  const after = (await s.request('GET', `${V2}/a`)).json;
  // Written through v1, the annotation's metrics come first and the CPU target last, as kube orders them.
  assert.deepEqual(after.spec.metrics.map((m: { resource: { name: string; target: Record<string, unknown> } }) => [m.resource.name, m.resource.target]), [['memory', { type: 'AverageValue', averageValue: '200Mi' }], ['cpu', { type: 'Utilization', averageUtilization: 40 }]]);
  assert.equal(after.metadata.annotations, undefined);

  // Lists and watches at v1 are v1 objects.
  const list = (await s.request('GET', V1)).json;
  assert.deepEqual(list.items.map((i: { apiVersion?: string; spec: { targetCPUUtilizationPercentage: number } }) => i.spec.targetCPUUtilizationPercentage), [40]);
  const watched = await s.request('GET', `${V1}?watch=true&resourceVersion=${created.json.metadata.resourceVersion}&timeoutSeconds=1`);
  const events = watched.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(events.length >= 2);
  assert.ok(events.every((e) => e.object.apiVersion === 'autoscaling/v1' && e.object.spec.targetCPUUtilizationPercentage !== undefined));

  // A PUT at v1 from what was read at v1.
  const put = await s.request('PUT', `${V1}/a`, { body: { ...patched.json, spec: { ...patched.json.spec, maxReplicas: 6 } } });
  assert.equal(put.status, 200, put.text);
  assert.equal((await s.request('GET', `${V2}/a`)).json.spec.maxReplicas, 6);
});

test('kube\'s defaults and validation messages', async () => {
  const bad = await s.request('POST', V2, { body: { metadata: { name: 'bad' }, spec: { scaleTargetRef: { name: 'x' }, minReplicas: 3, maxReplicas: 2, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }, { type: 'Nope' }], behavior: { scaleDown: { stabilizationWindowSeconds: 4000 } } } } });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), [
    'spec.scaleTargetRef.kind: Required value',
    'spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`',
    'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
    'spec.metrics[1].type: Unsupported value: "Nope": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    'spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600 and greater than or equal to 0',
  ]);
  // No metric named: 80% CPU; a behavior gets kube's rules where it says nothing.
  const made = await s.request('POST', V2, { body: { metadata: { name: 'd' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' }, maxReplicas: 3, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } } } });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.json.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
  assert.deepEqual(made.json.spec.behavior, {
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
    scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
});

test('kubectl autoscale stores what kubectl sends, and kubectl get hpa prints kube\'s columns', async () => {
  assert.match(await s.kubectlOk(['create', 'deployment', 'web', '--image=nginx']), /created/);
  const sent = JSON.parse(await s.kubectlOk(['autoscale', 'deployment', 'web', '--min=2', '--max=5', '--cpu-percent=60', '--dry-run=client', '-o', 'json']));
  assert.match(await s.kubectlOk(['autoscale', 'deployment', 'web', '--min=2', '--max=5', '--cpu-percent=60']), /horizontalpodautoscaler.autoscaling\/web autoscaled/);
  const stored = JSON.parse(await s.kubectlOk(['get', `horizontalpodautoscalers.${sent.apiVersion.split('/')[1]}.autoscaling`, 'web', '-o', 'json']));
  assert.deepEqual(stored.spec, sent.spec, `the ${sent.apiVersion} body kubectl sent`);
  assert.match(await s.kubectlOk(['get', 'hpa']), /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n(?:.*\n)*web\s+Deployment\/web\s+cpu: <unknown>\/60%\s+2\s+5\s+0\s+\S+\n/);
});
