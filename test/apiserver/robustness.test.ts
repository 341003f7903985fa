// Hundreds of malformed or mutated requests, generated from a seeded PRNG: each gets the right
// Status code with a well-formed Status body, nothing it touched changes, and the server stays up.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer, type RequestOptions } from '../helpers/apiserver.js';
import { prng } from '../helpers/prng.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

interface Case {
  what: string;
  method: string;
  path: string;
  options?: RequestOptions;
  code: number;
  reason?: string;
}

const CM = '/api/v1/namespaces/default/configmaps';

function generate(random: () => number, staleRV: string): Case[] {
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const word = () => Math.floor(random() * 1e9).toString(36);
  const cases: Case[] = [];
  for (let i = 0; i < 300; i++) {
    const n = `r${i}`;
    switch (i % 12) {
      case 0: {
        const junk = pick(['{', '{"metadata":', 'not json', '[1,2', '{"a":}', '\u0000\u0001', '{"metadata":{"name":"x"}}}']);
        cases.push({ what: `malformed JSON ${JSON.stringify(junk)}`, method: 'POST', path: CM, options: { body: junk }, code: 400, reason: 'BadRequest' });
        break;
      }
      case 1:
        cases.push({ what: 'wrong kind', method: 'POST', path: CM, options: { body: { apiVersion: 'v1', kind: pick(['Pod', 'Secret', 'Widget']), metadata: { name: n } } }, code: 400, reason: 'BadRequest' });
        break;
      case 2: {
        const bad = pick([`UPPER${i}`, `under_score${i}`, `-lead${i}`, `trail${i}-`, 'x'.repeat(254), `sp ace${i}`, `dot..${i}`]);
        cases.push({ what: `invalid name ${bad.slice(0, 20)}`, method: 'POST', path: CM, options: { body: { metadata: { name: bad } } }, code: 422, reason: 'Invalid' });
        break;
      }
      case 3:
        cases.push({
          what: 'bad JSON patch',
          method: 'PATCH',
          path: `${CM}/keep`,
          options: { body: pick([[{ op: 'remove', path: '/data/nope' }], [{ op: 'bogus', path: '/a' }], [{ op: 'test', path: '/data/k', value: 'other' }], { op: 'add' }]), contentType: 'application/json-patch+json' },
          code: 422,
          reason: 'Invalid',
        });
        break;
      case 4:
        cases.push({ what: 'stale resourceVersion', method: 'PUT', path: `${CM}/keep`, options: { body: { metadata: { name: 'keep', resourceVersion: staleRV }, data: { k: word() } } }, code: 409, reason: 'Conflict' });
        break;
      case 5: {
        const sel = pick(['labelSelector=a%20in%20(', 'labelSelector=!!x', 'labelSelector=a=b=c', 'fieldSelector=spec.bogus%3Dx', 'fieldSelector=nonsense', 'labelSelector=a%20in%20()']);
        cases.push({ what: `bad selector ${sel}`, method: 'GET', path: `${CM}?${sel}`, code: 400, reason: 'BadRequest' });
        break;
      }
      case 6:
        cases.push({ what: 'unsupported patch type', method: 'PATCH', path: `${CM}/keep`, options: { body: '{}', contentType: pick(['text/plain', 'application/xml', 'application/json']) }, code: 415, reason: 'UnsupportedMediaType' });
        break;
      case 7:
        cases.push({ what: 'wrong method', method: pick(['PUT', 'PATCH']), path: CM, options: { body: {} }, code: 405, reason: 'MethodNotAllowed' });
        break;
      case 8:
        cases.push({ what: 'unknown resource', method: 'GET', path: pick(['/api/v1/widgets', '/apis/nope.example.com/v1/things', '/api/v1/namespaces/default/configmaps/keep/nosuchsub', '/apis/apps/v9/deployments']), code: 404, reason: 'NotFound' });
        break;
      case 9:
        cases.push({ what: 'missing or bad token', method: 'GET', path: CM, options: { token: pick([null, 'bogus', '']) }, code: 401, reason: 'Unauthorized' });
        break;
      case 10:
        cases.push({ what: 'missing namespace', method: 'POST', path: `/api/v1/namespaces/ns-${word()}-missing/configmaps`, options: { body: { metadata: { name: n } } }, code: 404, reason: 'NotFound' });
        break;
      case 11:
        cases.push({ what: 'required field missing', method: 'POST', path: '/api/v1/namespaces/default/pods', options: { body: { metadata: { name: n }, spec: pick([{}, { containers: [] }, { containers: [{ name: 'a' }] }]) } }, code: 422, reason: 'Invalid' });
        break;
    }
  }
  return cases;
}

