// Garbage collection through the real API server and kubectl: deleting a Deployment removes its
// ReplicaSet and pods (background), --cascade=foreground and --cascade=orphan behave as in
// Kubernetes, and dependents left dangling while no collector ran are collected at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { enableGarbageCollector } from '../../src/apiserver/controllers/garbage-collection-controller.js';

async function ok(api: TestApiServer, args: string[], input?: string): Promise<string> {
  const r = await api.kubectl(args, { input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A Deployment with one ReplicaSet and two pods, owned the way the controllers would own them. */
async function family(api: TestApiServer, name: string): Promise<void> {
  await ok(api, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } }));
  const owner = async (kind: string, n: string) => ({ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'apps/v1', kind, name: n, uid: (await ok(api, ['get', kind.toLowerCase(), n, '-o', 'jsonpath={.metadata.uid}'])).trim(), controller: true, blockOwnerDeletion: true });
  await ok(api, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `${name}-1`, ownerReferences: [await owner('Deployment', name)] }, spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } }));
  const rs = await owner('ReplicaSet', `${name}-1`);
  for (const p of ['a', 'b']) {
    await ok(api, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${name}-1-${p}`, labels: { app: name }, ownerReferences: [rs] }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }));
  }
}

const names = async (api: TestApiServer) => (await ok(api, ['get', 'deploy,rs,pods', '-o', 'jsonpath={.items[*].metadata.name}'])).trim().split(/\s+/).filter(Boolean).sort();

test('background, foreground and orphan deletion of a Deployment; dangling dependents after a restart', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  let gc = enableGarbageCollector(api.server, { debounceMs: 20 });
  try {
    await family(api, 'bg');
    await ok(api, ['delete', 'deployment', 'bg']);
    await gc.idle();
    assert.deepEqual(await names(api), []);

    await family(api, 'fg');
    await ok(api, ['delete', 'deployment', 'fg', '--cascade=foreground'], undefined);
    await gc.idle();
    assert.deepEqual(await names(api), []);

    await family(api, 'or');
    await ok(api, ['delete', 'deployment', 'or', '--cascade=orphan']);
    await gc.idle();
    assert.deepEqual(await names(api), ['or-1', 'or-1-a', 'or-1-b']);
    assert.equal((await ok(api, ['get', 'rs', 'or-1', '-o', 'jsonpath={.metadata.ownerReferences}'])).trim(), '');
    assert.match(await ok(api, ['get', 'pod', 'or-1-a', '-o', 'jsonpath={.metadata.ownerReferences[0].name}']), /or-1/);

    // No collector running while the owner goes: the next one to start collects the dependents.
    gc.stop();
    await ok(api, ['delete', 'rs', 'or-1']);
    assert.deepEqual(await names(api), ['or-1-a', 'or-1-b']);
    gc = enableGarbageCollector(api.server, { debounceMs: 20 });
    await gc.idle();
    assert.deepEqual(await names(api), []);
  } finally {
    gc.stop();
    await api.stop();
  }
});
