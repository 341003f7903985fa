// An aggregated API server's authorisation against the real API server: a real HTTPS server with
// aggregatedServerOptions asks for the front proxy's client certificate; aggregatedApiRefusal lets
// a vouched-for user through when a SubjectAccessReview allows it (403 as kube words it when not),
// and otherwise wants a bearer token the API server knows (401 without one or with an unknown one);
// the front proxy's users' reviews are cached for a while, as bearer tokens' are.
import { strict as assert } from 'node:assert';
import { createServer, request, type Server } from 'node:https';
import { after, before, test } from 'node:test';
import { enableAccessControl, type AccessControl } from '../../src/apiserver/auth/access-control.js';
import { boundPort, closeServer, listenOn, sendJson } from '../../src/common/http-server.js';
import { createCA, issueClientCert, issueServingCert, type KeyPair } from '../../src/common/pki.js';
import { aggregatedApiRefusal, aggregatedServerOptions, DelegatedAuth, KubeClient, loadKubeConfig, type RequestHeaderAuth, type ResourceAttributes } from '../../src/kube/index.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const WIDGETS: ResourceAttributes = { verb: 'list', group: 'example.bosun.io', version: 'v1', resource: 'widgets', namespace: 'a' };

let api: TestApiServer;
let access: AccessControl;
let server: Server;
let serving: KeyPair;
let servingCa: KeyPair;
let frontProxyCa: KeyPair;
let admin: KubeClient;

before(async () => {
  api = await startTestApiServer();
  access = await enableAccessControl(api.server, api.dataDir);
  admin = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const auth = new DelegatedAuth(admin);
  frontProxyCa = await createCA('front-proxy-ca');
  const requestHeader: RequestHeaderAuth = { caPem: frontProxyCa.certPem, allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'] };
  servingCa = await createCA('serving-ca');
  serving = await issueServingCert(servingCa, 'widgets', ['127.0.0.1']);
  // Discovery (/apis/…) names no resource; anything below it lists widgets.
  server = createServer(aggregatedServerOptions(serving, requestHeader), (req, res) => {
    const attributes = req.url === '/apis/example.bosun.io' ? undefined : WIDGETS;
    aggregatedApiRefusal(req, { auth, requestHeader }, attributes, req.url ?? '/').then(
      (refusal) => sendJson(res, refusal ?? { code: 200, body: { allowed: true } }),
      (e: Error) => sendJson(res, { code: 500, body: { message: e.message } }),
    );
  });
  await listenOn(server, 0, '127.0.0.1');
});

after(async () => {
  await closeServer(server);
  access.stop();
  await api.stop();
});

function get(path: string, o: { token?: string; cert?: KeyPair; user?: string; groups?: string[] } = {}): Promise<{ status: number; body: { message?: string; reason?: string; allowed?: boolean } }> {
  const headers: Record<string, string | string[]> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.user) headers['x-remote-user'] = o.user;
  if (o.groups) headers['x-remote-group'] = o.groups;
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: boundPort(server), path, headers, ca: servingCa.certPem, agent: false, ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    }).on('error', reject).end();
  });
}

test('the front proxy\'s user: allowed by a SubjectAccessReview, else 403 naming the resource and group', async () => {
  const proxy = await issueClientCert(frontProxyCa, { commonName: 'front-proxy-client' });
  assert.deepEqual(await get('/apis/example.bosun.io/v1/namespaces/a/widgets', { cert: proxy, user: 'system:admin', groups: ['system:masters'] }), { status: 200, body: { allowed: true } });
  const refused = await get('/apis/example.bosun.io/v1/namespaces/a/widgets', { cert: proxy, user: 'nobody' });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.reason, 'Forbidden');
  assert.equal(refused.body.message, 'widgets.example.bosun.io is forbidden: User "nobody" cannot list resource "widgets" in API group "example.bosun.io"');
  assert.equal((await get('/apis/example.bosun.io', { cert: proxy, user: 'nobody' })).status, 200, 'discovery is open to the front proxy\'s users');
});

test('without the front proxy: a bearer token the API server knows, else 401', async () => {
  assert.deepEqual(await get('/apis/example.bosun.io/v1/namespaces/a/widgets', { token: api.token }), { status: 200, body: { allowed: true } });
  for (const token of [undefined, 'not-a-token']) {
    const refused = await get('/apis/example.bosun.io/v1/namespaces/a/widgets', { token, user: 'system:admin' });
    assert.equal(refused.status, 401, `token ${token}`);
    assert.equal(refused.body.reason, 'Unauthorized');
  }
  // A certificate from another CA, or with a name the request-header settings do not allow, vouches for nobody.
  const stranger = await issueClientCert(await createCA('other-ca'), { commonName: 'front-proxy-client' });
  const unnamed = await issueClientCert(frontProxyCa, { commonName: 'someone-else' });
  for (const cert of [stranger, unnamed]) assert.equal((await get('/apis/example.bosun.io/v1/namespaces/a/widgets', { cert, user: 'system:admin', groups: ['system:masters'] })).status, 401);
});

test("a front-proxy user's SubjectAccessReview is cached: a revoked binding still allows for up to the cache's 10 s", async () => {
  const proxy = await issueClientCert(frontProxyCa, { commonName: 'front-proxy-client' });
  const { resources } = await import('../../src/kube/resources.js');
  const { eventually } = await import('../helpers/eventually.js');
  await admin.create(resources.clusterRoles, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-lister' }, rules: [{ apiGroups: ['example.bosun.io'], resources: ['widgets'], verbs: ['list'] }] });
  await admin.create(resources.clusterRoleBindings, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'carol-lists-widgets' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-lister' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }] });
  const asCarol = () => get('/apis/example.bosun.io/v1/namespaces/a/widgets', { cert: proxy, user: 'carol' });
  await eventually('carol allowed', async () => (await asCarol()).status === 200, 15_000);
  await admin.delete(resources.clusterRoleBindings, 'carol-lists-widgets');
  assert.equal((await asCarol()).status, 200, 'answered from the cache, no second review');
  await eventually('carol refused once the cached answer expired', async () => (await asCarol()).status === 403, 20_000);
});
