// RBAC and ServiceAccount tokens wired into the real API server, exercised with the real kubectl:
// a service account bound to the cloud-controller-manager ClusterRole may do what it grants and
// gets Kubernetes' 403 otherwise; a tampered token gets 401; role changes apply without a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { enableAudit } from '../../src/apiserver/filters/audit-log.js';
import { issueToken, loadOrCreateSigningKeys } from '../../src/apiserver/auth/serviceaccount-tokens.js';
import { eventually } from '../helpers/eventually.js';
import { CCM_DOCUMENTED_RULES } from '../helpers/ccm-role.js';

const CCM = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cloud-controller-manager
rules:
${CCM_DOCUMENTED_RULES}---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:cloud-controller-manager
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cloud-controller-manager
subjects:
- kind: ServiceAccount
  name: cloud-controller-manager
  namespace: kube-system
`;

test('a cloud-controller-manager service account token: granted, forbidden, tampered, changed role', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const access = await enableAccessControl(api.server, api.dataDir);
  const audit = enableAudit(api.server, api.dataDir);
  try {
    const admin = async (args: string[], input?: string) => {
      const r = await api.kubectl(args, { input });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await admin(['create', 'serviceaccount', 'cloud-controller-manager', '-n', 'kube-system']);
    await admin(['apply', '-f', '-'], CCM);
    await admin(['get', 'clusterrole', 'cluster-admin', 'system:discovery', 'system:basic-user']);
    const created = await admin(['create', 'token', 'cloud-controller-manager', '-n', 'kube-system', '--duration=20m']);
    const token = created.stdout.trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    assert.equal(claims.exp - claims.iat, 1200);
    assert.match((await api.kubectl(['create', 'token', 'nobody', '-n', 'kube-system'])).stderr, /serviceaccounts "nobody" not found/);
    assert.match((await api.kubectl(['create', 'token', 'cloud-controller-manager', '-n', 'kube-system', '--duration=5m'])).stderr, /10 minutes/);
    const as = (t: string, args: string[]) => api.kubectl([`--token=${t}`, ...args]);

    // kubectl auth can-i agrees with the role.
    const canI = async (...args: string[]) => (await as(token, ['auth', 'can-i', ...args])).stdout.trim();
    assert.equal(await canI('patch', 'nodes/status'), 'yes');
    assert.equal(await canI('delete', 'nodes'), 'yes');
    assert.equal(await canI('get', 'services'), 'no');
    assert.equal(await canI('create', 'pods', '-n', 'default'), 'no');
    const list = (await as(token, ['auth', 'can-i', '--list', '-n', 'default'])).stdout;
    assert.match(list, /nodes\/status\s+\[\]\s+\[\]\s+\[patch\]/);
    assert.match(list, /persistentvolumes\s+\[\]\s+\[\]\s+\[get list update watch\]/);
    assert.doesNotMatch(list, /^pods\s/m);
    const sar = (verb: string, resource: string) => api.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:serviceaccount:kube-system:cloud-controller-manager', groups: ['system:authenticated'], resourceAttributes: { verb, resource, namespace: 'default' } } },
    });
    assert.equal((await sar('delete', 'pods')).json.status.allowed, false);
    assert.equal((await sar('create', 'endpoints')).json.status.allowed, true);
    // A service account may not ask about others.
    assert.equal((await api.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { token, body: { spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } } } })).status, 403);

    assert.equal((await as(token, ['get', 'nodes'])).code, 0);
    assert.equal((await as(token, ['get', 'services', '-A'])).code, 0);
    assert.equal((await as(token, ['create', 'serviceaccount', 'x', '-n', 'default'])).code, 0);
    const denied = await as(token, ['get', 'pods', '-n', 'default']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /Error from server \(Forbidden\): pods is forbidden: User "system:serviceaccount:kube-system:cloud-controller-manager" cannot list resource "pods" in API group "" in the namespace "default"/);
    const deniedSecret = await as(token, ['get', 'secret', 's', '-n', 'kube-system']);
    assert.match(deniedSecret.stderr, /secrets "s" is forbidden: User "system:serviceaccount:kube-system:cloud-controller-manager" cannot get resource "secrets" in API group "" in the namespace "kube-system"/);
    const deniedSvc = await as(token, ['delete', 'service', 'kubernetes', '-n', 'default']);
    assert.match(deniedSvc.stderr, /cannot delete resource "services"/);

    const [h, p, s] = token.split('.');
    const tampered = `${h}.${p}.${s.slice(0, -6)}AAAAAA`;
    const refused = await as(tampered, ['get', 'nodes']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Unauthorized/);
    // A token the server signed for this account, expired an hour ago: 401 as well.
    const account = JSON.parse((await admin(['get', 'serviceaccount', 'cloud-controller-manager', '-n', 'kube-system', '-o', 'json'])).stdout);
    const keys = loadOrCreateSigningKeys(join(api.dataDir, 'pki'));
    const expired = issueToken(keys, { namespace: 'kube-system', name: 'cloud-controller-manager', uid: account.metadata.uid }, { expirationSeconds: 600 }, { now: new Date(Date.now() - 2 * 3600_000) }).token;
    const late = await as(expired, ['get', 'nodes']);
    assert.notEqual(late.code, 0);
    assert.match(late.stderr, /Unauthorized/);
    assert.equal((await api.request('GET', '/api/v1/nodes', { token: expired })).status, 401);

    // Granting pods takes effect without a restart.
    await admin(['patch', 'clusterrole', 'cloud-controller-manager', '--type=json', '-p', '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}}]']);
    await eventually('pods to become listable after the ClusterRole changed', async () => (await as(token, ['get', 'pods', '-n', 'default'])).code === 0, 5000);

    // Deleting the service account invalidates its tokens.
    await admin(['delete', 'serviceaccount', 'cloud-controller-manager', '-n', 'kube-system']);
    assert.match((await as(token, ['get', 'nodes'])).stderr, /Unauthorized/);

    // The audit trail names who changed what, refusals included; reads are not in it.
    await audit.close();
    const lines = readFileSync(join(api.dataDir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const sa = 'system:serviceaccount:kube-system:cloud-controller-manager';
    assert.ok(lines.some((e) => e.user === sa && e.verb === 'create' && e.resource === 'serviceaccounts' && e.name === undefined && e.namespace === 'default' && e.code === 201));
    assert.ok(lines.some((e) => e.user === sa && e.verb === 'delete' && e.resource === 'services' && e.name === 'kubernetes' && e.code === 403));
    assert.ok(lines.some((e) => e.user === 'system:admin' && e.verb === 'patch' && e.resource === 'clusterroles.rbac.authorization.k8s.io' && e.name === 'cloud-controller-manager' && e.code === 200));
    assert.ok(lines.some((e) => e.user === 'system:admin' && e.verb === 'create' && e.resource === 'serviceaccounts/token' && e.code === 201));
    assert.ok(lines.every((e) => !['get', 'list', 'watch'].includes(e.verb)));
  } finally {
    await audit.close();
    access.stop();
    await api.stop();
  }
});

test('until its access control is loaded, an API server started for it authorises only system:masters (no allow-all moment)', { timeout: 60_000 }, async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { request } = await import('node:https');
  const { startApiServer } = await import('../../src/apiserver/server.js');
  const { issueClientCert } = await import('../../src/common/pki.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-pending-access-'));
  const server = await startApiServer({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn', accessControlPending: true });
  try {
    const ca = { certPem: readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(dataDir, 'pki', 'ca.key'), 'utf8') };
    const node = await issueClientCert(ca, { commonName: 'system:node:worker-0', organizations: ['system:nodes'] });
    const get = (path: string, auth: { cert?: typeof node; token?: string }) => new Promise<{ status: number; message: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port: server.port, path, ca: server.caPem, agent: false, ...(auth.cert ? { cert: auth.cert.certPem, key: auth.cert.keyPem } : {}), headers: auth.token ? { authorization: `Bearer ${auth.token}` } : {} }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => resolve({ status: res.statusCode ?? 0, message: JSON.parse(text).message ?? '' }));
      }).on('error', reject).end();
    });
    const refused = await get('/api/v1/secrets', { cert: node });
    assert.equal(refused.status, 403);
    assert.match(refused.message, /has not loaded its access control yet: only system:masters is authorised \(user "system:node:worker-0"\)/);
    assert.equal((await get('/api/v1/secrets', { token: server.token })).status, 200, 'the admin (system:masters) is served');
    const access = await enableAccessControl(server, dataDir);
    try {
      const byRbac = await get('/api/v1/secrets', { cert: node });
      assert.equal(byRbac.status, 403);
      assert.doesNotMatch(byRbac.message, /has not loaded/, 'RBAC decides from now on');
    } finally {
      access.stop();
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
