// A node's credentials end to end, as a kubelet gets them, with the real kubectl and client-node:
// a bootstrap token (a kube-system Secret) → a CSR created as system:bootstrap:<id> → approved
// with `kubectl certificate approve` → signed by the API server → client-certificate
// authentication as system:node:<name>, which may write its own Node and Lease and gets 403 on
// another node and on labels NodeRestriction forbids. Denials, signer refusals and
// `kubectl get csr` columns on the way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { startClusterServer, type ClusterServer } from '../../src/apiserver/cluster-server.js';
import { createCA, createCertificateRequest, issueClientCert } from '../../src/common/pki.js';
import { bootstrapTokenSecret, generateBootstrapToken } from '../../src/apiserver/nodes/bootstrap-tokens.js';
import { runKubectl, type KubectlResult } from '../helpers/apiserver.js';
import type * as api from '../../src/api/index.js';
import { asKind } from '../../src/apiserver/kinds/strategy.js';
import { eventually } from '../helpers/eventually.js';

interface Cluster {
  cluster: ClusterServer;
  dir: string;
  admin(args: string[], input?: string): Promise<KubectlResult>;
  /** A kubeconfig for the same server with other credentials. */
  kubeconfig(name: string, user: Record<string, string>): string;
}

async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-nodes-'));
  const cluster = await startClusterServer({ dataDir: dir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  const { server } = cluster;
  return {
    cluster, dir,
    admin: (args, input) => runKubectl(server.kubeconfigPath, args, { input }),
    kubeconfig(name, user) {
      const path = join(dir, `${name}.kubeconfig`);
      writeFileSync(path, YAML.stringify({
        apiVersion: 'v1', kind: 'Config',
        clusters: [{ name: 'bosun', cluster: { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') } }],
        users: [{ name, user }],
        contexts: [{ name, context: { cluster: 'bosun', user: name } }],
        'current-context': name,
      }));
      return path;
    },
  };
}

const ok = (r: KubectlResult, what: string) => {
  assert.equal(r.code, 0, `${what}: ${r.stderr}`);
  return r.stdout;
};

function csrManifest(name: string, requestPem: string, signerName: string, usages: string[]): string {
  return YAML.stringify({
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: Buffer.from(requestPem).toString('base64'), signerName, usages, username: 'forged', groups: ['system:masters'] },
  });
}

test('a node gets its client certificate through a CSR approved with kubectl and is kept to its own objects', async () => {
  const c = await startCluster();
  try {
    // The administrator makes a bootstrap token, as `kubeadm token create` stores it.
    const token = generateBootstrapToken();
    const id = token.slice(0, 6);
    ok(await c.admin(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(token, { expiration: new Date(Date.now() + 3600_000) }))), 'bootstrap token');
    const bootstrap = c.kubeconfig('bootstrap', { token });

    // As the bootstrapper: may create and read CSRs, nothing else.
    const whoami = ok(await runKubectl(bootstrap, ['auth', 'can-i', 'create', 'certificatesigningrequests']), 'can-i');
    assert.equal(whoami.trim(), 'yes');
    const denied = await runKubectl(bootstrap, ['get', 'nodes']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, new RegExp(`User "system:bootstrap:${id}" cannot list resource "nodes"`));

    const { keyPem, requestPem } = await createCertificateRequest({ commonName: 'system:node:worker-a', organizations: ['system:nodes'] });
    ok(await runKubectl(bootstrap, ['create', '-f', '-'], { input: csrManifest('node-csr-a', requestPem, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth']) }), 'create CSR');
    const created = JSON.parse(ok(await c.admin(['get', 'csr', 'node-csr-a', '-o', 'json']), 'get csr'));
    // Who asked is recorded by the server, whatever the client claimed.
    assert.equal(created.spec.username, `system:bootstrap:${id}`);
    assert.deepEqual(created.spec.groups, ['system:bootstrappers', 'system:authenticated']);
    // The bootstrapper cannot approve its own request.
    const selfApprove = await runKubectl(bootstrap, ['certificate', 'approve', 'node-csr-a']);
    assert.notEqual(selfApprove.code, 0);
    assert.match(selfApprove.stderr, /cannot update resource "certificatesigningrequests\/approval"/);

    const pending = ok(await c.admin(['get', 'csr']), 'get csr table');
    assert.match(pending, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\n/);
    assert.match(pending, new RegExp(`node-csr-a\\s+\\S+\\s+kubernetes.io/kube-apiserver-client-kubelet\\s+system:bootstrap:${id}\\s+<none>\\s+Pending`));
    assert.match(ok(await c.admin(['certificate', 'approve', 'node-csr-a']), 'approve'), /certificatesigningrequest.certificates.k8s.io\/node-csr-a approved/);
    const issued = await eventually('the CSR to be issued', async () => {
      const csr = JSON.parse(ok(await c.admin(['get', 'csr', 'node-csr-a', '-o', 'json']), 'get'));
      return csr.status.certificate ? csr : undefined;
    });
    assert.equal(issued.status.conditions[0].type, 'Approved');
    assert.equal(issued.status.conditions[0].reason, 'KubectlApprove');
    assert.match(ok(await c.admin(['get', 'csr', 'node-csr-a']), 'get csr'), /Approved,Issued/);

    // The certificate says who the node is, is for client auth only, and comes from the cluster CA.
    const certPem = Buffer.from(issued.status.certificate, 'base64').toString();
    const cert = new X509Certificate(certPem);
    assert.equal(cert.subject, 'CN=system:node:worker-a\nO=system:nodes');
    assert.ok(cert.checkIssued(new X509Certificate(c.cluster.server.caPem)));
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.equal(cert.subjectAltName, undefined);
    const days = (Date.parse(cert.validTo) - Date.now()) / 86400_000;
    assert.ok(days > 364 && days < 366, `valid for ${days} days`);

    // As the node, with the certificate it was given.
    const node = c.kubeconfig('node', { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') });
    const nodeObject = (name: string, labels: Record<string, string> = {}) => JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } } });
    ok(await runKubectl(node, ['create', '-f', '-'], { input: nodeObject('worker-a', { 'node-role.kubernetes.io/worker': '' }) }), 'register own node');
    ok(await runKubectl(node, ['label', 'node', 'worker-a', 'example.com/team=infra']), 'label own node');
    ok(await runKubectl(node, ['get', 'node', 'worker-a']), 'read own node');
    ok(await c.admin(['create', '-f', '-'], nodeObject('worker-b')), 'admin registers another node');

    // Another node: kubectl cannot even read it (kube 1.33's Node authorizer), and a write that
    // skips the read is refused by NodeRestriction.
    const other = await runKubectl(node, ['label', 'node', 'worker-b', 'example.com/team=infra']);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /nodes "worker-b" is forbidden: User "system:node:worker-a" cannot get resource "nodes"/);
    // `kubectl auth can-i` asks the same authorizers: the Node authorizer, then RBAC.
    assert.equal((await runKubectl(node, ['auth', 'can-i', 'get', 'node/worker-a'])).stdout.trim(), 'yes');
    assert.equal((await runKubectl(node, ['auth', 'can-i', 'get', 'node/worker-b'])).stdout.trim(), 'no');
    const readOther = await runKubectl(node, ['get', 'node', 'worker-b']);
    assert.match(readOther.stderr, /cannot get resource "nodes".*node 'worker-a' cannot read 'worker-b', only its own Node object/);
    const restricted = await runKubectl(node, ['label', 'node', 'worker-a', 'node-restriction.kubernetes.io/pool=gold']);
    assert.notEqual(restricted.code, 0);
    assert.match(restricted.stderr, /is not allowed to modify labels: node-restriction.kubernetes.io\/pool/);
    const taint = await runKubectl(node, ['taint', 'node', 'worker-a', 'example.com/x=y:NoSchedule']);
    assert.match(taint.stderr, /not allowed to modify taints/);
    const deleteOwn = await runKubectl(node, ['delete', 'node', 'worker-a']);
    assert.notEqual(deleteOwn.code, 0);

    // Its own Lease in kube-node-lease, and no other.
    const lease = (name: string) => JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
    ok(await runKubectl(node, ['create', '-f', '-'], { input: lease('worker-a') }), 'own lease');
    const otherLease = await runKubectl(node, ['create', '-f', '-'], { input: lease('worker-b') });
    assert.match(otherLease.stderr, /can only access node lease with the same name as the requesting node/);

    // client-node over the same client certificate: status updates of its own Node.
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(node);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.patchNodeStatus({ name: 'worker-a', body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    assert.equal((await core.readNode({ name: 'worker-a' })).status?.conditions?.[0]?.type, 'Ready');
    const refusedBy = (message: RegExp) => (e: unknown) => (e as { code?: number }).code === 403 && message.test(String((e as { body?: unknown }).body));
    const notOwn = /nodes \\?"worker-b\\?" is forbidden: node \\?"worker-a\\?" is not allowed to modify node \\?"worker-b\\?"/;
    await assert.rejects(core.patchNodeStatus({ name: 'worker-b', body: { status: { conditions: [] } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)), refusedBy(notOwn));
    await assert.rejects(core.patchNode({ name: 'worker-b', body: { metadata: { labels: { 'example.com/team': 'infra' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)), refusedBy(notOwn));
    assert.match(ok(await c.admin(['get', 'nodes']), 'nodes'), /worker-a\s+Ready/);

    // Its serving certificate, requested with its client certificate (kubelet-serving signer).
    const serving = await createCertificateRequest({ commonName: 'system:node:worker-a', organizations: ['system:nodes'] }, ['127.0.1.7', 'worker-a']);
    ok(await runKubectl(node, ['create', '-f', '-'], { input: csrManifest('serving-a', serving.requestPem, 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth']) }), 'serving CSR');
    assert.equal(JSON.parse(ok(await c.admin(['get', 'csr', 'serving-a', '-o', 'json']), 'get')).spec.username, 'system:node:worker-a');
    ok(await c.admin(['certificate', 'approve', 'serving-a']), 'approve serving');
    const servingCert = await eventually('the serving CSR to be issued', async () => {
      const csr = JSON.parse(ok(await c.admin(['get', 'csr', 'serving-a', '-o', 'json']), 'get'));
      return csr.status.certificate ? new X509Certificate(Buffer.from(csr.status.certificate, 'base64')) : undefined;
    });
    assert.equal(servingCert.subjectAltName, 'DNS:worker-a, IP Address:127.0.1.7');
    assert.deepEqual(servingCert.keyUsage, ['1.3.6.1.5.5.7.3.1']);

    // What a kubelet reads: its pods by spec.nodeName, and only the secrets they refer to.
    const pod = (name: string, nodeName: string, secret: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 's', secret: { secretName: secret } }] } });
    for (const name of ['for-a', 'for-b']) ok(await c.admin(['create', 'secret', 'generic', name, '--from-literal=k=v']), 'secret');
    ok(await c.admin(['create', '-f', '-'], pod('web-a', 'worker-a', 'for-a')), 'pod on a');
    ok(await c.admin(['create', '-f', '-'], pod('web-b', 'worker-b', 'for-b')), 'pod on b');
    assert.match(ok(await runKubectl(node, ['get', 'pods', '-A', '--field-selector', 'spec.nodeName=worker-a']), 'own pods'), /web-a/);
    assert.match((await runKubectl(node, ['get', 'pods', '-A'])).stderr, /can only list\/watch pods with spec.nodeName field selector/);
    ok(await runKubectl(node, ['get', 'secret', 'for-a', '-n', 'default']), 'secret of its pod');
    assert.match((await runKubectl(node, ['get', 'secret', 'for-b', '-n', 'default'])).stderr, /no relationship found between node 'worker-a' and this object/);
    // Evicting a pod on another node is NodeRestriction's to refuse.
    const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-b', namespace: 'default' } };
    await assert.rejects(core.createNamespacedPodEviction({ name: 'web-b', namespace: 'default', body: eviction }), refusedBy(/can only evict pods with spec.nodeName set to itself/));
    assert.match(ok(await c.admin(['get', 'pods']), 'pods'), /web-b/);
  } finally {
    await c.cluster.stop();
    rmSync(c.dir, { recursive: true, force: true });
  }
});

test('denied, misfit and invalid CSRs: kubectl deny, the signer\'s Failed condition, and 422s', async () => {
  const c = await startCluster();
  try {
    const user = await createCertificateRequest({ commonName: 'alice', organizations: ['devs'] });
    ok(await c.admin(['create', '-f', '-'], csrManifest('alice-as-node', user.requestPem, 'kubernetes.io/kube-apiserver-client-kubelet', ['client auth'])), 'create');
    ok(await c.admin(['create', '-f', '-'], csrManifest('alice-client', user.requestPem, 'kubernetes.io/kube-apiserver-client', ['client auth'])), 'create');
    ok(await c.admin(['create', '-f', '-'], csrManifest('to-deny', user.requestPem, 'kubernetes.io/kube-apiserver-client', ['client auth'])), 'create');
    // The admin created them: the requester is the admin, not what the manifest says.
    assert.equal(JSON.parse(ok(await c.admin(['get', 'csr', 'alice-client', '-o', 'json']), 'get')).spec.username, 'system:admin');

    assert.match(ok(await c.admin(['certificate', 'deny', 'to-deny']), 'deny'), /denied/);
    ok(await c.admin(['certificate', 'approve', 'alice-as-node', 'alice-client']), 'approve');
    const failed = await eventually('the misfit CSR to fail', async () => {
      const csr = JSON.parse(ok(await c.admin(['get', 'csr', 'alice-as-node', '-o', 'json']), 'get'));
      return csr.status.conditions?.find((x: { type: string }) => x.type === 'Failed') ? csr : undefined;
    });
    assert.equal(failed.status.certificate, undefined);
    assert.match(failed.status.conditions.find((x: { type: string }) => x.type === 'Failed').message, /subject organization is not system:nodes/);
    await eventually('the client CSR to be issued', async () => JSON.parse(ok(await c.admin(['get', 'csr', 'alice-client', '-o', 'json']), 'get')).status.certificate);
    const table = ok(await c.admin(['get', 'csr']), 'table');
    assert.match(table, /alice-as-node\s.*\sApproved,Failed\n/);
    assert.match(table, /alice-client\s.*\sApproved,Issued\n/);
    assert.match(table, /to-deny\s.*\sDenied\n/);
    // A denied request cannot be approved afterwards: kubectl says so, and the API refuses it too.
    const flip = await c.admin(['certificate', 'approve', 'to-deny']);
    assert.match(flip.stderr, /already Denied/);
    const csrType = c.cluster.server.registry.lookup('certificates.k8s.io', 'v1', 'certificatesigningrequests')!;
    const approved = { type: 'Approved', status: 'True', reason: 'Mine' };
    const denied = asKind<Required<api.CertificateSigningRequest>>(c.cluster.server.resources.get(csrType, undefined, 'to-deny'));
    await assert.rejects(c.cluster.server.resources.update(csrType, undefined, 'to-deny', { ...denied, status: { conditions: [approved] } }, { subresource: 'approval' }),
      /may not remove a condition of type "Denied"/);
    await assert.rejects(c.cluster.server.resources.update(csrType, undefined, 'to-deny', { ...denied, status: { conditions: [...(denied.status.conditions ?? []), approved] } }, { subresource: 'approval' }),
      /Approved and Denied conditions are mutually exclusive/);

    const invalid: [string, Record<string, unknown>, RegExp][] = [
      ['no request', { signerName: 'example.com/x', usages: ['client auth'] }, /spec.request: Required value/],
      ['not a CSR', { request: Buffer.from('hello').toString('base64'), signerName: 'example.com/x', usages: ['client auth'] }, /PEM block type must be CERTIFICATE REQUEST/],
      ['no signer', { request: Buffer.from(user.requestPem).toString('base64'), usages: ['client auth'] }, /spec.signerName: Required value/],
      ['unqualified signer', { request: Buffer.from(user.requestPem).toString('base64'), signerName: 'mine', usages: ['client auth'] }, /fully qualified domain and path/],
      ['unknown usage', { request: Buffer.from(user.requestPem).toString('base64'), signerName: 'example.com/x', usages: ['flying'] }, /spec.usages\[0\]: Unsupported value: "flying"/],
      ['short duration', { request: Buffer.from(user.requestPem).toString('base64'), signerName: 'example.com/x', usages: ['client auth'], expirationSeconds: 60 }, /may not specify a duration less than 600 seconds/],
    ];
    for (const [name, spec, message] of invalid) {
      const r = await c.admin(['create', '-f', '-'], JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'bad' }, spec }));
      assert.notEqual(r.code, 0, name);
      assert.match(r.stderr, message, name);
    }
    // Approving takes the `approve` verb on the signer (kube's CertificateApproval), and no
    // signer mints system:masters client certificates (CertificateSubjectRestriction).
    const masters = await createCertificateRequest({ commonName: 'mallory', organizations: ['system:masters'] });
    const minted = await c.admin(['create', '-f', '-'], csrManifest('mallory', masters.requestPem, 'kubernetes.io/kube-apiserver-client', ['client auth']));
    assert.match(minted.stderr, /use of kubernetes.io\/kube-apiserver-client signer with system:masters group is not allowed/);
    ok(await c.admin(['create', '-f', '-'], csrManifest('bob-client', user.requestPem, 'kubernetes.io/kube-apiserver-client', ['client auth'])), 'create');
    const approverRole = (signerRule: boolean) => YAML.stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'csr-approver' },
      rules: [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
        ...(signerRule ? [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/*'], verbs: ['approve'] }] : []),
      ],
    });
    ok(await c.admin(['create', 'serviceaccount', 'approver']), 'sa');
    ok(await c.admin(['apply', '-f', '-'], approverRole(false)), 'role');
    ok(await c.admin(['create', 'clusterrolebinding', 'csr-approver', '--clusterrole=csr-approver', '--serviceaccount=default:approver']), 'binding');
    const approver = c.kubeconfig('approver', { token: ok(await c.admin(['create', 'token', 'approver']), 'token').trim() });
    assert.match((await runKubectl(approver, ['certificate', 'approve', 'bob-client'])).stderr, /user not permitted to approve requests with signerName "kubernetes.io\/kube-apiserver-client"/);
    ok(await c.admin(['apply', '-f', '-'], approverRole(true)), 'role with signers');
    assert.match(ok(await runKubectl(approver, ['certificate', 'approve', 'bob-client']), 'approve as approver'), /approved/);

    // A certificate from another CA is no credential, whatever its subject says.
    const forged = await issueClientCert(await createCA('someone-else'), { commonName: 'system:admin', organizations: ['system:masters'] });
    const forgedConfig = c.kubeconfig('forged', { 'client-certificate-data': Buffer.from(forged.certPem).toString('base64'), 'client-key-data': Buffer.from(forged.keyPem).toString('base64') });
    assert.match((await runKubectl(forgedConfig, ['get', 'nodes'])).stderr, /Unauthorized|must be logged in/);
    assert.match(ok(await c.admin(['explain', 'csr.spec.signerName']), 'explain'), /kubernetes.io\/kube-apiserver-client-kubelet/);
    // Status writes cannot approve: the decision only changes through the approval subresource.
    const viaStatus = asKind<{ metadata: object; status: { conditions: { type: string }[] } }>(await c.cluster.server.resources.update(csrType, undefined, 'to-deny',
      { metadata: { name: 'to-deny' }, status: { conditions: [] } }, { subresource: 'status' }));
    assert.equal(viaStatus.status.conditions[0].type, 'Denied');
  } finally {
    await c.cluster.stop();
    rmSync(c.dir, { recursive: true, force: true });
  }
});

test('expired bootstrap tokens stop authenticating and are deleted by the token cleaner', async () => {
  const c = await startCluster();
  let restarted: ClusterServer | undefined;
  try {
    const expired = generateBootstrapToken();
    const valid = generateBootstrapToken();
    ok(await c.admin(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(expired, { expiration: new Date(Date.now() + 3600_000) }))), 'expiring token');
    ok(await c.admin(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(valid, { expiration: new Date(Date.now() + 3600_000) }))), 'valid token');
    ok(await runKubectl(c.kubeconfig('soon', { token: expired }), ['get', 'csr']), 'before expiry');
    // Its expiration moves into the past (rather than waiting out a short one, which a slow
    // machine can pass before the first request): authentication reads it at every request.
    ok(await c.admin(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(expired, { expiration: new Date(Date.now() - 1000) }))), 'token expired');
    assert.match((await runKubectl(c.kubeconfig('late', { token: expired }), ['get', 'csr'])).stderr, /Unauthorized/);
    // The cleaner runs at start (then every minute): a restart finds the expired Secret and deletes it.
    await c.cluster.stop();
    restarted = await startClusterServer({ dataDir: c.dir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
    const server = restarted.server;
    await eventually('the expired token Secret to be deleted', async () => !server.storage.get(`/core/secrets/kube-system/bootstrap-token-${expired.slice(0, 6)}`));
    assert.ok(server.storage.get(`/core/secrets/kube-system/bootstrap-token-${valid.slice(0, 6)}`));
  } finally {
    await (restarted ?? c.cluster).stop();
    rmSync(c.dir, { recursive: true, force: true });
  }
});
