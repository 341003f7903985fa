// Non-resource URLs pass the same authorization as resources: with RBAC on, an unprivileged
// service account reads discovery, /version, health and OpenAPI (bootstrap `system:discovery`
// and `system:public-info-viewer`) but gets 403 on /metrics, /debug/* and /logs until a role
// with `nonResourceURLs` grants them; `kubectl auth can-i` agrees; anonymous callers reach only
// health and /version. Every request, resource or not, passes the one authorizer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { metricsReader } from '../helpers/metrics.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import type { RequestAttributes } from '../../src/apiserver/server.js';

const METRICS_READER = metricsReader('metrics-reader', 'prometheus');

test('non-resource URLs are authorized through RBAC nonResourceURLs', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const access = await enableAccessControl(api.server, api.dataDir);
  try {
    await api.kubectlOk(['create', 'serviceaccount', 'nobody', '-n', 'default']);
    await api.kubectlOk(['create', 'serviceaccount', 'prometheus', '-n', 'default']);
    await api.kubectlOk(['apply', '-f', '-'], METRICS_READER);
    const nobody = (await api.kubectlOk(['create', 'token', 'nobody', '-n', 'default'])).trim();
    const prometheus = (await api.kubectlOk(['create', 'token', 'prometheus', '-n', 'default'])).trim();

    for (const path of ['/metrics', '/debug/pprof/', '/logs', '/logs/syslog']) {
      const r = await api.request('GET', path, { token: nobody });
      assert.equal(r.status, 403, path);
      assert.equal(r.json.kind, 'Status');
      assert.equal(r.json.message, `forbidden: User "system:serviceaccount:default:nobody" cannot get path "${path.replace(/\/$/, '')}"`);
    }
    for (const path of ['/version', '/healthz', '/readyz', '/livez', '/api', '/api/v1', '/apis', '/apis/apps/v1', '/openapi/v2', '/openapi/v3', '/openapi/v3/api/v1']) {
      assert.equal((await api.request('GET', path, { token: nobody })).status, 200, path);
    }
    const metrics = await api.request('GET', '/metrics', { token: prometheus });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /apiserver_request_total/);
    assert.equal((await api.request('GET', '/logs', { token: prometheus })).status, 403);

    const canI = async (token: string, path: string) => (await api.kubectl([`--token=${token}`, 'auth', 'can-i', 'get', path])).stdout.trim();
    assert.equal(await canI(nobody, '/metrics'), 'no');
    assert.equal(await canI(prometheus, '/metrics'), 'yes');
    assert.equal(await canI(nobody, '/version'), 'yes');
    assert.equal(await canI(nobody, '/debug/pprof'), 'no');
    // kubectl itself, as the unprivileged account.
    const denied = await api.kubectl([`--token=${nobody}`, 'get', '--raw', '/metrics']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /Forbidden/);

    // Without a token: health and version only.
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await api.request('GET', path, { token: null })).status, 200, path);
    for (const path of ['/metrics', '/api', '/openapi/v3']) assert.equal((await api.request('GET', path, { token: null })).status, 401, path);

    const monitoring = JSON.parse(await api.kubectlOk(['get', 'clusterrolebinding', 'system:monitoring', '-o', 'json']));
    assert.deepEqual(monitoring.subjects.map((s: any) => s.name), ['system:monitoring']);
  } finally {
    access.stop();
    await api.stop();
  }
});

test('every request, resource or not, passes the one authorizer with kube request attributes', async () => {
  const api = await startTestApiServer();
  try {
    const seen: RequestAttributes[] = [];
    let refuse = false;
    api.server.setAuthorizer((attributes) => {
      seen.push(attributes);
      return refuse ? `no (${attributes.path})` : undefined;
    });
    const table: [string, string, Partial<RequestAttributes>][] = [
      ['GET', '/version/', { resourceRequest: false, verb: 'get', path: '/version' }],
      ['GET', '/api', { resourceRequest: false, path: '/api' }],
      ['GET', '/apis/apps/v1', { resourceRequest: false, path: '/apis/apps/v1' }],
      ['GET', '/openapi/v3/api/v1', { resourceRequest: false, path: '/openapi/v3/api/v1' }],
      ['GET', '/metrics', { resourceRequest: false, path: '/metrics' }],
      ['GET', '/no/such/path', { resourceRequest: false, path: '/no/such/path' }],
      ['GET', '/api/v1/namespaces/default/configmaps?watch=True&timeoutSeconds=1', { resourceRequest: true, verb: 'watch', resource: 'configmaps', namespace: 'default' }],
      ['DELETE', '/apis/apps/v1/namespaces/default/deployments/d', { verb: 'delete', apiGroup: 'apps', resource: 'deployments', name: 'd' }],
      ['POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' }],
      ['POST', '/api/v1/namespaces/default/pods/p/eviction', { verb: 'create', resource: 'pods', subresource: 'eviction', name: 'p' }],
    ];
    for (const [method, path, want] of table) {
      seen.length = 0;
      await api.request(method, path, method === 'POST' ? { body: {} } : {});
      assert.equal(seen.length, 1, `${method} ${path} was authorized once`);
      for (const [k, v] of Object.entries(want)) assert.equal(seen[0][k as keyof RequestAttributes], v, `${method} ${path}: ${k}`);
      assert.equal(seen[0].user.name, 'system:admin');
    }
    // Anonymous health checks are authorized too, as system:anonymous.
    seen.length = 0;
    await api.request('GET', '/healthz', { token: null });
    assert.deepEqual(seen.map((a) => [a.user.name, a.user.groups, a.path]), [['system:anonymous', ['system:unauthenticated'], '/healthz']]);

    refuse = true;
    for (const [method, path] of table) {
      const r = await api.request(method, path, method === 'POST' ? { body: {} } : {});
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, /^no \(/);
    }
    assert.equal((await api.request('GET', '/healthz', { token: null })).status, 403);
  } finally {
    await api.stop();
  }
});