test('malformed and mutated requests get the right Status and change nothing', async () => {
  const created = await api.request('POST', CM, { body: { metadata: { name: 'keep' }, data: { k: 'v' } } });
  assert.equal(created.status, 201);
  await api.request('PUT', `${CM}/keep`, { body: { ...created.json, data: { k: 'v', k2: 'v2' } } });
  const before = await api.request('GET', `${CM}/keep`);
  const cases = generate(prng(20261122), created.json.metadata.resourceVersion);
  assert.ok(cases.length >= 300);
  for (const c of cases) {
    const r = await api.request(c.method, c.path, c.options);
    assert.equal(r.status, c.code, `${c.what}: ${c.method} ${c.path} → ${r.status} ${r.text.slice(0, 200)}`);
    assert.equal(r.headers['content-type'], 'application/json', `${c.what}: content type`);
    assert.equal(r.json?.kind, 'Status', `${c.what}: body is a Status`);
    assert.equal(r.json.code, c.code);
    assert.equal(r.json.status, 'Failure');
    if (c.reason) assert.equal(r.json.reason, c.reason, `${c.what}: reason`);
    assert.ok(typeof r.json.message === 'string' && r.json.message.length > 0);
  }
  // Oversized bodies: 413, and the server keeps serving.
  const huge = await api.request('POST', CM, { body: { metadata: { name: 'huge' }, data: { k: 'x'.repeat(4 * 1024 * 1024) } } });
  assert.equal(huge.status, 413);
  assert.equal(huge.json.reason, 'RequestEntityTooLarge');

  const afterAll = await api.request('GET', `${CM}/keep`);
  assert.deepEqual(afterAll.json, before.json, 'the object the failed requests aimed at is unchanged');
  const list = await api.request('GET', CM);
  assert.deepEqual(list.json.items.map((i: any) => i.metadata.name), ['keep'], 'no failed create left anything behind');
  assert.equal((await api.request('GET', '/healthz', { token: null })).text, 'ok');
});

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';

/** A valid Deployment with one thing broken, chosen by the PRNG. */
function brokenDeployment(random: () => number, name: string): { what: string; body: Record<string, any> } {
  const body: Record<string, any> = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: 'web' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
  };
  const breakers: Array<[string, () => void]> = [
    ['negative replicas', () => (body.spec.replicas = -1 - Math.floor(random() * 5))],
    ['selector does not match the template', () => (body.spec.template.metadata.labels = { app: 'other' })],
    ['container without an image', () => delete body.spec.template.spec.containers[0].image],
    ['container without a name', () => delete body.spec.template.spec.containers[0].name],
    ['invalid container name', () => (body.spec.template.spec.containers[0].name = 'Bad_Name')],
    ['no containers', () => (body.spec.template.spec.containers = [])],
    ['invalid label key', () => (body.metadata.labels = { 'a b/c': 'x' })],
  ];
  const [what, breakIt] = breakers[Math.floor(random() * breakers.length)];
  breakIt();
  return { what, body };
}

