// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// THE CREDENTIAL FLOW, against the server side of node credentials (h-nodeauth: CSRs and their
// signer, bootstrap tokens, client-certificate authentication, the Node authorizer and
// NodeRestriction, the pods/log proxy).
// A machine gets its credentials as a kubelet does: the bootstrap kubeconfig Ignition wrote (a
// bootstrap token) → a CSR for system:node:<name> → approved by the machine approver because the
// cloud has that machine → signed → the client-certificate kubeconfig written under the root; the
// node registers as system:node:<name>, cannot touch another node, its serving certificate comes
// from a kubelet-serving CSR, and `kubectl logs` reaches its pods through the API server. A CSR
// for a machine the cloud does not have stays pending.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRef } from '../../src/kube/client.js';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { bootstrapTokenSecret, generateBootstrapToken } from '../../src/apiserver/nodes/bootstrap-tokens.js';
import { machineApprover } from '../../src/cluster/machine-approver.js';
import { nodeCertificateRequest } from '../../src/cluster/node-agent/certificates.js';
import { KubeClient, withConnectionReuse, type Obj } from '../../src/kube/index.js';
import type { Instance } from '../../src/cloud/types.js';
import { runKubectl } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { bootWorker, kubeconfigText, readyCondition, startNodeCluster, workerUserData, type NodeCluster } from './node-agent-fixture.js';

const NODES: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'nodes', namespaced: false };
const PODS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const CSRS: ResourceRef<Obj> = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests', namespaced: false };

let c: NodeCluster;
let token: string;
let machine: Instance;
let root: string;
const stopApprover = new AbortController();

function clientFor(user: Obj): KubeClient {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfigText(c.api.url, c.api.caPem, user));
  return new KubeClient(withConnectionReuse(kc));
}

before(async () => {
  c = await startNodeCluster();
  void machineApprover({ client: c.kube, cloud: c.client }).run(stopApprover.signal);
  token = generateBootstrapToken();
  await c.api.kubectlOk(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(token, { expiration: new Date(Date.now() + 3600_000) })));
  machine = await bootWorker(c, 'worker-c', workerUserData(c.api, { bootstrapUser: { token } }));
  root = join(c.dataDir, 'machines', machine.id, 'root');
});
after(async () => {
  stopApprover.abort();
  await c?.close();
});

test('the node bootstraps its client certificate through a CSR the machine approver approves, and registers as system:node:<name>', { timeout: 60_000 }, async () => {
  const node = await eventually('worker-c Ready', async () => { const n = await c.kube.read(NODES, 'worker-c'); return readyCondition(n)?.status === 'True' ? n : undefined; }, 40_000);
  assert.ok(node);
  const kubeconfig = JSON.parse(readFileSync(join(root, 'var/lib/kubelet/kubeconfig'), 'utf8'));
  const cert = new X509Certificate(Buffer.from(kubeconfig.users[0].user['client-certificate-data'], 'base64'));
  assert.match(cert.subject, /CN=system:node:worker-c/);
  assert.match(cert.subject, /O=system:nodes/);
  const csrs = (await c.kube.list(CSRS)).items as Obj[];
  const client = csrs.find((x) => x.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet');
  assert.equal(client?.spec.username, `system:bootstrap:${token.slice(0, 6)}`);
  assert.ok(client.status.conditions.some((x: Obj) => x.type === 'Approved' && x.reason === 'NodeCSRApprove'));
  const serving = await eventually('serving CSR issued', async () => ((await c.kube.list(CSRS)).items as Obj[]).find((x) => x.spec.signerName === 'kubernetes.io/kubelet-serving' && x.status?.certificate));
  assert.equal(serving.spec.username, 'system:node:worker-c');
  // The node's lease was written with the node's own credentials.
  assert.ok(await eventually('the node lease', () => c.kube.read({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true }, 'worker-c', 'kube-node-lease')));
});

test('the node\'s credentials cannot modify another node (403)', { timeout: 30_000 }, async () => {
  await c.kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'someone-else' } });
  const kubeconfig = JSON.parse(readFileSync(join(root, 'var/lib/kubelet/kubeconfig'), 'utf8'));
  const asNode = clientFor(kubeconfig.users[0].user);
  await assert.rejects(asNode.mergePatch(NODES, 'someone-else', undefined, { metadata: { labels: { hacked: 'true' } } }), (e: { code?: number }) => e.code === 403);
  await asNode.mergePatch(NODES, 'worker-c', undefined, { metadata: { annotations: { 'bosun.test/own': 'yes' } } });
});

