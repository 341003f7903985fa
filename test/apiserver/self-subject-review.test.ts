// SelfSubjectReview (authentication.k8s.io/v1): who the caller is, as `kubectl auth whoami` asks
// it (and the web console, to name its signed-in user) — the admin, and a ServiceAccount's token
// with its groups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { startTestApiServer } from '../helpers/apiserver.js';

test('kubectl auth whoami: the admin, and a service account with its groups', async () => {
  const api = await startTestApiServer();
  try {
    await enableAccessControl(api.server, api.dataDir);
    const admin = JSON.parse(await api.kubectlOk(['auth', 'whoami', '-o', 'json']));
    assert.equal(admin.kind, 'SelfSubjectReview');
    assert.equal(admin.status.userInfo.username, 'system:admin');
    await api.kubectlOk(['create', 'serviceaccount', 'viewer', '-n', 'default']);
    const token = (await api.kubectlOk(['create', 'token', 'viewer', '-n', 'default'])).trim();
    const review = await api.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, token });
    assert.equal(review.status, 201, review.text);
    const info = JSON.parse(review.text).status.userInfo;
    assert.equal(info.username, 'system:serviceaccount:default:viewer');
    assert.ok(info.groups.includes('system:serviceaccounts:default'), info.groups.join(', '));
    const anonymous = await api.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { kind: 'SelfSubjectReview' }, token: 'not-a-token' });
    assert.equal(anonymous.status, 401);
  } finally {
    await api.stop();
  }
});
