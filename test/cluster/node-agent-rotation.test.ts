// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// Client certificate rotation: with the CSR signer issuing 150-second certificates (valid from
// 5 minutes back, as kube's signer backdates them) and the agent's jitter at its low end, a node
// that bootstrapped its certificate renews it itself at 70% of its lifetime — about 15 s after it
// was issued — with a second CSR requested by system:node:<name> and approved by the machine
// approver, writes the new key, certificate and kubeconfig where the bootstrap wrote them, and
// carries on (Ready, its Lease renewed) on the new credentials. The serving certificate on :10250
// likewise: renewed with a kubelet-serving CSR at 70% of its lifetime and presented to new
// connections, and after a reboot the one on disk serves again with no new CSR. The deadline is
// table-tested.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRef } from '../../src/kube/client.js';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { rotationDeadline } from '../../src/cluster/node-agent/certificate-rotation.js';
import { CLIENT_CERT_PATH, SERVING_CERT_PATH } from '../../src/cluster/node-agent/credentials.js';
import type { Obj } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { bootstrapUserData, bootWorker, readyCondition, startNodeCluster, type NodeCluster } from './node-agent-fixture.js';

const NODES: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'nodes', namespaced: false };
const LEASES: ResourceRef<Obj> = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true };
const CSRS: ResourceRef<Obj> = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests', namespaced: false };
const LIFETIME_MS = 150_000;

let c: NodeCluster;

before(async () => {
  c = await startNodeCluster({ clusterSigningDurationMs: LIFETIME_MS, agent: { certificateRotationJitter: () => 0 } });
});
after(async () => {
  await c?.close();
});

test('the rotation deadline falls between 70% and 90% of the lifetime', () => {
  const cases: Array<[number, number]> = [[0, 70_000], [0.5, 80_000], [0.999, 89_980]];
  for (const [random, want] of cases) assert.equal(Math.round(rotationDeadline(1_000_000, 1_100_000, random)), 1_000_000 + want, `random ${random}`);
});

test('a node renews its client certificate at 70% of its lifetime and carries on with the new one', { timeout: 60_000 }, async () => {
  const machine = await bootWorker(c, 'worker-r', await bootstrapUserData(c));
  const root = join(c.dataDir, 'machines', machine.id, 'root');
  const pem = () => readFileSync(join(root, CLIENT_CERT_PATH), 'utf8');
  await eventually('worker-r Ready', async () => readyCondition(await c.kube.read(NODES, 'worker-r'))?.status === 'True');
  const first = new X509Certificate(pem());
  const notBefore = Date.parse(first.validFrom);
  const expires = Date.parse(first.validTo);
  const deadline = rotationDeadline(notBefore, expires, 0);
  assert.ok(expires - Date.now() <= LIFETIME_MS, `the signer issued a short certificate (${first.validFrom} – ${first.validTo})`);

  const second = await eventually('a new client certificate', async () => { const cert = new X509Certificate(pem()); return cert.serialNumber !== first.serialNumber ? cert : undefined; }, 40_000);
  const rotatedAt = Date.now();
  assert.ok(rotatedAt >= deadline - 1000 && rotatedAt < expires, `renewed at the deadline (${new Date(deadline).toISOString()}), before the expiry`);
  assert.match(second.subject, /CN=system:node:worker-r/);
  assert.ok(Date.parse(second.validTo) > expires);
  const renewals = ((await c.kube.list(CSRS)).items as Obj[]).filter((r) => r.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' && r.spec.username === 'system:node:worker-r');
  assert.ok(renewals.length >= 1, 'the renewal was requested by the node itself');
  assert.ok(renewals.every((r) => r.status.conditions.some((k: Obj) => k.type === 'Approved' && k.status === 'True')), 'and approved by the machine approver');
  const kubeconfig = JSON.parse(readFileSync(join(root, 'var/lib/kubelet/kubeconfig'), 'utf8'));
  const inUse = new X509Certificate(Buffer.from(kubeconfig.users[0].user['client-certificate-data'], 'base64'));
  assert.ok([second.serialNumber, new X509Certificate(pem()).serialNumber].includes(inUse.serialNumber), 'the kubeconfig names the renewed certificate');

  const renewed = (await c.kube.get(LEASES, 'worker-r', 'kube-node-lease')).spec.renewTime;
  await eventually('the Lease renewed on the new credentials', async () => (await c.kube.get(LEASES, 'worker-r', 'kube-node-lease')).spec.renewTime !== renewed, 10_000);
  assert.equal(readyCondition(await c.kube.read(NODES, 'worker-r'))?.status, 'True');
});

/** The certificate the node's HTTPS server (:10250) presents to a new connection. */
function presented(host: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: 10250, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      resolve(new X509Certificate(raw));
    });
    socket.on('error', reject);
  });
}

test('a node renews its serving certificate at 70% of its lifetime, serves the new one, and after a reboot serves the one on disk without a new CSR', { timeout: 90_000 }, async () => {
  const machine = (await c.client.listInstances({ names: ['worker-r'] }))[0];
  const root = join(c.dataDir, 'machines', machine.id, 'root');
  const ca = new X509Certificate(c.api.caPem);
  const clusterSigned = async () => { const cert = await presented(machine.privateIp); return cert.checkIssued(ca) ? cert : undefined; };
  const first = await eventually('the cluster-signed serving certificate presented', clusterSigned, 30_000);
  const deadline = rotationDeadline(Date.parse(first.validFrom), Date.parse(first.validTo), 0);
  const second = await eventually('a renewed serving certificate presented', async () => { const cert = await clusterSigned(); return cert && cert.serialNumber !== first.serialNumber ? cert : undefined; }, { timeoutMs: 40_000, intervalMs: 200 });
  assert.ok(Date.now() >= deadline - 1000, `renewed at the deadline (${new Date(deadline).toISOString()})`);
  assert.match(second.subject, /CN=system:node:worker-r/);
  assert.ok(second.checkIP(machine.privateIp), 'for the node IP');
  assert.equal(new X509Certificate(readFileSync(join(root, SERVING_CERT_PATH))).serialNumber, second.serialNumber, 'written where the kubelet keeps it');

  const servingCsrs = async () => ((await c.kube.list(CSRS)).items as Obj[]).filter((r) => r.spec.signerName === 'kubernetes.io/kubelet-serving' && r.spec.username === 'system:node:worker-r').length;
  const csrsBefore = await servingCsrs();
  const bootBefore = (await c.kube.get(NODES, 'worker-r')).status.nodeInfo.bootID;
  await c.client.operate('reboot', machine.id);
  await eventually('worker-r back with a new boot ID', async () => {
    const n = await c.kube.read(NODES, 'worker-r');
    return n?.status?.nodeInfo?.bootID !== bootBefore && readyCondition(n)?.status === 'True';
  }, 30_000);
  const afterReboot = await eventually('the serving certificate presented after the reboot', clusterSigned, 10_000);
  assert.ok(Date.now() < rotationDeadline(Date.parse(second.validFrom), Date.parse(second.validTo), 0), 'the reboot is over before the renewed certificate is due');
  assert.equal(afterReboot.serialNumber, second.serialNumber, 'the certificate on disk, still valid, serves again');
  assert.equal(await servingCsrs(), csrsBefore, 'no new serving CSR after the reboot');
});
