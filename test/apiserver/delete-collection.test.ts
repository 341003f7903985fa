// A collection delete (DELETE on a collection) as kube-apiserver serves it: it deletes what its
// ListOptions select, one object after another with the request's DeleteOptions, and answers the
// list of what it deleted (with `limit`, one page and its continue token); an object gone
// meanwhile is passed over, any other failure ends the request with its error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const NS = '/api/v1/namespaces/default';
const CM = `${NS}/configmaps`;
let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

async function create(name: string, labels: Record<string, string>): Promise<any> {
  const r = await api.request('POST', CM, { body: { metadata: { name, labels }, data: { k: name } } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const names = async (query: string): Promise<string[]> => (await api.request('GET', `${CM}?${query}`)).json.items.map((i: any) => i.metadata.name);

test('a collection delete answers the list of the objects it deleted, and deletes only what its selector picks', async () => {
  for (const n of ['sel-a1', 'sel-a2', 'sel-a3']) await create(n, { set: 'sel', app: 'a' });
  await create('sel-b1', { set: 'sel', app: 'b' });

  const dry = await api.request('DELETE', `${CM}?labelSelector=set%3Dsel,app%3Da&dryRun=All`);
  assert.equal(dry.status, 200, dry.text);
  assert.deepEqual(await names('labelSelector=set%3Dsel'), ['sel-a1', 'sel-a2', 'sel-a3', 'sel-b1'], 'a dry run deletes nothing');

  const r = await api.request('DELETE', `${CM}?labelSelector=set%3Dsel,app%3Da`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.kind, 'ConfigMapList');
  assert.equal(r.json.apiVersion, 'v1');
  assert.match(r.json.metadata.resourceVersion, /^\d+$/);
  assert.deepEqual(r.json.items.map((i: any) => [i.kind, i.metadata.name, i.data.k]), [
    ['ConfigMap', 'sel-a1', 'sel-a1'],
    ['ConfigMap', 'sel-a2', 'sel-a2'],
    ['ConfigMap', 'sel-a3', 'sel-a3'],
  ]);
  assert.deepEqual(await names('labelSelector=set%3Dsel'), ['sel-b1']);
});

test('with limit, a collection delete deletes one page and answers it with its continue token', async () => {
  for (const n of ['page-1', 'page-2', 'page-3']) await create(n, { set: 'page' });
  const first = await api.request('DELETE', `${CM}?labelSelector=set%3Dpage&limit=2`);
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.json.items.map((i: any) => i.metadata.name), ['page-1', 'page-2']);
  assert.ok(first.json.metadata.continue, 'a continue token for the rest');
  assert.deepEqual(await names('labelSelector=set%3Dpage'), ['page-3']);

  const rest = await api.request('DELETE', `${CM}?labelSelector=set%3Dpage&limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`);
  assert.equal(rest.status, 200, rest.text);
  assert.deepEqual(rest.json.items.map((i: any) => i.metadata.name), ['page-3']);
  assert.equal(rest.json.metadata.continue, undefined);
  assert.deepEqual(await names('labelSelector=set%3Dpage'), []);
});

test('a failing delete ends the collection delete with its error; the objects after it stay', async () => {
  const first = await create('pre-1', { set: 'pre' });
  await create('pre-2', { set: 'pre' });
  await create('pre-3', { set: 'pre' });
  // The request's preconditions apply to every object: only pre-1 has this uid.
  const r = await api.request('DELETE', `${CM}?labelSelector=set%3Dpre`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: first.metadata.uid } } });
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.reason, 'Conflict');
  assert.match(r.json.message, /^Precondition failed: UID in precondition/);
  assert.deepEqual(await names('labelSelector=set%3Dpre'), ['pre-2', 'pre-3']);
});

test('a bad selector or DeleteOptions is refused before anything is deleted', async () => {
  await create('bad-1', { set: 'bad' });
  const selector = await api.request('DELETE', `${CM}?labelSelector=set%3D%3D%3Dbad`);
  assert.equal(selector.status, 400, selector.text);
  const policy = await api.request('DELETE', `${CM}?labelSelector=set%3Dbad&propagationPolicy=Sometimes`);
  assert.equal(policy.status, 422, policy.text);
  assert.match(policy.json.message, /propagationPolicy/);
  assert.deepEqual(await names('labelSelector=set%3Dbad'), ['bad-1']);
});
