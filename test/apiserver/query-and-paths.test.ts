// Query booleans are read as Go's strconv.ParseBool reads them, for every boolean the server
// reads, and a value it does not know is a 400 naming the parameter; paths kube-apiserver also
// serves with a trailing slash answer as without it. Checked over HTTP and with the real kubectl.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer({ bookmarkIntervalMs: 100 });
  await api.kubectlOk(['create', 'configmap', 'q-a', '-n', 'default']);
});
after(async () => {
  await api.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';
const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** The events of a watch response (one JSON object per line), or undefined when it is not a watch. */
function watchEvents(text: string): { type: string; object: any }[] | undefined {
  const lines = text.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  return lines.every((l) => typeof l.type === 'string' && l.object) ? lines : undefined;
}

test('watch=<every ParseBool spelling> watches or lists as Go would read it', async () => {
  const watches = await Promise.all(TRUE.map((value) => api.request('GET', `${CM}?watch=${value}&timeoutSeconds=1`)));
  for (const [i, r] of watches.entries()) {
    const value = TRUE[i];
    assert.equal(r.status, 200, value);
    const events = watchEvents(r.text);
    assert.ok(events, `watch=${value} is a watch stream: ${r.text.slice(0, 100)}`);
    assert.ok(events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'q-a'));
  }
  for (const value of [...FALSE, '']) {
    const r = await api.request('GET', `${CM}?watch=${value}`);
    assert.equal(r.status, 200, value);
    assert.equal(r.json.kind, 'ConfigMapList', `watch=${value} is a list`);
  }
});

test('allowWatchBookmarks=True asks for bookmarks', async () => {
  const r = await api.request('GET', `${CM}?watch=1&allowWatchBookmarks=True&timeoutSeconds=1`);
  assert.ok(watchEvents(r.text)?.some((e) => e.type === 'BOOKMARK'), r.text.slice(0, 200));
  const none = await api.request('GET', `${CM}?watch=1&allowWatchBookmarks=F&timeoutSeconds=1`);
  assert.ok(!watchEvents(none.text)?.some((e) => e.type === 'BOOKMARK'));
});

test('sendInitialEvents (watch-list): the state first, closed by an initial-events-end bookmark; false sends none', async () => {
  const rv = (await api.request('GET', CM)).json.metadata.resourceVersion;
  const list = await api.request('GET', `${CM}?watch=1&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=1`);
  const events = watchEvents(list.text)!;
  assert.deepEqual(events.slice(0, 2).map((e) => [e.type, e.object.metadata.name ?? e.object.metadata.annotations?.['k8s.io/initial-events-end']]), [['ADDED', 'q-a'], ['BOOKMARK', 'true']]);
  const none = await api.request('GET', `${CM}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`);
  assert.ok(!watchEvents(none.text)?.some((e) => e.type === 'ADDED'), none.text.slice(0, 200));
  const refused = await api.request('GET', `${CM}?watch=1&sendInitialEvents=true`);
  assert.equal(refused.status, 422);
  assert.equal(refused.json.message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
});

test('a boolean that does not parse is a 400 Status naming the parameter', async () => {
  const table: [string, string][] = [
    [`${CM}?watch=yes`, 'watch'],
    [`${CM}?watch=1&allowWatchBookmarks=maybe`, 'allowWatchBookmarks'],
    [`${CM}?watch=1&sendInitialEvents=2`, 'sendInitialEvents'],
    [`${CM}?pretty=nope`, 'pretty'],
    [`${CM}/q-a?watch=on`, 'watch'],
  ];
  for (const [path, parameter] of table) {
    const r = await api.request('GET', path);
    assert.equal(r.status, 400, path);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, new RegExp(`"${parameter}"`), path);
  }
  const force = await api.request('PATCH', `${CM}/q-a?fieldManager=t&force=sure`, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q-a}\n', contentType: 'application/apply-patch+yaml' });
  assert.equal(force.status, 400);
  assert.match(force.json.message, /"force"/);
  const kubectl = await api.kubectl(['get', '--raw', `${CM}?watch=yes`]);
  assert.notEqual(kubectl.code, 0);
  assert.match(kubectl.stderr, /BadRequest|invalid value for query parameter "watch"/);
});

test('pretty=<ParseBool spelling> indents the answer', async () => {
  for (const value of ['True', 't', '1']) {
    const r = await api.request('GET', `${CM}/q-a?pretty=${value}`);
    assert.ok(r.text.startsWith('{\n  "'), r.text.slice(0, 40));
    assert.equal(r.json.metadata.name, 'q-a');
  }
  assert.ok(!(await api.request('GET', `${CM}/q-a?pretty=False`)).text.includes('\n'));
  assert.ok((await api.request('GET', '/version?pretty=true')).text.includes('\n  "major"'));
  assert.equal((await api.request('GET', '/version?pretty=yes')).status, 400);
});

test('trailing slashes are served as without them', async () => {
  const table: [string, (json: any) => void][] = [
    ['/version/', (j) => assert.equal(j.gitVersion, 'v1.33.0+bosun')],
    ['/api/', (j) => assert.equal(j.kind, 'APIVersions')],
    ['/api/v1/', (j) => assert.equal(j.kind, 'APIResourceList')],
    ['/apis/', (j) => assert.equal(j.kind, 'APIGroupList')],
    ['/apis/apps/', (j) => assert.equal(j.kind, 'APIGroup')],
    ['/apis/apps/v1/', (j) => assert.equal(j.groupVersion, 'apps/v1')],
    ['/openapi/v3/', (j) => assert.ok(j.paths['api/v1'])],
    ['/openapi/v3/apis/apps/v1/', (j) => assert.ok(j.openapi)],
    [`${CM}/`, (j) => assert.equal(j.kind, 'ConfigMapList')],
    [`${CM}/q-a/`, (j) => assert.equal(j.metadata.name, 'q-a')],
  ];
  for (const [path, check] of table) {
    const out = await api.kubectlOk(['get', '--raw', path]);
    check(JSON.parse(out));
  }
  for (const path of ['/healthz/', '/readyz/', '/livez/']) assert.equal((await api.request('GET', path)).text, 'ok', path);
});
