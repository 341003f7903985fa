// Reads at a resourceVersion, as kube's ListOptions define them: a list at an exact revision shows
// the objects as they were then (410 once compacted); "not older than" a revision this server has
// not reached waits for it, then answers 504 ResourceVersionTooLarge, which client-go's reflector
// answers by listing again; resourceVersionMatch is checked as kube-apiserver checks it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FRESHNESS_WAIT_MS } from '../../src/apiserver/handlers/read.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const CM = '/api/v1/namespaces/default/configmaps';
let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

async function rv(): Promise<number> {
  return Number((await api.request('GET', CM)).json.metadata.resourceVersion);
}

test('a list at an exact resourceVersion shows the objects as they were; not older than it, as they are', async () => {
  await api.request('POST', CM, { body: { metadata: { name: 'rv-a' }, data: { v: 'old' } } });
  const before = await rv();
  await api.request('PATCH', `${CM}/rv-a`, { contentType: 'application/merge-patch+json', body: { data: { v: 'new' } } });
  await api.request('POST', CM, { body: { metadata: { name: 'rv-b' } } });

  const exact = await api.request('GET', `${CM}?resourceVersion=${before}&resourceVersionMatch=Exact`);
  assert.equal(exact.status, 200, exact.text);
  assert.equal(exact.json.metadata.resourceVersion, String(before));
  assert.deepEqual(exact.json.items.map((i: any) => [i.metadata.name, i.data?.v]), [['rv-a', 'old']]);

  for (const query of [`resourceVersion=${before}&resourceVersionMatch=NotOlderThan`, `resourceVersion=${before}`, 'resourceVersion=0', '']) {
    const now = await api.request('GET', `${CM}?${query}`);
    assert.equal(now.status, 200, `${query}: ${now.text}`);
    assert.deepEqual(now.json.items.map((i: any) => [i.metadata.name, i.data?.v]), [['rv-a', 'new'], ['rv-b', undefined]], query);
  }
  // Exact and paged: the next page stays at that revision.
  const page = await api.request('GET', `${CM}?resourceVersion=${before}&resourceVersionMatch=Exact&limit=1`);
  assert.equal(page.json.metadata.continue, undefined, 'one object existed then');

  api.server.storage.compact(1);
  const gone = await api.request('GET', `${CM}?resourceVersion=${before}&resourceVersionMatch=Exact`);
  assert.equal(gone.status, 410, gone.text);
  assert.deepEqual([gone.json.reason, gone.json.message], ['Expired', 'The resourceVersion for the provided list is too old.']);
});

test('a resourceVersion the server has not reached: the read waits for it, then answers 504 ResourceVersionTooLarge', async () => {
  const current = await rv();
  const started = Date.now();
  const late = await api.request('GET', `${CM}?resourceVersion=${current + 1000}`);
  const waited = Date.now() - started;
  assert.equal(late.status, 504, late.text);
  assert.equal(late.headers['retry-after'], '1');
  assert.equal(late.json.reason, 'Timeout');
  assert.match(late.json.message, new RegExp(`^Timeout: Too large resource version: ${current + 1000}, current: \\d+$`));
  assert.deepEqual(late.json.details, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
  assert.ok(waited >= FRESHNESS_WAIT_MS - 100, `answered after ${waited} ms, before the wait was over`);

  const get = await api.request('GET', `${CM}/rv-a?resourceVersion=${current + 1000}`);
  assert.equal(get.status, 504, 'a get too');

  // A write that reaches the revision lets the waiting read through.
  const next = await rv();
  const waiting = api.request('GET', `${CM}?resourceVersion=${next + 1}&resourceVersionMatch=NotOlderThan`);
  await new Promise((r) => setTimeout(r, 200));
  await api.request('POST', CM, { body: { metadata: { name: 'rv-c' } } });
  const through = await waiting;
  assert.equal(through.status, 200, through.text);
  assert.ok(through.json.items.some((i: any) => i.metadata.name === 'rv-c'));
  const oneObject = await api.request('GET', `${CM}/rv-c?resourceVersion=${next + 1}`);
  assert.equal(oneObject.status, 200, oneObject.text);
});

test('resourceVersionMatch and continue checked as kube-apiserver checks ListOptions', async () => {
  const cases: Array<[string, number, string]> = [
    ['resourceVersionMatch=Exact', 422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ['resourceVersion=1&resourceVersionMatch=Newest', 422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'],
    ['resourceVersion=0&resourceVersionMatch=Exact', 422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
    ['resourceVersion=abc', 400, 'invalid resource version: abc'],
  ];
  for (const [query, code, message] of cases) {
    const answer = await api.request('GET', `${CM}?${query}`);
    assert.equal(answer.status, code, `${query}: ${answer.text}`);
    assert.equal(answer.json.message, message, query);
  }
  const first = await api.request('GET', `${CM}?limit=1`);
  const token = encodeURIComponent(first.json.metadata.continue);
  const withRv = await api.request('GET', `${CM}?limit=1&continue=${token}&resourceVersion=5`);
  assert.deepEqual([withRv.status, withRv.json.message], [400, 'specifying resource version is not allowed when using continue']);
  const withMatch = await api.request('GET', `${CM}?limit=1&continue=${token}&resourceVersion=5&resourceVersionMatch=NotOlderThan`);
  assert.equal(withMatch.status, 422, withMatch.text);
  assert.match(withMatch.json.message, /resourceVersionMatch is forbidden when continue is provided/);
  assert.equal((await api.request('GET', `${CM}?limit=1&continue=${token}&resourceVersion=0`)).status, 200, 'resourceVersion 0 with continue is allowed');
});