test('a CSR for a machine the cloud does not have stays pending', { timeout: 30_000 }, async () => {
  const asBootstrapper = clientFor({ token });
  const { csrPem } = await nodeCertificateRequest('ghost');
  const created = await asBootstrapper.create(CSRS, {
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'ghost-csr' },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
  });
  assert.equal(created.metadata.name, 'ghost-csr');
  await new Promise((r) => setTimeout(r, 2000));
  const after = await c.kube.get(CSRS, 'ghost-csr');
  assert.deepEqual(after.status?.conditions ?? [], []);
  assert.equal(after.status?.certificate, undefined);
  const out = await c.api.kubectlOk(['get', 'csr', 'ghost-csr']);
  assert.match(out, /ghost-csr\s.*Pending/);
});

function httpGet(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host, port, agent: false }, (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => resolve(b)); }).on('error', reject).end();
  });
}

test('kubectl logs [--tail] [-f] [--previous] shows a pod\'s container log through the API server and the node\'s :10250', { timeout: 90_000 }, async () => {
  await c.kube.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'echo-c', namespace: 'default' }, spec: { nodeName: 'worker-c', containers: [{ name: 'echo', image: 'bosun.local/echo:latest' }] } });
  const p = await eventually('echo-c Ready', async () => { const x = await c.kube.read(PODS, 'echo-c', 'default'); return x?.status?.conditions?.some((k: Obj) => k.type === 'Ready' && k.status === 'True') ? x : undefined; }, 30_000);
  assert.equal(await eventually('echo answers', () => httpGet(p.status.podIP, 8080).catch(() => undefined)), 'echo-c\n');
  const logs = await c.api.kubectlOk(['logs', 'echo-c']);
  assert.match(logs, /listening on 127\.1\.\d+\.\d+:8080/);
  assert.match(logs, /GET \//);
  assert.equal((await c.api.kubectlOk(['logs', 'echo-c', '--tail=1'])).trim().split('\n').length, 1);
  // (-f never ends by itself: kubectl is stopped after a while, long enough for it to start on a loaded machine.)
  const followed = await runKubectl(c.api.kubeconfigPath, ['logs', '-f', 'echo-c'], { timeoutMs: 10_000 });
  assert.match(followed.stdout, /listening on/);

  // A certificate from the cluster CA is not enough: the node's own may not read logs (nodes/proxy).
  const user = JSON.parse(readFileSync(join(root, 'var/lib/kubelet/kubeconfig'), 'utf8')).users[0].user;
  const asNode = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    httpsRequest({
      host: machine.privateIp, port: 10250, path: '/containerLogs/default/echo-c/echo', agent: false, ca: c.api.caPem,
      cert: Buffer.from(user['client-certificate-data'], 'base64'), key: Buffer.from(user['client-key-data'], 'base64'),
    }, (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b })); }).on('error', reject).end();
  });
  assert.equal(asNode.status, 403);
  assert.match(asNode.body, /Forbidden \(user=system:node:worker-c, verb=get, resource=nodes, subresource=proxy\)/);

  await c.client.operate('reboot', machine.id);
  await eventually('echo-c restarted', async () => { const x = await c.kube.read(PODS, 'echo-c', 'default'); return x?.status?.containerStatuses?.[0]?.restartCount === 1 && x.status.containerStatuses[0].ready; }, 30_000);
  const previous = await c.api.kubectlOk(['logs', 'echo-c', '--previous']);
  assert.match(previous, /SIGTERM received; closing/);
});
