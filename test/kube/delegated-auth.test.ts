// Delegated authentication and authorization against the real API server: TokenReview (also with
// the real kubectl) names a service account's token and refuses a tampered one; DelegatedAuth
// turns that and a SubjectAccessReview into 401/403/allowed for a non-resource URL and a resource,
// and caches its answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { DelegatedAuth, FakeClock, KubeClient, loadKubeConfig, verbForMethod } from '../../src/kube/index.js';

const GRANTS = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scraper}
rules:
- nonResourceURLs: ["/metrics"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["nodes/metrics"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: scraper}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: scraper}
subjects:
- {kind: ServiceAccount, name: scraper, namespace: default}
`;

test('TokenReview and DelegatedAuth: 401 for no or a bad token, 403 without the grant, allowed with it', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const access = await enableAccessControl(api.server, api.dataDir);
  try {
    await api.kubectlOk(['create', 'serviceaccount', 'scraper']);
    await api.kubectlOk(['create', 'serviceaccount', 'nobody']);
    await api.kubectlOk(['apply', '-f', '-'], GRANTS);
    const scraper = (await api.kubectlOk(['create', 'token', 'scraper'])).trim();
    const nobody = (await api.kubectlOk(['create', 'token', 'nobody'])).trim();

    // TokenReview through the real kubectl.
    const review = (token: string) => `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"${token}"}}`;
    const reviewed = JSON.parse(await api.kubectlOk(['create', '-o', 'json', '-f', '-'], review(scraper)));
    assert.equal(reviewed.kind, 'TokenReview');
    assert.equal(reviewed.status.authenticated, true);
    assert.equal(reviewed.status.user.username, 'system:serviceaccount:default:scraper');
    assert.ok(reviewed.status.user.groups.includes('system:serviceaccounts:default'));
    assert.ok(reviewed.status.user.uid);
    const tampered = JSON.parse(await api.kubectlOk(['create', '-o', 'json', '-f', '-'], review(`${scraper.slice(0, -4)}AAAA`)));
    assert.equal(tampered.status.authenticated, false);
    assert.match(tampered.status.error, /invalid bearer token/);
    // A service account without system:auth-delegator may not ask.
    const denied = await api.kubectl([`--token=${nobody}`, 'create', '-o', 'json', '-f', '-'], { input: review(scraper) });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /forbidden.*tokenreviews/i);

    const clock = new FakeClock();
    const auth = new DelegatedAuth(new KubeClient(loadKubeConfig(api.kubeconfigPath)), { clock });
    const metrics = { nonResource: { path: '/metrics', verb: verbForMethod('GET') } };
    assert.deepEqual(await auth.check(undefined, metrics), { allowed: false, status: 401, message: 'Unauthorized: a bearer token is required' });
    const bad = await auth.check('Bearer not-a-token', metrics);
    assert.equal(bad.allowed, false);
    assert.equal(!bad.allowed && bad.status, 401);
    const forbidden = await auth.check(`Bearer ${nobody}`, metrics);
    assert.equal(!forbidden.allowed && forbidden.status, 403);
    assert.match(!forbidden.allowed ? forbidden.message : '', /user "system:serviceaccount:default:nobody" cannot get \/metrics/);
    const allowed = await auth.check(`Bearer ${scraper}`, metrics);
    assert.deepEqual(allowed.allowed && allowed.user.username, 'system:serviceaccount:default:scraper');
    const node = { resource: { verb: 'get', resource: 'nodes', subresource: 'metrics', name: 'master-0' } };
    assert.equal((await auth.check(`Bearer ${scraper}`, node)).allowed, true);
    assert.equal((await auth.check(`Bearer ${scraper}`, { resource: { verb: 'get', resource: 'nodes', subresource: 'log', name: 'master-0' } })).allowed, false);

    // Answers are cached: a revoked grant still allows until the cache entry expires.
    await api.kubectlOk(['delete', 'clusterrolebinding', 'scraper']);
    assert.equal((await auth.check(`Bearer ${scraper}`, metrics)).allowed, true);
    clock.advance(11_000);
    const revoked = await auth.check(`Bearer ${scraper}`, metrics);
    assert.equal(!revoked.allowed && revoked.status, 403);
  } finally {
    access.stop();
    await api.stop();
  }
});
