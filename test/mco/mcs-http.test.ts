// Machine-config server over HTTP and HTTPS: status codes, Accept negotiation, HEAD, both ports.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { get, startFixture, writeRendered, type Fixture, BOOTSTRAP_KUBECONFIG } from './mcs-fixture.js';
import { decodeDataUrl } from '../../src/ignition/data-url.js';
import { negotiateVersion } from '../../src/ignition/accept.js';

let f: Fixture;
before(async () => { f = await startFixture(); });
after(async () => { await f.close(); });

const ign = (v: string, q?: number) => `application/vnd.coreos.ignition+json;version=${v}${q !== undefined ? `;q=${q}` : ''}`;

const negotiation: [string | undefined, string[] | 'error'][] = [
  [undefined, ['3.4.0']],
  ['*/*', ['3.4.0']],
  [`${ign('3.3.0')}, */*;q=0.1`, ['3.3.0']],
  [ign('3.9.0'), ['3.5.0']],
  [ign('2.4.0'), ['2.2.0']],
  [`${ign('3.1.0', 0.5)}, ${ign('2.2.0', 0.9)}`, ['2.2.0', '3.1.0']],
  [`${ign('4.0.0')}, ${ign('3.0.0', 0.2)}`, ['3.0.0']],
  [ign('4.0.0'), 'error'],
  [ign('banana'), 'error'],
];
for (const [accept, want] of negotiation) {
  test(`negotiate ${accept ?? '(no Accept)'}`, () => {
    const n = negotiateVersion(accept);
    if (want === 'error') assert.equal(n.ok, false);
    else assert.deepEqual(n, { ok: true, candidates: want });
  });
}

for (const listener of ['tls', 'http'] as const) {
  test(`${listener}: GET /config/worker serves the rendered config plus bootstrap files`, async () => {
    const r = await get(f, listener, '/config/worker');
    assert.equal(r.status, 200);
    const body = JSON.parse(r.body);
    assert.equal(body.ignition.version, '3.4.0');
    const files = Object.fromEntries(body.storage.files.map((x: { path: string; contents: { source: string } }) => [x.path, decodeDataUrl(x.contents.source).toString()]));
    assert.equal(files['/etc/hello.conf'], 'hello world\n');
    assert.deepEqual(JSON.parse(files['/etc/machine-config-daemon/node-annotations.json']), {
      'machineconfiguration.openshift.io/currentConfig': 'rendered-worker-1',
      'machineconfiguration.openshift.io/desiredConfig': 'rendered-worker-1',
      'machineconfiguration.openshift.io/state': 'Done',
    });
    assert.equal(files['/etc/kubernetes/kubeconfig'], BOOTSTRAP_KUBECONFIG);
    assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
  });

  test(`${listener}: HEAD has the headers and no body`, async () => {
    const full = await get(f, listener, '/config/worker');
    const r = await get(f, listener, '/config/worker', { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.body, '');
    assert.equal(r.headers['content-length'], full.headers['content-length']);
  });

  test(`${listener}: errors — unknown pool 404, other path 404, POST 405, 4.0.0 400`, async () => {
    const unknown = await get(f, listener, '/config/infra');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body, /machine config pool "infra" not found/);
    assert.equal((await get(f, listener, '/config')).status, 404);
    assert.equal((await get(f, listener, '/other')).status, 404);
    const post = await get(f, listener, '/config/worker', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await get(f, listener, '/healthz', { method: 'DELETE' })).status, 405);
    const bad = await get(f, listener, '/config/worker', { accept: ign('4.0.0') });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /4\.0\.0/);
  });

  test(`${listener}: /healthz; no open /metrics (the manager serves them, authorised)`, async () => {
    assert.equal((await get(f, listener, '/healthz')).status, 200);
    assert.equal((await get(f, listener, '/metrics')).status, 404);
    assert.match(await f.server.metrics.registry.metrics(), /mcs_requests_total\{listener="\w+",pool="worker",version="3\.4\.0",code="200"\} \d+/);
  });
}

test('versions: each 3.x, newer minor, 2.x translation', async () => {
  for (const v of ['3.0.0', '3.1.0', '3.2.0', '3.3.0', '3.4.0', '3.5.0']) {
    const r = await get(f, 'http', '/config/worker', { accept: ign(v) });
    assert.equal(JSON.parse(r.body).ignition.version, v);
  }
  assert.equal(JSON.parse((await get(f, 'http', '/config/worker', { accept: ign('3.7.0') })).body).ignition.version, '3.5.0');
  const v2 = JSON.parse((await get(f, 'http', '/config/worker', { accept: ign('2.2.0') })).body);
  assert.equal(v2.ignition.version, '2.2.0');
  assert.ok(v2.storage.files.every((x: { filesystem: string }) => x.filesystem === 'root'));
});

test('a config that cannot be expressed at the asked version: next candidate, else 400 naming the field', async () => {
  const r = await get(f, 'http', '/config/master', { accept: `${ign('3.2.0')}, ${ign('3.3.0', 0.5)}` });
  assert.equal(JSON.parse(r.body).ignition.version, '3.3.0');
  const bad = await get(f, 'http', '/config/master', { accept: ign('2.2.0') });
  assert.equal(bad.status, 400);
  assert.match(bad.body, /kernelArguments/);
});

test('reload picks up a new rendered config', async () => {
  writeRendered(f.dir, 'worker', 'rendered-worker-2', { ignition: { version: '3.2.0' } });
  f.source.reload();
  const body = JSON.parse((await get(f, 'http', '/config/worker')).body);
  const ann = body.storage.files.find((x: { path: string }) => x.path.endsWith('node-annotations.json'));
  assert.match(decodeDataUrl(ann.contents.source).toString(), /rendered-worker-2/);
});

test('TLS: 1.1 refused, HTTP/2 not offered', async () => {
  const r = await get(f, 'tls', '/healthz');
  assert.notEqual(r.alpn, 'h2');
  await assert.rejects(new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: f.server.port('tls'), ca: f.ca, maxVersion: 'TLSv1.1', minVersion: 'TLSv1', servername: 'localhost' }, () => { s.end(); resolve(undefined); });
    s.on('error', reject);
  }));
  const alpn = await new Promise<string | false>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: f.server.port('tls'), ca: f.ca, ALPNProtocols: ['h2'], servername: 'localhost' }, () => { resolve(s.alpnProtocol ?? false); s.end(); });
    s.on('error', reject);
  }).catch(() => false as const);
  assert.notEqual(alpn, 'h2');
});
