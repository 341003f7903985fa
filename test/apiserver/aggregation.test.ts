// API aggregation against a real extension server: an APIService's group-version is proxied to
// its Service's endpoint over TLS checked with the caBundle, with the front-proxy client
// certificate (trusted through kube-system/extension-apiserver-authentication) and the user in
// X-Remote-User / X-Remote-Group, the caller's token kept back; the group is in discovery;
// bodies and queries pass; no endpoints is a 503; an invalid APIService is refused; the
// availability check writes the Available condition kubectl shows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type * as api from '../../src/api/index.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { aggregatedGroups, resolveTarget } from '../../src/apiserver/aggregator/api-services.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

/** The extension server's own discovery document: widgets with a status subresource. */
const WIDGETS_DISCOVERY = {
  kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'example.bosun.io/v1alpha1',
  resources: [
    { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get', 'list', 'create'], shortNames: ['wd'] },
    { name: 'widgets/status', singularName: '', namespaced: true, kind: 'Widget', verbs: ['get', 'update'] },
  ],
};
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
const aggregatedGroup = async () => (await s.request('GET', '/apis', { accept: AGGREGATED })).json.items.find((g: { metadata: { name: string } }) => g.metadata.name === 'example.bosun.io');

let s: TestApiServer;
let ext: Server;
let caPem: string;

before(async () => {
  // Checked only when something changes (the timer's 5 s would hide whether the changes are acted on).
  s = await startTestApiServer({ apiServiceCheckIntervalMs: 3_600_000 });
  const auth = (await s.request('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')).json;
  assert.deepEqual(JSON.parse(auth.data['requestheader-allowed-names']), ['front-proxy-client']);
  const ca = await createCA('extension-ca');
  caPem = ca.certPem;
  const tls = await issueServingCert(ca, 'ext', ['ext.tools.svc']);
  ext = createServer({ cert: tls.certPem, key: tls.keyPem, ca: auth.data['requestheader-client-ca-file'], requestCert: true, rejectUnauthorized: true }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const cert = (req.socket as TLSSocket).getPeerCertificate();
      if (req.url === '/apis/example.bosun.io/v1alpha1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(WIDGETS_DISCOVERY));
        return;
      }
      res.writeHead(req.url?.includes('missing') ? 404 : 200, { 'content-type': 'application/json', 'x-from': 'extension' });
      res.end(JSON.stringify({ method: req.method, url: req.url, user: req.headers['x-remote-user'], groups: req.headersDistinct['x-remote-group'], client: cert.subject?.CN, authorization: req.headers.authorization ?? null, body }));
    });
  });
  await new Promise<void>((r) => ext.listen(0, '127.0.0.1', () => r()));
  const port = (ext.address() as { port: number }).port;
  await s.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tools' } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'tools' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } },
      { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ext', namespace: 'tools' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] },
      { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1alpha1.example.bosun.io' }, spec: { group: 'example.bosun.io', version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'tools', name: 'ext' }, caBundle: Buffer.from(caPem).toString('base64') } },
    ],
  }));
});
after(async () => {
  await s?.stop();
  ext?.close();
});

test('a request for an aggregated group-version reaches the extension server with the front-proxy certificate and the user, not the token', async () => {
  const r = await s.request('GET', '/apis/example.bosun.io/v1alpha1/namespaces/a/widgets?labelSelector=x%3Dy');
  assert.equal(r.status, 200);
  assert.equal(r.headers['x-from'], 'extension');
  assert.deepEqual(r.json, { method: 'GET', url: '/apis/example.bosun.io/v1alpha1/namespaces/a/widgets?labelSelector=x%3Dy', user: 'system:admin', groups: ['system:masters', 'system:authenticated'], client: 'front-proxy-client', authorization: null, body: '' });
  const posted = await s.request('POST', '/apis/example.bosun.io/v1alpha1/widgets', { body: { kind: 'Widget' } });
  assert.equal(posted.json.method, 'POST');
  assert.deepEqual(JSON.parse(posted.json.body), { kind: 'Widget' });
  assert.equal((await s.request('GET', '/apis/example.bosun.io/v1alpha1/missing')).status, 404, 'the extension server\'s own status passes through');
  assert.equal((await s.request('GET', '/apis/example.bosun.io/v1alpha1/widgets', { token: null })).status, 401, 'authentication happens first');
});

