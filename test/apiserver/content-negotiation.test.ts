// The Accept header, negotiated as kube-apiserver does: metadata alone for client-go's metadata
// client (the exact headers it sends), Tables in both meta.k8s.io versions, clauses this server
// cannot answer passed over, and 406 or 400 with a Status when nothing or something wrong is asked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { negotiateOutput } from '../../src/apiserver/http/negotiate.js';
import { ApiError } from '../../src/apiserver/errors.js';
import { collectWatch, startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  for (const name of ['meta-a', 'meta-b', 'meta-c']) {
    const created = await api.request('POST', CM, { body: { metadata: { name, labels: { app: 'meta' }, annotations: { note: name } }, data: { big: 'x'.repeat(1000) } } });
    assert.equal(created.status, 201, created.text);
  }
});
after(async () => {
  await api.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';
// client-go's metadata client (metadata/metadata.go) sends these, protobuf first.
const METADATA_LIST = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_ONE = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

test('the metadata client lists metadata alone, page by page, with the list metadata of a list', async () => {
  const first = await api.request('GET', `${CM}?labelSelector=app%3Dmeta&limit=2`, { accept: METADATA_LIST });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.headers['content-type'], 'application/json');
  assert.equal(first.json.kind, 'PartialObjectMetadataList');
  assert.equal(first.json.apiVersion, 'meta.k8s.io/v1');
  assert.match(first.json.metadata.resourceVersion, /^\d+$/);
  assert.ok(first.json.metadata.continue, 'a page that is not the last names the next');
  assert.deepEqual(first.json.items.map((i: any) => [i.kind, i.apiVersion, i.metadata.name, i.metadata.annotations.note]), [
    ['PartialObjectMetadata', 'meta.k8s.io/v1', 'meta-a', 'meta-a'],
    ['PartialObjectMetadata', 'meta.k8s.io/v1', 'meta-b', 'meta-b'],
  ]);
  assert.equal(first.json.items[0].data, undefined, 'no data, only metadata');
  assert.ok(first.json.items[0].metadata.uid && first.json.items[0].metadata.managedFields, 'the whole ObjectMeta, as kube sends it');
  const second = await api.request('GET', `${CM}?labelSelector=app%3Dmeta&limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`, { accept: METADATA_LIST });
  assert.deepEqual(second.json.items.map((i: any) => i.metadata.name), ['meta-c']);
  assert.equal(second.json.metadata.continue, undefined);

  const beta = await api.request('GET', `${CM}?labelSelector=app%3Dmeta`, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1' });
  assert.equal(beta.json.apiVersion, 'meta.k8s.io/v1beta1');
  assert.equal(beta.json.items[0].apiVersion, 'meta.k8s.io/v1beta1');
});

test('the metadata client gets, patches and deletes one object as PartialObjectMetadata', async () => {
  const got = await api.request('GET', `${CM}/meta-a`, { accept: METADATA_ONE });
  assert.equal(got.status, 200, got.text);
  assert.deepEqual([got.json.kind, got.json.apiVersion, got.json.metadata.name, Object.keys(got.json).sort()], ['PartialObjectMetadata', 'meta.k8s.io/v1', 'meta-a', ['apiVersion', 'kind', 'metadata']]);

  const patched = await api.request('PATCH', `${CM}/meta-b`, { accept: METADATA_ONE, contentType: 'application/merge-patch+json', body: { metadata: { labels: { patched: 'yes' } } } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.kind, 'PartialObjectMetadata');
  assert.equal(patched.json.metadata.labels.patched, 'yes');
  assert.equal((await api.request('GET', `${CM}/meta-b`)).json.data.big.length, 1000, 'the patch changed only what it said');

  const created = await api.request('POST', CM, { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1', body: { metadata: { name: 'meta-created' } } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual([created.json.kind, created.json.apiVersion], ['PartialObjectMetadata', 'meta.k8s.io/v1beta1']);
  const deleted = await api.request('DELETE', `${CM}/meta-created`, { accept: METADATA_ONE });
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal(deleted.json.kind, 'PartialObjectMetadata');
  assert.equal((await api.request('GET', `${CM}/meta-created`)).status, 404);
});

test('a list asked for as one object, or one object as a list, is refused 406 with a Status', async () => {
  const list = await api.request('GET', CM, { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' });
  assert.equal(list.status, 406, list.text);
  assert.deepEqual([list.json.kind, list.json.reason, list.json.code], ['Status', 'NotAcceptable', 406]);
  assert.match(list.json.message, /you requested PartialObjectMetadata, but the requested object is a list \(ConfigMapList\)/);
  const one = await api.request('GET', `${CM}/meta-a`, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' });
  assert.equal(one.status, 406, one.text);
  assert.match(one.json.message, /you requested PartialObjectMetadataList, but the requested object is not a list \(ConfigMap\)/);
  // Nothing was written on the way.
  const write = await api.request('POST', CM, { accept: 'application/json;as=Nope;g=meta.k8s.io;v=v1', body: { metadata: { name: 'meta-refused' } } });
  assert.equal(write.status, 406, write.text);
  assert.equal((await api.request('GET', `${CM}/meta-refused`)).status, 404, 'a refused request writes nothing');
});

test('clauses this server cannot answer are passed over; none left is a 406 naming what is served', async () => {
  const protobufFirst = await api.request('GET', `${CM}/meta-a`, { accept: 'application/vnd.kubernetes.protobuf,application/json' });
  assert.equal(protobufFirst.status, 200);
  assert.equal(protobufFirst.json.kind, 'ConfigMap');
  const unknownVersion = await api.request('GET', CM, { accept: 'application/json;as=Table;g=meta.k8s.io;v=v2,application/json' });
  assert.equal(unknownVersion.json.kind, 'ConfigMapList', 'a Table version that does not exist falls back to the next clause');
  const preferred = await api.request('GET', CM, { accept: 'application/json;q=0.5,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' });
  assert.equal(preferred.json.kind, 'PartialObjectMetadataList', 'the higher q wins over the header order');
  for (const accept of ['application/vnd.kubernetes.protobuf', 'text/html', 'application/json;as=Table;g=meta.k8s.io;v=v2', 'application/json;as=Table;g=other.io;v=v1', 'application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1']) {
    const refused = await api.request('GET', CM, { accept });
    assert.equal(refused.status, 406, accept);
    assert.equal(refused.json.reason, 'NotAcceptable');
    assert.equal(refused.json.message, 'only the following media types are accepted: application/json, application/yaml');
  }
});

test('Tables in meta.k8s.io/v1beta1 and for writes; a bad includeObject is a 400', async () => {
  const beta = await api.request('GET', `${CM}?labelSelector=app%3Dmeta`, { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' });
  assert.equal(beta.status, 200, beta.text);
  assert.deepEqual([beta.json.kind, beta.json.apiVersion, beta.json.rows[0].object.apiVersion], ['Table', 'meta.k8s.io/v1beta1', 'meta.k8s.io/v1beta1']);
  const created = await api.request('POST', CM, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io', body: { metadata: { name: 'meta-table' } } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.kind, 'Table');
  assert.equal(created.json.rows[0].cells[0], 'meta-table');
  const bad = await api.request('GET', `${CM}?includeObject=Everything`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.json.message, `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`);
  assert.equal((await api.request('GET', `${CM}?includeObject=Everything`)).status, 200, 'includeObject matters only for a Table');
});

test('a metadata watch carries PartialObjectMetadata events, initial and live', async () => {
  const watching = collectWatch(api, `${CM}?watch=true&labelSelector=app%3Dmeta&timeoutSeconds=2`, 5000, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json');
  await new Promise((r) => setTimeout(r, 300));
  await api.request('PATCH', `${CM}/meta-c`, { contentType: 'application/merge-patch+json', body: { metadata: { annotations: { note: 'changed' } } } });
  const { events } = await watching;
  const names = events.map((e) => `${e.type} ${e.object.kind} ${e.object.metadata.name}`);
  assert.ok(names.includes('ADDED PartialObjectMetadata meta-a'), names.join('; '));
  const modified = events.find((e) => e.type === 'MODIFIED');
  assert.equal(modified?.object.kind, 'PartialObjectMetadata', names.join('; '));
  assert.equal(modified.object.metadata.annotations.note, 'changed');
  assert.equal(modified.object.data, undefined);
});

test('YAML answers with sorted keys, Tables too; a watch in YAML is refused (YAML has no stream framing)', async () => {
  const one = await api.request('GET', `${CM}/meta-a`, { accept: 'application/yaml' });
  assert.equal(one.status, 200, one.text);
  assert.equal(one.headers['content-type'], 'application/yaml');
  const parsed = YAML.parse(one.text);
  assert.equal(parsed.kind, 'ConfigMap');
  assert.equal(parsed.data.big, 'x'.repeat(1000), 'a long string is one line, not folded');
  assert.deepEqual(Object.keys(parsed), ['apiVersion', 'data', 'kind', 'metadata'], 'keys sorted, as kube-apiserver writes them');
  const table = await api.request('GET', `${CM}?labelSelector=app%3Dmeta`, { accept: 'application/yaml;as=Table;g=meta.k8s.io;v=v1' });
  assert.equal(YAML.parse(table.text).kind, 'Table');
  const created = await api.request('POST', CM, { accept: 'application/yaml', body: { metadata: { name: 'meta-yaml' } } });
  assert.equal(created.status, 201);
  assert.equal(YAML.parse(created.text).metadata.name, 'meta-yaml');
  const watch = await api.request('GET', `${CM}?watch=true&timeoutSeconds=1`, { accept: 'application/yaml' });
  assert.equal(watch.status, 406, watch.text);
  assert.equal(watch.headers['content-type'], 'application/yaml', 'the error in the media type the request negotiates, as kube-apiserver writes it');
  assert.equal(YAML.parse(watch.text).message, 'only the following media types are accepted: application/json;stream=watch');
  const either = await api.request('GET', `${CM}?watch=true&timeoutSeconds=1`, { accept: 'application/yaml, application/json' });
  assert.equal(either.status, 200, 'a watch falls back to JSON when offered');
});

test('errors come in the negotiated media type: YAML when asked for, JSON when nothing answerable was', async () => {
  const missing = await api.request('GET', `${CM}/no-such-map`, { accept: 'application/yaml' });
  assert.equal(missing.status, 404, missing.text);
  assert.equal(missing.headers['content-type'], 'application/yaml');
  assert.deepEqual(YAML.parse(missing.text), { apiVersion: 'v1', code: 404, details: { kind: 'configmaps', name: 'no-such-map' }, kind: 'Status', message: 'configmaps "no-such-map" not found', metadata: {}, reason: 'NotFound', status: 'Failure' });
  const invalid = await api.request('POST', CM, { accept: 'application/yaml', body: { metadata: { name: 'Not_A_Name' } } });
  assert.equal(invalid.status, 422, invalid.text);
  assert.equal(YAML.parse(invalid.text).reason, 'Invalid');
  const protobuf = await api.request('GET', `${CM}/no-such-map`, { accept: 'application/vnd.kubernetes.protobuf' });
  assert.equal(protobuf.status, 406, protobuf.text);
  assert.equal(protobuf.headers['content-type'], 'application/json');
  assert.equal(protobuf.json.reason, 'NotAcceptable');
});

test('negotiation: q and specificity order the clauses; a lone * is */*; empty clauses are skipped', () => {
  const json = { mediaType: 'application/json' };
  assert.deepEqual(negotiateOutput(undefined), json);
  assert.deepEqual(negotiateOutput(''), json);
  assert.deepEqual(negotiateOutput('*'), json);
  assert.deepEqual(negotiateOutput(' , application/json'), json);
  assert.deepEqual(negotiateOutput('application/yaml;q=0.9, application/json'), json);
  assert.deepEqual(negotiateOutput('application/json;q=0.9, application/yaml'), { mediaType: 'application/yaml' });
  assert.deepEqual(negotiateOutput('*/*, application/json;as="Table";g=meta.k8s.io;v=v1'), { mediaType: 'application/json', transform: { kind: 'Table', version: 'v1' } }, 'the concrete type before */*');
  assert.deepEqual(negotiateOutput('application/*;as=Table;g=meta.k8s.io;v=v1'), { mediaType: 'application/json', transform: { kind: 'Table', version: 'v1' } });
  assert.deepEqual(negotiateOutput('application/json;stream=watch', true), json);
  assert.throws(() => negotiateOutput('application/json;stream=other'), (e: unknown) => e instanceof ApiError && e.code === 406);
  assert.throws(() => negotiateOutput('application/json;as=PartialObjectMetadata'), (e: unknown) => e instanceof ApiError && e.code === 406, 'as without g and v');
});

test('a POST to a resource this server does not serve is a 404 whatever its body: kubectl create ingress sends protobuf', async () => {
  const ingress = await api.kubectl(['create', 'ingress', 'web', '--rule=web.example.com/*=web:80']);
  assert.notEqual(ingress.code, 0);
  assert.match(ingress.stderr, /the server could not find the requested resource/, ingress.stderr);
  // A body in a protobuf kind this server has no message for, to a path nobody serves.
  // (the magic, then an Unknown envelope with an empty TypeMeta: bytes below 0x80 alike in a string)
  const framed = 'k8s\u0000\n\u0000';
  const raw = await api.request('POST', '/apis/example.io/v1/namespaces/default/widgets', { body: framed, contentType: 'application/vnd.kubernetes.protobuf' });
  assert.equal(raw.status, 404, raw.text);
});
