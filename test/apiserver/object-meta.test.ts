// Every kind's metadata checked as kube's ValidateObjectMeta checks it, through the real kubectl
// and raw requests: annotation keys and their 256 KiB total, finalizer names and the
// orphan/foregroundDeletion conflict, owner references (complete, a parsable apiVersion, no
// Event as owner, one controller). A refused write is a 422 naming the field and changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOTAL_ANNOTATION_SIZE_LIMIT } from '../../src/apiserver/admission/validation.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const CM = '/api/v1/namespaces/default/configmaps';
let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  assert.equal((await api.request('POST', CM, { body: { metadata: { name: 'meta' }, data: { k: 'v' } } })).status, 201);
});
after(async () => {
  await api.stop();
});

async function refused(body: unknown, field: string, message: string | RegExp): Promise<void> {
  const answer = await api.request('PATCH', `${CM}/meta`, { contentType: 'application/merge-patch+json', body });
  assert.equal(answer.status, 422, `${JSON.stringify(body).slice(0, 120)}: ${answer.text.slice(0, 300)}`);
  assert.equal(answer.json.reason, 'Invalid');
  assert.ok(answer.json.details.causes.some((c: any) => c.field === field), `${field} in ${JSON.stringify(answer.json.details.causes)}`);
  assert.match(answer.json.message, typeof message === 'string' ? new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : message);
  const stored = (await api.request('GET', `${CM}/meta`)).json;
  assert.deepEqual([stored.metadata.annotations, stored.metadata.finalizers, stored.metadata.ownerReferences], [undefined, undefined, undefined], 'a refused write changes nothing');
}

test('annotations: keys are qualified names whatever their case, 256 KiB in all', async () => {
  const key = 'example.com/big';
  const fits = 'x'.repeat(TOTAL_ANNOTATION_SIZE_LIMIT - key.length);
  const atLimit = await api.request('POST', CM, { body: { metadata: { name: 'at-limit', annotations: { [key]: fits, 'Example.COM/Case': '' } } } });
  assert.equal(atLimit.status, 422, 'the second key takes it over the limit');
  const exactly = await api.request('POST', CM, { body: { metadata: { name: 'at-limit', annotations: { [key]: fits } } } });
  assert.equal(exactly.status, 201, `exactly ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes are allowed: ${exactly.text.slice(0, 200)}`);
  await refused({ metadata: { annotations: { [key]: `${fits}x` } } }, 'metadata.annotations', `ConfigMap "meta" is invalid: metadata.annotations: Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`);
  await refused({ metadata: { annotations: { 'bad key': 'v' } } }, 'metadata.annotations', 'metadata.annotations: Invalid value: "bad key": name part of "bad key" must consist of alphanumeric characters');
  const over = await api.kubectl(['annotate', 'configmap', 'at-limit', 'example.com/more=y']);
  assert.match(over.stderr, /metadata\.annotations: Too long: may not be more than 262144 bytes/, 'one more byte on an object at the limit');
  assert.equal((await api.request('POST', CM, { body: { metadata: { name: 'upper' } } })).status, 201);
  const upper = await api.kubectl(['annotate', 'configmap', 'upper', 'Example.COM/Upper=yes']);
  assert.equal(upper.code, 0, `an upper-case key is fine: ${upper.stderr}`);
});

test('finalizers: qualified names, and not both orphan and foregroundDeletion', async () => {
  const bad = await api.kubectl(['patch', 'configmap', 'meta', '--type=json', '-p', '[{"op":"add","path":"/metadata/finalizers","value":["bad finalizer"]}]']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /metadata\.finalizers: Invalid value: "bad finalizer": name part of "bad finalizer" must consist of/);
  await refused({ metadata: { finalizers: ['orphan', 'foregroundDeletion'] } }, 'metadata.finalizers', 'finalizer orphan and foregroundDeletion cannot be both set');
  const good = await api.request('POST', CM, { body: { metadata: { name: 'finalized', finalizers: ['example.com/keep', 'orphan'] } } });
  assert.equal(good.status, 201, good.text);
  assert.equal((await api.request('PATCH', `${CM}/finalized`, { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: [] } } })).status, 200);
});

test('owner references: complete, a parsable apiVersion, no Event as owner, at most one controller', async () => {
  const owner = (over: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1', ...over });
  await refused({ metadata: { ownerReferences: [owner({ uid: undefined })] } }, 'metadata.ownerReferences[0].uid', 'metadata.ownerReferences[0].uid: Required value: must not be empty');
  await refused({ metadata: { ownerReferences: [owner({ apiVersion: 'a/b/c' })] } }, 'metadata.ownerReferences[0].apiVersion', 'Invalid value: "a/b/c": must be <group>/<version> or <version>');
  await refused({ metadata: { ownerReferences: [owner({ kind: 'Event' })] } }, 'metadata.ownerReferences[0]', '/v1, Kind=Event is disallowed from being an owner');
  await refused(
    { metadata: { ownerReferences: [owner({ controller: true }), owner({ name: 'q', uid: 'u2', controller: true })] } },
    'metadata.ownerReferences',
    'Only one reference can have Controller set to true. Found "true" in references for Pod/p and Pod/q',
  );
  const ok = await api.request('PATCH', `${CM}/meta`, { contentType: 'application/merge-patch+json', body: { metadata: { ownerReferences: [owner({ controller: true }), owner({ name: 'q', uid: 'u2', apiVersion: 'apps/v1', kind: 'ReplicaSet' })] } } });
  assert.equal(ok.status, 200, ok.text);
});
