// API semantics seen over raw HTTPS: watches (resume, bookmarks, 410 after compaction, timeout,
// DELETED carrying the deletion's resourceVersion), paging, generateName, dryRun, status
// subresources, discovery content types, health, metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { collectWatch, startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer({ bookmarkIntervalMs: 200 });
});
after(async () => {
  await api.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';

/** Opens a watch and collects its events until the server closes it or `ms` pass. */
const watch = (path: string, ms: number, accept?: string) => collectWatch(api, path, ms, accept);

test('watch: resume from a resourceVersion, DELETED carries its own RV, bookmarks, timeoutSeconds', async () => {
  const a = await api.request('POST', CM, { body: { metadata: { name: 'wa' } } });
  const rv = a.json.metadata.resourceVersion;
  const pending = watch(`${CM}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`, 5000);
  await new Promise((r) => setTimeout(r, 100));
  await api.request('PATCH', `${CM}/wa`, { body: { data: { x: '1' } }, contentType: 'application/merge-patch+json' });
  const del = await api.request('DELETE', `${CM}/wa`);
  const { events, closedByServer } = await pending;
  assert.ok(closedByServer, 'the server ends the watch after timeoutSeconds');
  const changes = events.filter((e) => e.type !== 'BOOKMARK');
  assert.deepEqual(changes.map((e) => e.type), ['MODIFIED', 'DELETED']);
  for (const e of changes) {
    assert.equal(e.object.kind, 'ConfigMap');
    assert.equal(e.object.apiVersion, 'v1');
  }
  assert.equal(changes[1].object.metadata.resourceVersion, del.json.metadata.resourceVersion);
  assert.ok(Number(del.json.metadata.resourceVersion) > Number(changes[0].object.metadata.resourceVersion));
  const bookmark = events.find((e) => e.type === 'BOOKMARK');
  assert.ok(bookmark, 'a bookmark arrives when asked for');
  assert.deepEqual(Object.keys(bookmark.object.metadata), ['resourceVersion']);
});

test('watch without a resourceVersion starts with the current state; a compacted one gets 410', async () => {
  await api.request('POST', CM, { body: { metadata: { name: 'existing' } } });
  const { events } = await watch(`${CM}?watch=1&timeoutSeconds=1`, 3000);
  assert.ok(events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'existing'));
  for (let i = 0; i < 10; i++) await api.request('POST', CM, { body: { metadata: { name: `churn-${i}` } } });
  api.server.storage.compact(3);
  const expired = await watch(`${CM}?watch=1&resourceVersion=1`, 3000);
  assert.equal(expired.events.length, 1);
  assert.equal(expired.events[0].type, 'ERROR');
  assert.equal(expired.events[0].object.code, 410);
  assert.equal(expired.events[0].object.reason, 'Expired');
  assert.match(expired.events[0].object.message, /too old resource version/);
  assert.ok(expired.closedByServer);
});

test('watch with a label selector: an object entering it is ADDED, leaving it DELETED — live and replayed', async () => {
  const start = (await api.request('GET', CM)).json.metadata.resourceVersion;
  const selector = `${CM}?watch=1&labelSelector=app%3Dweb&timeoutSeconds=1`;
  const live = watch(`${selector}&resourceVersion=${start}`, 5000);
  await new Promise((r) => setTimeout(r, 100));
  const merge = (body: unknown) => api.request('PATCH', `${CM}/sel`, { body, contentType: 'application/merge-patch+json' });
  await api.request('POST', CM, { body: { metadata: { name: 'sel' } } });
  await merge({ metadata: { labels: { app: 'web' } } });
  await merge({ data: { k: 'v' } });
  const left = (await merge({ metadata: { labels: { app: 'db' } } })).json.metadata.resourceVersion;
  await merge({ data: { k: 'w' } });
  // DELETED carries the object as it last matched, at the resourceVersion of the change that took it out.
  const expected = [['ADDED', 'web', undefined], ['MODIFIED', 'web', 'v'], ['DELETED', 'web', 'v']];
  const shape = (events: any[]) => events.filter((e) => e.object.metadata?.name === 'sel').map((e) => [e.type, e.object.metadata.labels?.app, e.object.data?.k]);
  const seen = (await live).events;
  assert.deepEqual(shape(seen), expected);
  assert.equal(seen.find((e) => e.type === 'DELETED')?.object.metadata.resourceVersion, left);
  // The same from the store's history (the events replayed, each with the object it replaced).
  assert.deepEqual(shape((await watch(`${selector}&resourceVersion=${start}`, 3000)).events), expected);
});

test('watch as Table: one-row tables, column definitions only on the first', async () => {
  await api.request('POST', CM, { body: { metadata: { name: 'tab-a' } } });
  await api.request('POST', CM, { body: { metadata: { name: 'tab-b' } } });
  const { events } = await watch(`${CM}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%21%3Dexisting`, 3000, 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json');
  assert.ok(events.length >= 2);
  assert.equal(events[0].object.kind, 'Table');
  assert.deepEqual(events[0].object.columnDefinitions.map((c: any) => c.name), ['Name', 'Data', 'Age']);
  assert.deepEqual(events[1].object.columnDefinitions, []);
  assert.equal(events[1].object.rows.length, 1);
});

test('paging with limit and continue gives every object once', async () => {
  await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'paging' } } });
  for (let i = 0; i < 25; i++) await api.request('POST', '/api/v1/namespaces/paging/configmaps', { body: { metadata: { name: `p-${String(i).padStart(2, '0')}` } } });
  const names: string[] = [];
  let token = '';
  let pages = 0;
  do {
    const r = await api.request('GET', `/api/v1/namespaces/paging/configmaps?limit=10${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    assert.equal(r.status, 200);
    names.push(...r.json.items.map((i: any) => i.metadata.name));
    token = r.json.metadata.continue ?? '';
    pages++;
    if (pages === 1) await api.request('POST', '/api/v1/namespaces/paging/configmaps', { body: { metadata: { name: 'p-00a-late' } } });
  } while (token);
  assert.equal(pages, 3);
  assert.deepEqual(names, Array.from({ length: 25 }, (_, i) => `p-${String(i).padStart(2, '0')}`), 'later pages come from the first page\'s snapshot');
  assert.equal((await api.request('GET', '/api/v1/namespaces/paging/configmaps?continue=garbage')).status, 400);
});

test('generateName, dryRun, status subresource and generation', async () => {
  const gen = await api.request('POST', CM, { body: { metadata: { generateName: 'gen-' } } });
  assert.equal(gen.status, 201);
  assert.match(gen.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.match(gen.json.metadata.uid, /^[0-9a-f-]{36}$/);
  const dry = await api.request('POST', `${CM}?dryRun=All`, { body: { metadata: { name: 'dry' } } });
  assert.equal(dry.status, 201);
  assert.equal((await api.request('GET', `${CM}/dry`)).status, 404);
  const rvBefore = api.server.storage.currentRevision();
  await api.request('PATCH', `${CM}/${gen.json.metadata.name}?dryRun=All`, { body: { data: { a: 'b' } }, contentType: 'application/merge-patch+json' });
  assert.equal(api.server.storage.currentRevision(), rvBefore, 'a dry run writes nothing');

  const dep = {
    metadata: { name: 'gen-test' },
    spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    status: { replicas: 7 },
  };
  const created = await api.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: dep });
  assert.equal(created.json.metadata.generation, 1);
  const statusOnly = await api.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/gen-test/status', { body: { status: { readyReplicas: 1 }, spec: { replicas: 5 } }, contentType: 'application/merge-patch+json' });
  assert.equal(statusOnly.json.status.readyReplicas, 1);
  assert.equal(statusOnly.json.spec.replicas, 1, '/status changes only status');
  assert.equal(statusOnly.json.metadata.generation, 1);
  const specOnly = await api.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/gen-test', { body: { spec: { replicas: 3 }, status: { readyReplicas: 9 } }, contentType: 'application/merge-patch+json' });
  assert.equal(specOnly.json.spec.replicas, 3);
  assert.equal(specOnly.json.status.readyReplicas, 1, 'the main endpoint ignores status');
  assert.equal(specOnly.json.metadata.generation, 2);
});

test('discovery, version, health and metrics', async () => {
  for (const path of ['/api', '/apis', '/api/v1', '/apis/apps/v1', '/version']) {
    const r = await api.request('GET', path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers['content-type'], 'application/json', `${path} content type`);
  }
  const v1 = await api.request('GET', '/api/v1');
  const pods = v1.json.resources.find((r: any) => r.name === 'pods');
  assert.deepEqual(pods.shortNames, ['po']);
  assert.ok(pods.storageVersionHash);
  assert.ok(v1.json.resources.some((r: any) => r.name === 'pods/status'));
  assert.equal((await api.request('GET', '/version', { token: null })).json.gitVersion, 'v1.33.0+bosun');
  assert.equal((await api.request('GET', '/readyz', { token: null })).text, 'ok');
  assert.equal((await api.request('GET', '/api/v1/namespaces', { token: null })).status, 401);
  const metrics = await api.request('GET', '/metrics');
  // kube-apiserver's names and labels (test/apiserver/metrics.test.ts checks them in detail).
  assert.match(metrics.text, /apiserver_request_total\{[^}]*verb="GET"[^}]*resource="configmaps"[^}]*scope="resource"[^}]*code="404"\} \d+/);
  assert.match(metrics.text, /apiserver_storage_objects\{resource="configmaps"\} \d+/);
  assert.match(metrics.text, /apiserver_request_duration_seconds_bucket/);
});