const available = async () => (await s.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.example.bosun.io')).json.status?.conditions?.find((c: { type: string }) => c.type === 'Available');

test('discovery lists the aggregated group; kubectl shows the APIService Available once its discovery answers', async () => {
  const condition = await eventually('the APIService is Available', async () => { const c = await available(); return c?.status === 'True' ? c : undefined; }, 20_000);
  assert.equal(condition.reason, 'Passed');
  const groups = (await s.request('GET', '/apis')).json.groups;
  assert.deepEqual(groups.find((g: { name: string }) => g.name === 'example.bosun.io'), { name: 'example.bosun.io', versions: [{ groupVersion: 'example.bosun.io/v1alpha1', version: 'v1alpha1' }], preferredVersion: { groupVersion: 'example.bosun.io/v1alpha1', version: 'v1alpha1' } });
  assert.equal((await s.request('GET', '/apis/example.bosun.io')).json.kind, 'APIGroup');
  const shown = await s.kubectlOk(['get', 'apiservices']);
  assert.match(shown, /^v1alpha1\.example\.bosun\.io\s+tools\/ext\s+True\s+/m);
  // Aggregated discovery carries the extension server's resources, as its discovery answered them.
  const group = await eventually('the aggregated group is Current', async () => { const g = await aggregatedGroup(); return g?.versions[0].freshness === 'Current' ? g : undefined; }, 20_000);
  assert.deepEqual(group.versions[0].resources, [{
    resource: 'widgets', responseKind: { group: 'example.bosun.io', version: 'v1alpha1', kind: 'Widget' }, scope: 'Namespaced', singularResource: 'widget', verbs: ['get', 'list', 'create'], shortNames: ['wd'],
    subresources: [{ subresource: 'status', responseKind: { group: 'example.bosun.io', version: 'v1alpha1', kind: 'Widget' }, verbs: ['get', 'update'] }],
  }]);
  assert.match(await s.kubectlOk(['api-resources', '--api-group=example.bosun.io']), /^widgets\s+wd\s+example\.bosun\.io\/v1alpha1\s+true\s+Widget$/m);
});

test('an APIService that does not name itself <version>.<group>, or lacks its priorities, is refused; a Service without endpoints is a 503', async () => {
  const bad = await s.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', { body: { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.wrong.io' }, spec: { group: 'other.io', version: 'v1', service: { namespace: 'tools', name: 'ext' }, insecureSkipTLSVerify: true } } });
  assert.equal(bad.status, 422);
  assert.match(bad.text, /metadata\.name/);
  assert.match(bad.text, /groupPriorityMinimum/);
  await s.request('PUT', '/api/v1/namespaces/tools/endpoints/ext', { body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ext', namespace: 'tools', resourceVersion: (await s.request('GET', '/api/v1/namespaces/tools/endpoints/ext')).json.metadata.resourceVersion }, subsets: [] } });
  const down = await s.request('GET', '/apis/example.bosun.io/v1alpha1/widgets');
  assert.equal(down.status, 503);
  assert.equal(down.json.reason, 'ServiceUnavailable');
  const condition = await eventually('the APIService is not Available', async () => { const c = await available(); return c?.status === 'False' ? c : undefined; }, 20_000);
  assert.equal(condition.reason, 'MissingEndpoints');
  // Its resources are no longer known: the group stays in aggregated discovery, Stale, as kube-aggregator has it.
  const stale = await aggregatedGroup();
  assert.deepEqual(stale.versions, [{ version: 'v1alpha1', resources: [], freshness: 'Stale' }]);
  assert.match(await s.kubectlOk(['get', 'apiservices']), /^v1alpha1\.example\.bosun\.io\s+tools\/ext\s+False \(MissingEndpoints\)\s+/m);
});

test('targets and groups from APIServices: the endpoint port serving the service port, else the cluster IP; groups by priority', () => {
  const apiService = (name: string, group: string, version: string, groupPriorityMinimum: number, versionPriority: number): api.APIService =>
    ({ apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name }, spec: { group, version, groupPriorityMinimum, versionPriority, service: { namespace: 'n', name: 's', port: 443 } } });
  const a = apiService('v1.a.io', 'a.io', 'v1', 100, 10);
  const service: api.Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' }, spec: { clusterIP: '127.30.0.9', ports: [{ name: 'https', port: 443 }, { name: 'other', port: 80 }] } };
  const endpoints: api.Endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 's', namespace: 'n' }, subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ name: 'other', port: 8080 }, { name: 'https', port: 6443 }] }] };
  assert.deepEqual(resolveTarget(a, service, endpoints), { host: '10.0.0.5', port: 6443, serverName: 's.n.svc' });
  assert.deepEqual(resolveTarget(a, service, undefined), { host: '127.30.0.9', port: 443, serverName: 's.n.svc' });
  assert.throws(() => resolveTarget(a, service, { ...endpoints, subsets: [] }), /no endpoints/);
  assert.throws(() => resolveTarget(a, undefined, undefined), /not present/);
  assert.deepEqual(aggregatedGroups([apiService('v1beta1.b.io', 'b.io', 'v1beta1', 50, 5), apiService('v1.b.io', 'b.io', 'v1', 50, 20), a]), [{ name: 'a.io', versions: ['v1'] }, { name: 'b.io', versions: ['v1', 'v1beta1'] }]);
});
