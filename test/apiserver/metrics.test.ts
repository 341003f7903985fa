// The API server's /metrics under kube-apiserver's names, labels and buckets: upper-case verbs
// (LIST, GET, APPLY, WATCH), scope and subresource, `apiserver_storage_objects` by `plural.group`
// after creates and deletes, upstream buckets, and watches counted as long-running while open
// and left out of the latency histograms.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest, Agent } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { skipWithoutEtcd, startApiServersOnEtcd, startTestEtcd } from '../helpers/etcd.js';
import { REQUEST_DURATION_BUCKETS, REQUEST_SLI_DURATION_BUCKETS, RESPONSE_SIZE_BUCKETS, WATCH_EVENT_SIZE_BUCKETS } from '../../src/apiserver/filters/metrics.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

async function scrape(server: Pick<TestApiServer, 'request'> = api): Promise<Sample[]> {
  const r = await server.request('GET', '/metrics');
  assert.equal(r.status, 200);
  return parse(r.text);
}

/** The samples of `name` whose labels include `labels`. */
function find(samples: Sample[], name: string, labels: Record<string, string>): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number {
  return find(samples, name, labels).reduce((sum, s) => sum + s.value, 0);
}

test('a cluster-wide LIST of pods is counted with verb LIST, scope cluster, code 200 and every upstream label', async () => {
  const before = value(await scrape(), 'apiserver_request_total', { verb: 'LIST', resource: 'pods', scope: 'cluster', code: '200' });
  await api.kubectlOk(['get', 'pods', '-A']);
  assert.equal((await api.request('GET', '/api/v1/pods')).status, 200);
  const samples = await scrape();
  const total = find(samples, 'apiserver_request_total', { verb: 'LIST', resource: 'pods', scope: 'cluster', code: '200' });
  assert.equal(total.length, 1, 'one series');
  assert.deepEqual(total[0].labels, { verb: 'LIST', dry_run: '', group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'cluster', component: 'apiserver', code: '200' });
  assert.equal(total[0].value - before, 2);
  // Latency, SLI latency and response sizes for the same endpoint.
  const endpoint = { verb: 'LIST', group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'cluster', component: 'apiserver' };
  assert.ok(value(samples, 'apiserver_request_duration_seconds_count', { ...endpoint, dry_run: '' }) >= 2);
  assert.ok(value(samples, 'apiserver_request_sli_duration_seconds_count', endpoint) >= 2);
  assert.ok(value(samples, 'apiserver_response_sizes_count', endpoint) >= 1);
  // No lower-case verbs anywhere.
  for (const s of find(samples, 'apiserver_request_total', {})) assert.match(s.labels.verb, /^(?:[A-Z]+|other)$/, JSON.stringify(s.labels));
});

test('a namespaced GET is scope resource, a namespaced list scope namespace; a group resource carries its group', async () => {
  await api.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'scope-cm' } } });
  assert.equal((await api.request('GET', '/api/v1/namespaces/default/configmaps/scope-cm')).status, 200);
  assert.equal((await api.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  assert.equal((await api.request('GET', '/apis/apps/v1/namespaces/default/deployments')).status, 200);
  const samples = await scrape();
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'GET', resource: 'configmaps', scope: 'resource', code: '200' }) >= 1);
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200' }) >= 1);
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'POST', resource: 'configmaps', scope: 'resource', code: '201' }) >= 1);
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'LIST', group: 'apps', version: 'v1', resource: 'deployments', scope: 'namespace' }) >= 1);
});

test('server-side apply is APPLY, a merge patch PATCH, a status update subresource status, a dry run dry_run All', async () => {
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied, namespace: default}\ndata: {a: "1"}\n';
  await api.kubectlOk(['apply', '--server-side', '-f', '-'], cm);
  await api.request('PATCH', '/api/v1/namespaces/default/configmaps/applied', { body: { data: { b: '2' } }, contentType: 'application/merge-patch+json' });
  await api.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: { metadata: { name: 'dry' } } });
  await api.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'st' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
  const pod = (await api.request('GET', '/api/v1/namespaces/default/pods/st')).json;
  const put = await api.request('PUT', '/api/v1/namespaces/default/pods/st/status', { body: { ...pod, status: { phase: 'Running' } } });
  assert.equal(put.status, 200, put.text);
  const samples = await scrape();
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'APPLY', resource: 'configmaps', scope: 'resource' }) >= 1);
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'PATCH', resource: 'configmaps', scope: 'resource', code: '200' }) >= 1);
  assert.equal(value(samples, 'apiserver_request_total', { verb: 'POST', resource: 'configmaps', dry_run: 'All', code: '201' }), 1);
  assert.equal(value(samples, 'apiserver_request_total', { verb: 'PUT', resource: 'pods', subresource: 'status', scope: 'resource', code: '200' }), 1);
  // Dry runs are in the latency histogram (with their dry_run label), not in the SLI one.
  assert.equal(value(samples, 'apiserver_request_duration_seconds_count', { verb: 'POST', resource: 'configmaps', dry_run: 'All' }), 1);
});

