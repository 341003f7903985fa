// What kube-apiserver refuses before or while decoding, refused here the same way and always as a
// Status: bodies over 3 MiB (413), bodies nested deeper than the limit in JSON and YAML (400,
// where a deep YAML body used to end the process), JSON patches that would nest deeper (422),
// ConfigMap and Secret data over 1 MiB (422 "Too long"), `.` and `..` as a namespace or name (400), methods no route serves (405, the
// ones Node's parser does not know included), and URLs the router cannot decode (400).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { MAX_DEPTH, MAX_PATCHED_DEPTH } from '../../src/apiserver/http/nesting.js';

let api: TestApiServer;
let dir: string;
before(async () => {
  api = await startTestApiServer();
  dir = mkdtempSync(join(tmpdir(), 'bosun-limits-'));
});
after(async () => {
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

const CM = '/api/v1/namespaces/default/configmaps';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function assertStatus(r: { status: number; headers: Record<string, unknown>; json: any }, code: number, reason: string, message?: RegExp): void {
  assert.equal(r.status, code);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.json?.kind, 'Status');
  assert.equal(r.json.code, code);
  assert.equal(r.json.reason, reason);
  if (message) assert.match(r.json.message, message);
}

/** A request with the path sent as it is (no resolution of `.` and `..`). */
function raw(method: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: api.port, path, method, ca: api.caPem, headers: { authorization: `Bearer ${api.token}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('deeply nested bodies are a 400 and the server stays up (JSON and YAML, flow and block)', async () => {
  const nest = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  const bodies: [string, string][] = [
    [nest(5000), 'application/json'],
    [nest(5000), 'application/yaml'],
    [`${'- '.repeat(5000)}x\n`, 'application/yaml'],
    [Array.from({ length: 800 }, (_, i) => `${'  '.repeat(i)}- a:`).join('\n'), 'application/yaml'],
    // A megabyte of nesting: refused by a linear scan before the YAML parser (which took 3–10 s of
    // the server's CPU on each: the wire fuzz's 8 s answer limit caught it under load).
    ['['.repeat(1_000_000), 'application/yaml'],
    ['? '.repeat(500_000), 'application/yaml'],
    [nest(MAX_DEPTH + 1), 'application/json'],
  ];
  // Repeated: the process used to die on the second deep YAML body.
  for (let round = 0; round < 3; round++) {
    for (const [body, contentType] of bodies) {
      for (const path of [CRDS, CM]) {
        const r = await api.request('POST', path, { body, contentType });
        assertStatus(r, 400, 'BadRequest', new RegExp(`nested deeper than ${MAX_DEPTH} levels`));
      }
    }
  }
  // As deep as allowed is decoded (and then judged on its content).
  const ok = await api.request('POST', CM, { body: { metadata: { name: 'deep-ok', annotations: {} }, data: {}, extra: JSON.parse(nest(MAX_DEPTH - 3)) } });
  assert.equal(ok.status, 201, JSON.stringify(ok.json).slice(0, 300));
  // A JSON patch cannot build what a body may not carry: adds at deep paths are checked on the result.
  const deep = (n: number) => JSON.parse(nest(n));
  const ops = [{ op: 'add', path: '/extra', value: deep(250) }, { op: 'add', path: `/extra${'/a'.repeat(249)}`, value: deep(250) }];
  const grown = await api.request('PATCH', `${CM}/deep-ok`, { body: ops, contentType: 'application/json-patch+json' });
  assertStatus(grown, 422, 'Invalid', new RegExp(`nested deeper than ${MAX_PATCHED_DEPTH} levels`));
  const one = await api.request('PATCH', `${CM}/deep-ok`, { body: ops.slice(0, 1), contentType: 'application/json-patch+json' });
  assert.equal(one.status, 200, one.text);
  // kubectl sees the reason.
  writeFileSync(join(dir, 'deep.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nbogus: ${'['.repeat(400)}${']'.repeat(400)}\n`);
  const kubectl = await api.kubectl(['create', '-f', join(dir, 'deep.yaml')]);
  assert.notEqual(kubectl.code, 0);
  assert.match(kubectl.stderr, /BadRequest.*nested deeper than/);
  assert.equal((await api.request('GET', '/healthz', { token: null })).text, 'ok');
});

test('a body over 3 MiB is a 413 Status; ConfigMap and Secret data over 1 MiB is a 422 "Too long"', async () => {
  const huge = await api.request('POST', CM, { body: { metadata: { name: 'huge' }, data: { k: 'x'.repeat(3 * 1024 * 1024) } } });
  assertStatus(huge, 413, 'RequestEntityTooLarge');
  writeFileSync(join(dir, 'big.txt'), 'x'.repeat(1024 * 1024 + 1));
  const cm = await api.kubectl(['create', 'configmap', 'big', `--from-file=${join(dir, 'big.txt')}`]);
  assert.match(cm.stderr, /ConfigMap "big" is invalid: \[\]: Too long: may not be more than 1048576 bytes/);
  const secret = await api.kubectl(['create', 'secret', 'generic', 'big', `--from-file=${join(dir, 'big.txt')}`]);
  assert.match(secret.stderr, /Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes/);
  // Growing past the limit through patches is refused too; just under it is fine.
  writeFileSync(join(dir, 'fits.txt'), 'x'.repeat(1024 * 1024 - 10));
  await api.kubectlOk(['create', 'configmap', 'fits', `--from-file=${join(dir, 'fits.txt')}`]);
  const grown = await api.request('PATCH', `${CM}/fits`, { body: { data: { more: 'x'.repeat(100) } }, contentType: 'application/merge-patch+json' });
  assertStatus(grown, 422, 'Invalid', /Too long/);
});

test('. and .. as namespace or name are a 400; unknown methods a 405; undecodable URLs a 400', async () => {
  for (const path of [`${CM}/..`, `${CM}/.`, '/api/v1/namespaces/../configmaps/x', '/api/v1/namespaces/./configmaps', `${CM}/%2e%2e`, `${CM}/a%2Fb`]) {
    assertStatus(await raw('GET', path), 400, 'BadRequest', /parameter invalid/);
  }
  assertStatus(await raw('DELETE', `${CM}/..`), 400, 'BadRequest', /Name parameter invalid: "\.\.": may not be '\.\.'/);
  const viaKubectl = await api.kubectl(['get', '--raw', `${CM}/..`]);
  assert.match(viaKubectl.stderr, /Name parameter invalid: "\.\.": may not be '\.\.'/);

  for (const method of ['PROPFIND', 'TRACE', 'OPTIONS', 'FOO', 'BREW']) {
    assertStatus(await raw(method, `${CM}/x`), 405, 'MethodNotAllowed');
  }
  assertStatus(await raw('POST', '/version'), 405, 'MethodNotAllowed');
  assertStatus(await raw('GET', `${CM}/%ff`), 400, 'BadRequest');
  assertStatus(await raw('GET', '/no/such/path'), 404, 'NotFound');
  assertStatus(await api.request('POST', CM, { body: 'x', contentType: 'application/cbor' }), 415, 'UnsupportedMediaType');
});