test('more mutated requests: preconditions, patch directives, apply, namespaces, duplicates, broken Deployments', async () => {
  const created = await api.request('POST', CM, { body: { metadata: { name: 'target' }, data: { k: 'v' } } });
  assert.equal(created.status, 201);
  const before = await api.request('GET', `${CM}/target`);
  const rv = before.json.metadata.resourceVersion;
  const random = prng(7);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const cases: Case[] = [];
  for (let i = 0; i < 220; i++) {
    const n = `m${i}`;
    switch (i % 11) {
      case 0:
        cases.push({
          what: 'delete with a failed precondition',
          method: 'DELETE',
          path: `${CM}/target`,
          options: { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: pick([{ resourceVersion: String(Number(rv) - 1 - i) }, { uid: `not-${i}` }]) } },
          code: 409,
          reason: 'Conflict',
        });
        break;
      case 1:
        cases.push({
          what: 'unknown strategic merge directive',
          method: 'PATCH',
          path: `${CM}/target`,
          options: { body: pick([{ data: { $patch: 'explode' } }, { metadata: { $patch: 42 } }]), contentType: 'application/strategic-merge-patch+json' },
          code: 422,
          reason: 'Invalid',
        });
        break;
      case 2:
        cases.push({ what: 'apply without fieldManager', method: 'PATCH', path: `${CM}/target`, options: { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: target}\ndata: {k: changed}\n', contentType: 'application/apply-patch+yaml' }, code: 422, reason: 'Invalid' });
        break;
      case 3:
        cases.push({ what: 'body namespace differs from the URL', method: 'POST', path: CM, options: { body: { metadata: { name: n, namespace: pick(['other', 'kube-system']) } } }, code: 400, reason: 'BadRequest' });
        break;
      case 4:
        cases.push({ what: 'resourceVersion set on create', method: 'POST', path: CM, options: { body: { metadata: { name: n, resourceVersion: String(1 + Math.floor(random() * 100)) } } }, code: 400, reason: 'BadRequest' });
        break;
      case 5:
        cases.push({ what: 'duplicate create', method: 'POST', path: CM, options: { body: { metadata: { name: 'target' }, data: { k: 'dup' } } }, code: 409, reason: 'AlreadyExists' });
        break;
      case 6:
        cases.push({ what: 'update with another name', method: pick(['PUT', 'PATCH']), path: `${CM}/target`, options: { body: { metadata: { name: `other-${i}` } }, contentType: 'application/merge-patch+json' }, code: 400, reason: 'BadRequest' });
        break;
      case 7: {
        const q = pick(['fieldSelector=metadata.name%3Da%3Db', 'fieldSelector=metadata.name%3Da%5Cx', 'limit=abc', 'limit=5&continue=garbage', 'labelSelector=a%20notin%20(b', 'labelSelector=UPPER%2F%2Fx%3Dy']);
        cases.push({ what: `bad query ${q}`, method: 'GET', path: `${CM}?${q}`, code: 400, reason: 'BadRequest' });
        break;
      }
      case 8: {
        const { what, body } = brokenDeployment(random, n);
        cases.push({ what: `Deployment: ${what}`, method: 'POST', path: DEPLOY, options: { body }, code: 422, reason: 'Invalid' });
        break;
      }
      case 9:
        cases.push({ what: 'invalid ConfigMap key', method: 'POST', path: CM, options: { body: { metadata: { name: n }, data: { [pick(['bad key', 'a/b', '', '..'])]: 'x' } } }, code: 422, reason: 'Invalid' });
        break;
      case 10: {
        const [method, path] = pick([['POST', CM], ['PUT', `${CM}/target`], ['DELETE', `${CM}/target`]]);
        cases.push({ what: `unsupported dryRun on ${method}`, method, path: `${path}?dryRun=${pick(['Bogus', 'all', 'true'])}`, options: { body: { metadata: { name: method === 'POST' ? n : 'target' }, data: { k: 'dry' } } }, code: 422, reason: 'Invalid' });
        break;
      }
    }
  }
  for (const c of cases) {
    const r = await api.request(c.method, c.path, c.options);
    assert.equal(r.status, c.code, `${c.what}: ${c.method} ${c.path} → ${r.status} ${r.text.slice(0, 200)}`);
    assert.equal(r.headers['content-type'], 'application/json', `${c.what}: content type`);
    assert.equal(r.json?.kind, 'Status', `${c.what}: body is a Status`);
    assert.equal(r.json.code, c.code);
    assert.equal(r.json.status, 'Failure');
    if (c.reason) assert.equal(r.json.reason, c.reason, `${c.what}: reason`);
    if (c.reason === 'Invalid' && c.method === 'POST') assert.ok(r.json.details?.causes?.length > 0, `${c.what}: causes name the fields`);
  }
  assert.deepEqual((await api.request('GET', `${CM}/target`)).json, before.json, 'the target is unchanged');
  assert.deepEqual((await api.request('GET', DEPLOY)).json.items, [], 'no broken Deployment was stored');
  const names = (await api.request('GET', CM)).json.items.map((i: any) => i.metadata.name);
  assert.ok(!names.some((n: string) => /^m\d+$/.test(n)), 'no failed create left anything behind');
  assert.equal((await api.request('GET', '/healthz', { token: null })).text, 'ok');
});