test('apiserver_storage_objects counts core and custom objects by plural.group after creates and deletes', async () => {
  await api.kubectlOk(['apply', '-f', '-'], readFileSync(new URL('./fixtures/widgets-crd.yaml', import.meta.url), 'utf8'));
  await api.kubectlOk(['wait', '--for=condition=Established', 'crd/widgets.example.com']);
  const pods0 = value(await scrape(), 'apiserver_storage_objects', { resource: 'pods' });
  for (const name of ['so-1', 'so-2', 'so-3']) {
    assert.equal((await api.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }] } } })).status, 201);
    assert.equal((await api.request('POST', '/apis/example.com/v1/namespaces/default/widgets', { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 1 } } })).status, 201);
  }
  let samples = await scrape();
  assert.equal(value(samples, 'apiserver_storage_objects', { resource: 'pods' }), pods0 + 3);
  assert.equal(value(samples, 'apiserver_storage_objects', { resource: 'widgets.example.com' }), 3);
  assert.ok(value(samples, 'apiserver_storage_objects', { resource: 'customresourcedefinitions.apiextensions.k8s.io' }) >= 1);
  assert.ok(value(samples, 'apiserver_storage_objects', { resource: 'namespaces' }) >= 4);
  await api.request('DELETE', '/api/v1/namespaces/default/pods/so-1?gracePeriodSeconds=0');
  await api.request('DELETE', '/apis/example.com/v1/namespaces/default/widgets/so-1');
  await api.request('DELETE', '/apis/example.com/v1/namespaces/default/widgets/so-2');
  samples = await scrape();
  assert.equal(value(samples, 'apiserver_storage_objects', { resource: 'pods' }), pods0 + 2);
  assert.equal(value(samples, 'apiserver_storage_objects', { resource: 'widgets.example.com' }), 1);
});

test('the histograms have kube-apiserver buckets', async () => {
  const samples = await scrape();
  const les = (name: string) => [...new Set(find(samples, name, {}).map((s) => s.labels.le))].filter((le) => le !== '+Inf').map(Number);
  assert.deepEqual(les('apiserver_request_duration_seconds_bucket'), REQUEST_DURATION_BUCKETS);
  assert.deepEqual(REQUEST_DURATION_BUCKETS, [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]);
  assert.deepEqual(les('apiserver_request_sli_duration_seconds_bucket'), REQUEST_SLI_DURATION_BUCKETS);
  // kube-apiserver's ExponentialBuckets(1000, 10, 7) and (1024, 2, 8).
  assert.deepEqual(RESPONSE_SIZE_BUCKETS, [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]);
  assert.deepEqual(WATCH_EVENT_SIZE_BUCKETS, [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]);
  assert.deepEqual(REQUEST_SLI_DURATION_BUCKETS, [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]);
  assert.deepEqual(les('apiserver_response_sizes_bucket'), RESPONSE_SIZE_BUCKETS);
  const kinds = find(samples, 'apiserver_current_inflight_requests', {}).map((s) => s.labels.request_kind).sort();
  assert.deepEqual(kinds, ['mutating', 'readOnly']);
});

function openWatch(path: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  const agent = new Agent({ ca: api.caPem });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${api.url}${path}`, { agent, headers: { authorization: `Bearer ${api.token}` } }, (res) => resolve({ req, res }));
    req.on('error', reject);
    req.end();
  });
}

test('a WATCH is long-running while open, counted when it ends, never in the latency histograms', async () => {
  const watchLabels = { verb: 'WATCH', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'namespace', component: 'apiserver' };
  const { req, res } = await openWatch('/api/v1/namespaces/default/configmaps?watch=1');
  assert.equal(res.statusCode, 200);
  res.resume();
  await api.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'watched' } } });
  let samples = await scrape();
  assert.equal(value(samples, 'apiserver_longrunning_requests', watchLabels), 1);
  assert.ok(value(samples, 'apiserver_watch_events_total', { group: '', version: 'v1', kind: 'ConfigMap' }) >= 1);
  assert.ok(value(samples, 'apiserver_watch_events_sizes_count', { group: '', version: 'v1', kind: 'ConfigMap' }) >= 1);
  // A watch is not a request in flight: the scrape itself is the one read-only request.
  assert.equal(value(samples, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }), 1);
  req.destroy();
  for (let i = 0; i < 50; i++) {
    samples = await scrape();
    if (value(samples, 'apiserver_longrunning_requests', watchLabels) === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(value(samples, 'apiserver_longrunning_requests', watchLabels), 0);
  assert.ok(value(samples, 'apiserver_request_total', { verb: 'WATCH', resource: 'configmaps', scope: 'namespace' }) >= 1);
  assert.equal(find(samples, 'apiserver_request_duration_seconds_count', { verb: 'WATCH' }).length, 0);
  assert.equal(find(samples, 'apiserver_request_sli_duration_seconds_count', { verb: 'WATCH' }).length, 0);
});

test('on etcd, writes are timed in etcd_request_duration_seconds by operation, group and resource', { skip: skipWithoutEtcd, timeout: 60_000 }, async () => {
  const etcd = await startTestEtcd({ members: 1 });
  const [server] = await startApiServersOnEtcd(1, etcd.dir, ['--etcd-servers', etcd.cluster.client.endpoints.join(',')]);
  try {
    assert.equal((await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'timed' } } })).status, 201);
    assert.equal((await server.request('DELETE', '/api/v1/namespaces/default/configmaps/timed')).status, 200);
    assert.equal((await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: { metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } } })).status, 201);
    const samples = await scrape(server);
    assert.ok(value(samples, 'etcd_request_duration_seconds_count', { operation: 'create', group: '', resource: 'configmaps' }) >= 1);
    assert.equal(value(samples, 'etcd_request_duration_seconds_count', { operation: 'delete', group: '', resource: 'configmaps' }), 1);
    assert.equal(value(samples, 'etcd_request_duration_seconds_count', { operation: 'create', group: 'apps', resource: 'deployments' }), 1);
    assert.ok(find(samples, 'etcd_request_duration_seconds_bucket', { le: '0.005' }).length > 0);
  } finally {
    await server.kill('SIGTERM');
    await etcd.stop();
  }
});
