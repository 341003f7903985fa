// @kubernetes/client-node 1.x against the embedded API server: typed clients, the generic object
// API, custom objects, and an informer that keeps working across a watch timeout, a server
// restart and a compaction (410 → relist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { rmSync } from 'node:fs';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

function clientFor(api: TestApiServer): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  return kc;
}

test('typed clients, KubernetesObjectApi and CustomObjectsApi', async () => {
  const api = await startTestApiServer();
  try {
    const kc = clientFor(api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);

    const ns = await core.listNamespace();
    assert.deepEqual(ns.items.map((n) => n.metadata?.name).sort(), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);

    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c1', labels: { a: 'b' } }, data: { k: 'v' } } });
    assert.equal(cm.data?.k, 'v');
    const read = await core.readNamespacedConfigMap({ name: 'c1', namespace: 'default' });
    assert.equal(read.metadata?.uid, cm.metadata?.uid);
    await assert.rejects(core.readNamespacedConfigMap({ name: 'missing', namespace: 'default' }), (e: any) => e.code === 404);
    // Stale update → 409.
    await core.replaceNamespacedConfigMap({ name: 'c1', namespace: 'default', body: { ...read, data: { k: 'v2' } } });
    await assert.rejects(core.replaceNamespacedConfigMap({ name: 'c1', namespace: 'default', body: { ...read, data: { k: 'v3' } } }), (e: any) => e.code === 409);

    const dep = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } } },
    });
    assert.equal(dep.spec?.replicas, 1);
    const patched = await apps.patchNamespacedDeployment({ name: 'web', namespace: 'default', body: [{ op: 'replace', path: '/spec/replicas', value: 3 }] });
    assert.equal(patched.spec?.replicas, 3);
    assert.equal(patched.metadata?.generation, 2);

    const applied = await objects.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'default' }, spec: { ports: [{ port: 80 }], selector: { app: 'web' } } } as k8s.KubernetesObject);
    assert.ok((applied as k8s.V1Service).spec?.clusterIP);
    const listed = await objects.list('v1', 'Service', 'default');
    assert.deepEqual(listed.items.map((s) => s.metadata?.name).sort(), ['kubernetes', 'svc'], 'the API server\'s own kubernetes Service, and the one created');

    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Cluster',
          names: { plural: 'gadgets', kind: 'Gadget' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } } } }],
        },
      },
    });
    const g = await custom.createClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'gadgets', body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { any: { thing: 1 } } } });
    assert.deepEqual((g as any).spec, { any: { thing: 1 } });
    const gl = await custom.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'gadgets' });
    assert.equal((gl as any).items.length, 1);
    await custom.deleteClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'gadgets', name: 'g1' });
    await assert.rejects(custom.getClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'gadgets', name: 'g1' }), (e: any) => e.code === 404);
  } finally {
    await api.stop();
  }
});

test('an informer sees adds, updates and deletes across a watch timeout, a restart and a compaction', async () => {
  let api = await startTestApiServer({ compactKeep: 5, compactIntervalMs: 200 });
  const dataDir = api.dataDir;
  const port = api.port;
  const kc = clientFor(api);
  const core = () => clientFor(api).makeApiClient(k8s.CoreV1Api);
  // Watches end every second, as a real server's watch timeouts do.
  const path = '/api/v1/namespaces/default/configmaps';
  const informer = k8s.makeInformer(kc, path, () => core().listNamespacedConfigMap({ namespace: 'default', timeoutSeconds: 1 } as any));
  const seen: string[] = [];
  informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.data?.v}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
  let stopped = false;
  // client-node stops an informer on any error other than 410; restart it, as the toolkit does.
  informer.on('error', () => {
    if (!stopped) setTimeout(() => void (stopped ? undefined : informer.start().catch(() => undefined)), 300);
  });
  try {
    await informer.start();
    await core().createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { v: '1' } } });
    await eventually('add a', () => seen.includes('add a'), { timeoutMs: 10_000, intervalMs: 50 });
    await core().patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: [{ op: 'replace', path: '/data/v', value: '2' }] });
    await eventually('update a 2', () => seen.includes('update a 2'), { timeoutMs: 10_000, intervalMs: 50 });

    // Past a watch timeout (the server closes the stream), changes still arrive.
    await new Promise((r) => setTimeout(r, 1500));
    await core().createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' }, data: { v: '1' } } });
    await eventually('add b after a watch timeout', () => seen.includes('add b'), { timeoutMs: 10_000, intervalMs: 50 });

    // Across a server restart on the same port and data.
    await api.stop({ keepData: true });
    api = await startTestApiServer({ dataDir, port, compactKeep: 5, compactIntervalMs: 200 });
    await core().deleteNamespacedConfigMap({ name: 'a', namespace: 'default' });
    await eventually('delete a after a restart', () => seen.includes('delete a'), { timeoutMs: 15_000, intervalMs: 50 });

    // Many writes while the informer's resourceVersion falls behind a compaction: it relists.
    for (let i = 0; i < 20; i++) await core().createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `bulk-${i}` } } });
    await core().patchNamespacedConfigMap({ name: 'b', namespace: 'default', body: [{ op: 'replace', path: '/data/v', value: '9' }] });
    await eventually('the cache to converge after compaction', () => seen.includes('update b 9') && informer.list('default').length === 21, { timeoutMs: 15_000, intervalMs: 50 });
    assert.deepEqual(informer.list('default').map((o) => o.metadata?.name).sort(), ['b', ...Array.from({ length: 20 }, (_, i) => `bulk-${i}`)].sort());
    assert.ok(api.server.storage.compactedRevision() > 0, 'compaction happened');
  } finally {
    stopped = true;
    await informer.stop();
    await api.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
