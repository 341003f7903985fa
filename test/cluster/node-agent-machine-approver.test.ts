// The machine approver's decision, table-driven: which kubelet CSRs a machine in the cloud backs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../../src/cluster/machine-approver.js';
import { nodeCertificateRequest } from '../../src/cluster/node-agent/certificates.js';
import type { Instance } from '../../src/cloud/types.js';
import type * as api from '../../src/api/index.js';

const instance = (name: string, ip: string, state: Instance['state'] = 'running'): Instance => ({
  id: `i-${name}`, name, type: 'local.small', zone: 'local-a', region: 'local', privateIp: ip, state,
  launchTime: '', createdAt: '', machine: { phase: 'Up', bootCount: 1 },
});
const cloud = [instance('worker-0', '127.0.1.1'), instance('worker-1', '127.0.1.2'), instance('gone', '127.0.1.9', 'terminated')];

async function csr(o: { cn?: string; hosts?: string[]; signer: string; usages: string[]; username: string; groups?: string[]; org?: string }): Promise<api.CertificateSigningRequest> {
  const { csrPem } = await nodeCertificateRequest((o.cn ?? 'system:node:worker-0').replace(/^system:node:/, ''), o.hosts ?? []);
  return { metadata: { name: 'csr-x' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: o.signer, usages: o.usages, username: o.username, groups: o.groups ?? [] } };
}

const CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING = 'kubernetes.io/kubelet-serving';
const bootstrapper = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] };

const cases: Array<{ name: string; csr: Parameters<typeof csr>[0]; approve: boolean; reason?: RegExp }> = [
  { name: 'client CSR from a bootstrapper for an existing machine', csr: { signer: CLIENT, usages: ['digital signature', 'client auth'], ...bootstrapper }, approve: true },
  { name: 'client renewal by the node itself', csr: { signer: CLIENT, usages: ['digital signature', 'key encipherment', 'client auth'], username: 'system:node:worker-0' }, approve: true },
  { name: 'client CSR for an unknown machine', csr: { cn: 'system:node:intruder', signer: CLIENT, usages: ['digital signature', 'client auth'], ...bootstrapper }, approve: false, reason: /no machine named intruder/ },
  { name: 'client CSR for a terminated machine', csr: { cn: 'system:node:gone', signer: CLIENT, usages: ['digital signature', 'client auth'], ...bootstrapper }, approve: false, reason: /no machine named gone/ },
  { name: 'client CSR from another node', csr: { signer: CLIENT, usages: ['digital signature', 'client auth'], username: 'system:node:worker-1' }, approve: false, reason: /neither a bootstrapper nor the node itself/ },
  { name: 'client CSR asking for server auth', csr: { signer: CLIENT, usages: ['digital signature', 'server auth', 'client auth'], ...bootstrapper }, approve: false, reason: /usages/ },
  { name: 'client CSR with SANs', csr: { signer: CLIENT, hosts: ['127.0.1.1'], usages: ['digital signature', 'client auth'], ...bootstrapper }, approve: false, reason: /SANs/ },
  { name: 'serving CSR from the node with its own address and name', csr: { signer: SERVING, hosts: ['127.0.1.1', 'worker-0'], usages: ['digital signature', 'server auth'], username: 'system:node:worker-0' }, approve: true },
  { name: 'serving CSR with another machine\'s address', csr: { signer: SERVING, hosts: ['127.0.1.2'], usages: ['digital signature', 'server auth'], username: 'system:node:worker-0' }, approve: false, reason: /127\.0\.1\.2 is not machine i-worker-0's/ },
  { name: 'serving CSR with a foreign DNS name', csr: { signer: SERVING, hosts: ['evil.example.com'], usages: ['digital signature', 'server auth'], username: 'system:node:worker-0' }, approve: false, reason: /DNS name evil\.example\.com/ },
  { name: 'serving CSR from a bootstrapper', csr: { signer: SERVING, hosts: ['127.0.1.1'], usages: ['digital signature', 'server auth'], ...bootstrapper }, approve: false, reason: /not by the node itself/ },
  { name: 'another signer', csr: { signer: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'system:node:worker-0' }, approve: false, reason: /not a kubelet signer/ },
  { name: 'a CN without a node name', csr: { cn: 'system:node:', signer: CLIENT, usages: ['digital signature', 'client auth'], ...bootstrapper }, approve: false, reason: /is not system:node:<name>/ },
];

for (const c of cases) {
  test(`machine approver: ${c.name} → ${c.approve ? 'approved' : 'pending'}`, async () => {
    const d = decide(await csr(c.csr), cloud);
    assert.equal(d.approve, c.approve, JSON.stringify(d));
    if (!d.approve && c.reason) assert.match(d.reason, c.reason);
  });
}

test('machine approver: a request that is not a CSR stays pending with the reason', () => {
  const d = decide({ spec: { signerName: CLIENT, request: Buffer.from('garbage').toString('base64'), usages: ['client auth'], username: 'x' } } as api.CertificateSigningRequest, cloud);
  assert.equal(d.approve, false);
  assert.match((d as { reason: string }).reason, /not a PEM certificate request/);
});

test('machine approver with Cluster API: only a node a Machine names, with its address, is approved', async () => {
  const request = await csr({ signer: CLIENT, usages: ['digital signature', 'client auth'], ...bootstrapper });
  const machine = (name: string, node: string, ip: string, deleting = false) => ({
    metadata: { name, namespace: 'openshift-cluster-api', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    status: { addresses: [{ type: 'InternalIP', address: ip }, { type: 'Hostname', address: node }] },
  } as api.Machine);
  const approved = decide(request, cloud, [machine('worker-0', 'worker-0', '127.0.1.1')]);
  assert.equal(approved.approve, true);
  assert.match((approved as { message: string }).message, /Machine openshift-cluster-api\/worker-0/);
  for (const machines of [[], [machine('worker-0', 'worker-0', '127.0.1.7')], [machine('worker-0', 'worker-0', '127.0.1.1', true)]]) {
    const d = decide(request, cloud, machines);
    assert.equal(d.approve, false);
    assert.match((d as { reason: string }).reason, /no Machine has the address of node worker-0 \(127\.0\.1\.1\)/);
  }
});
