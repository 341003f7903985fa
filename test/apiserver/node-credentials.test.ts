// Bootstrap tokens as Kubernetes stores them, client-certificate subjects as users, and where
// the API server finds a pod's logs: the pure parts of node credentials and pods/log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authenticateBootstrapToken, bootstrapTokenSecret, generateBootstrapToken } from '../../src/apiserver/nodes/bootstrap-tokens.js';
import { userFromSubject } from '../../src/apiserver/auth/client-certificates.js';
import { expiredBootstrapTokens } from '../../src/apiserver/nodes/token-cleaner.js';
import { podLogLocation } from '../../src/apiserver/nodes/pod-logs.js';
import { ApiError } from '../../src/apiserver/errors.js';
import type * as api from '../../src/api/index.js';

test('bootstrap tokens authenticate as system:bootstrap:<id> until they expire, and only as they are stored', () => {
  const token = generateBootstrapToken();
  assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
  const id = token.slice(0, 6);
  const now = new Date('2026-01-01T00:00:00Z');
  const secret = bootstrapTokenSecret(token, { expiration: new Date('2026-01-02T00:00:00Z'), extraGroups: ['system:bootstrappers:worker'] });
  assert.equal(secret.metadata.name, `bootstrap-token-${id}`);
  assert.equal(secret.metadata.namespace, 'kube-system');
  assert.equal(secret.type, 'bootstrap.kubernetes.io/token');
  const lookup = (s: api.Secret) => (wanted: string) => (wanted === id ? s : undefined);
  const ok = authenticateBootstrapToken(token, lookup(secret), now);
  assert.deepEqual(ok, { ok: true, user: { name: `system:bootstrap:${id}`, groups: ['system:bootstrappers', 'system:bootstrappers:worker', 'system:authenticated'] } });
  const data = (patch: Record<string, string | undefined>) => {
    const d = { ...secret.data };
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) delete d[k];
      else d[k] = Buffer.from(v).toString('base64');
    }
    return { ...secret, data: d };
  };
  const table: [string, string, api.Secret | undefined, Date, RegExp][] = [
    ['wrong secret half', `${id}.${'0'.repeat(16)}`, secret, now, /does not match/],
    ['expired', token, secret, new Date('2026-01-02T00:00:00Z'), /expired/],
    ['not for authentication', token, data({ 'usage-bootstrap-authentication': undefined }), now, /usage-bootstrap-authentication/],
    ['another type', token, { ...secret, type: 'Opaque' }, now, /type/],
    ['being deleted', token, { ...secret, metadata: { ...secret.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, now, /deleted/],
    ['a foreign extra group', token, data({ 'auth-extra-groups': 'system:masters' }), now, /auth-extra-group/],
    ['no secret', token, undefined, now, /no secret/],
  ];
  for (const [name, t, stored, at, reason] of table) {
    const r = authenticateBootstrapToken(t, () => stored, at);
    assert.equal(r.ok, false, name);
    if (!r.ok) assert.match(r.reason, reason, name);
  }
  const other = authenticateBootstrapToken('eyJhbGciOi.x.y', () => secret, now);
  assert.equal(!other.ok && other.notBootstrapToken, true);
  assert.throws(() => bootstrapTokenSecret('short.token'), /bootstrap token/);
  assert.throws(() => bootstrapTokenSecret(token, { extraGroups: ['system:masters'] }), /auth-extra-group/);
});

test('a certificate subject names the user (CN) and groups (O)', () => {
  assert.deepEqual(userFromSubject({ CN: 'system:node:a', O: 'system:nodes' }), { name: 'system:node:a', groups: ['system:nodes', 'system:authenticated'] });
  assert.deepEqual(userFromSubject({ CN: 'alice', O: ['dev', 'ops'] }), { name: 'alice', groups: ['dev', 'ops', 'system:authenticated'] });
  assert.equal(userFromSubject({ O: 'system:masters' }), undefined);
});

test('pods/log goes to the kubelet of the pod\'s node with the log options', () => {
  const pod = { metadata: { namespace: 'ns', name: 'web' }, spec: { nodeName: 'a', containers: [{ name: 'app' }], initContainers: [{ name: 'init' }] } };
  const node = { metadata: { name: 'a' }, status: { addresses: [{ type: 'Hostname', address: 'a' }, { type: 'InternalIP', address: '127.0.1.4' }], daemonEndpoints: { kubeletEndpoint: { Port: 10251 } } } };
  const at = (query: Record<string, string>, p: object = pod, n: object | undefined = node) => podLogLocation(p as api.Pod, n as api.Node | undefined, query).url.href;
  assert.equal(at({}), 'https://127.0.1.4:10251/containerLogs/ns/web/app');
  assert.equal(at({ container: 'init', follow: 'true', previous: 'True', timestamps: 'false', tailLines: '10' }), 'https://127.0.1.4:10251/containerLogs/ns/web/init?follow=true&previous=true&tailLines=10');
  assert.equal(at({}, pod, { status: { addresses: [{ type: 'InternalIP', address: '127.0.1.5' }] } }), 'https://127.0.1.5:10250/containerLogs/ns/web/app');
  const refused: [string, () => unknown, number, RegExp][] = [
    ['two containers, none named', () => at({}, { ...pod, spec: { ...pod.spec, containers: [{ name: 'x' }, { name: 'y' }] } }), 400, /a container name must be specified for pod web, choose one of: \[x y\]/],
    ['an unknown container', () => at({ container: 'nope' }), 400, /container nope is not valid for pod web/],
    ['not scheduled', () => at({}, { ...pod, spec: { containers: [{ name: 'app' }] } }), 400, /does not have a host assigned/],
    ['negative tailLines', () => at({ tailLines: '-1' }), 422, /tailLines/],
    ['a bad boolean', () => at({ follow: 'yes' }), 400, /follow/],
    ['both since forms', () => at({ sinceSeconds: '5', sinceTime: '2026-01-01T00:00:00Z' }), 422, /at most one of/],
    ['node gone', () => podLogLocation(pod, undefined, {}), 404, /nodes "a" not found/],
  ];
  for (const [name, call, code, message] of refused) {
    assert.throws(call, (e: unknown) => e instanceof ApiError && e.code === code && message.test(e.message), name);
  }
});

test('the token cleaner picks bootstrap token Secrets past their expiration, and nothing else', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const token = (expiration?: Date) => bootstrapTokenSecret(generateBootstrapToken(), { expiration });
  const expired = token(new Date('2025-12-31T23:59:59Z'));
  const current = token(new Date('2026-01-01T00:00:01Z'));
  const forever = token();
  const opaque = { ...expired, type: 'Opaque' };
  assert.deepEqual(expiredBootstrapTokens([expired, current, forever, opaque], now), [expired]);
});
