// The KubeadmControlPlane controller's judgements, as Cluster API's KCP makes them: which Machine
// goes, where a new one goes, what makes a Machine outdated, which unhealthy Machine is remediated
// first and within which retry limits, the etcd quorum rule, and a mirror pod's condition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import {
  REMEDIATION_FOR_ANNOTATION, checkRetryLimits, lowestVersion, machineKubeadmConfigSpec, machineToDelete, nextFailureDomain, outdatedReasons, pickMachineToRemediate,
} from '../../src/capi/kubeadm/controlplane-machines.js';
import { podCondition } from '../../src/capi/kubeadm/controlplane-controller.js';
import { keepsQuorumWithout } from '../../src/capi/kubeadm/etcd-members.js';
import { servingCertificateExpiry } from '../../src/capi/kubeadm/certificates.js';
import { createCA, issueCertificate } from '../../src/common/pki.js';
import { X509Certificate } from 'node:crypto';
import { createServer as createTlsServer } from 'node:tls';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

function machine(name: string, o: { domain?: string; created?: number; annotations?: Record<string, string>; version?: string; conditions?: Record<string, string>; node?: boolean } = {}): api.Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
    metadata: { name, namespace: 'ns', creationTimestamp: at(o.created ?? 0), annotations: o.annotations },
    spec: { clusterName: 'c', version: o.version ?? 'v1.33.1', failureDomain: o.domain, bootstrap: {}, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name } },
    status: {
      ...(o.node === false ? {} : { nodeRef: { name } }),
      conditions: Object.entries(o.conditions ?? {}).map(([type, status]) => ({ type, status: status as 'True', reason: 'x', message: '', lastTransitionTime: at(0) })),
    },
  };
}

const kcp = (spec: Partial<api.KubeadmControlPlane['spec']> = {}): api.KubeadmControlPlane => ({
  apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlane', metadata: { name: 'cp', namespace: 'ns' },
  spec: { version: 'v1.33.1', machineTemplate: { spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 't1' } } }, kubeadmConfigSpec: { clusterConfiguration: { apiServer: { certSANs: ['x'] } } }, ...spec },
});

test('which Machine goes: outdated and marked, marked, outdated and unhealthy, outdated, all — then the busiest failure domain, then its oldest', () => {
  const ms = [machine('a', { domain: 'z1', created: 1 }), machine('b', { domain: 'z2', created: 2 }), machine('c', { domain: 'z2', created: 3 }), machine('d', { domain: 'z3', created: 0 })];
  const domains = ['z1', 'z2', 'z3'];
  const none = () => false;
  assert.equal(machineToDelete(ms, { isOutdated: none, isUnhealthy: none, domains })?.metadata.name, 'b', 'z2 has the most; b is its oldest');
  const marked = ms.map((m) => (m.metadata.name === 'd' ? { ...m, metadata: { ...m.metadata, annotations: { 'cluster.x-k8s.io/delete-machine': '' } } } : m));
  assert.equal(machineToDelete(marked, { isOutdated: none, isUnhealthy: none, domains })?.metadata.name, 'd');
  assert.equal(machineToDelete(marked, { isOutdated: (m) => m.metadata.name === 'a', isUnhealthy: none, domains })?.metadata.name, 'd', 'marked beats outdated');
  assert.equal(machineToDelete(ms, { isOutdated: (m) => ['a', 'c'].includes(m.metadata.name), isUnhealthy: (m) => m.metadata.name === 'a', domains })?.metadata.name, 'a', 'outdated and unhealthy first');
  assert.equal(machineToDelete(ms, { isOutdated: (m) => ['a', 'd'].includes(m.metadata.name), isUnhealthy: none, domains })?.metadata.name, 'a', 'outdated: z1 and z3 tie at one, z1 by name');
  const z3Busy = [...ms, machine('f', { domain: 'z3', created: 5 })];
  assert.equal(machineToDelete(z3Busy, { isOutdated: (m) => ['a', 'd'].includes(m.metadata.name), isUnhealthy: none, domains })?.metadata.name, 'd', 'of the outdated, the one in the domain with the most Machines of all');
  assert.equal(machineToDelete([...ms, machine('e', { domain: 'gone', created: 9 })], { isOutdated: none, isUnhealthy: none, domains })?.metadata.name, 'e', 'a Machine in a domain that no longer exists first');
});

test('where a new Machine goes: the domain with the fewest up-to-date Machines, then the fewest, then by name', () => {
  const ms = [machine('a', { domain: 'z1' }), machine('b', { domain: 'z2', version: 'v1.32.5' }), machine('c', { domain: 'z2', version: 'v1.32.5' })];
  const upToDate = (m: api.Machine) => m.spec.version === 'v1.33.1';
  assert.equal(nextFailureDomain(['z1', 'z2', 'z3'], ms, upToDate), 'z3');
  assert.equal(nextFailureDomain(['z1', 'z2'], ms, upToDate), 'z2', 'z2 has no up-to-date Machine');
  assert.equal(nextFailureDomain([], ms, upToDate), undefined);
});

test('outdated: version, the template it was cloned from, the KubeadmConfig, rollout.after — each said', () => {
  const k = kcp({ rollout: { after: at(10) } });
  const m = machine('a', { version: 'v1.32.5', created: 5 });
  const infra = { apiVersion: 'x/v1', kind: 'LocalMachine', metadata: { name: 'a', annotations: { 'cluster.x-k8s.io/cloned-from-name': 't0', 'cluster.x-k8s.io/cloned-from-groupkind': 'LocalMachineTemplate.infrastructure.cluster.x-k8s.io' } } };
  const joinConfig = { apiVersion: 'b/v1', kind: 'KubeadmConfig', metadata: { name: 'a' }, spec: { ...machineKubeadmConfigSpec(k.spec.kubeadmConfigSpec, false), joinConfiguration: { controlPlane: {}, discovery: { bootstrapToken: { token: 'abcdef.0123456789abcdef' } } } } };
  assert.deepEqual(outdatedReasons({ kcp: k, machine: m, infra, config: joinConfig, now: Date.parse(at(20)) }), [
    'Version v1.32.5, v1.33.1 required',
    'LocalMachine is not up-to-date (cloned from LocalMachineTemplate.infrastructure.cluster.x-k8s.io t0, LocalMachineTemplate.infrastructure.cluster.x-k8s.io t1 required)',
    `Machine was created before rollout.after (${at(10)})`,
  ], 'the join token the bootstrap provider wrote does not count');
  const changed = kcp({ kubeadmConfigSpec: { clusterConfiguration: { apiServer: { certSANs: ['y'] } } } });
  assert.deepEqual(outdatedReasons({ kcp: changed, machine: machine('a'), config: joinConfig, now: 0 }), ['KubeadmConfig is not up-to-date']);
  assert.deepEqual(outdatedReasons({ kcp: k, machine: machine('a', { created: 5 }), now: Date.parse(at(9)) }), [], 'rollout.after in the future changes nothing yet');
  const init = machineKubeadmConfigSpec({ initConfiguration: { nodeRegistration: { name: 'n' } }, joinConfiguration: { nodeRegistration: { name: 'n' } } }, true);
  assert.deepEqual(init, { initConfiguration: { nodeRegistration: { name: 'n' } } });
  assert.deepEqual(machineKubeadmConfigSpec({ initConfiguration: {} }, false), { joinConfiguration: { controlPlane: {} } });
});

test('outdated: certificates that expire within rollout.before.certificatesExpiryDays', () => {
  const day = 86_400_000;
  const now = Date.parse('2026-11-27T00:00:00Z');
  const k = kcp({ rollout: { before: { certificatesExpiryDays: 21 } } });
  const expiring = (days: number) => ({ ...machine('a'), status: { certificatesExpiryDate: new Date(now + days * day).toISOString().replace(/\.\d+Z$/, 'Z') } });
  assert.deepEqual(outdatedReasons({ kcp: k, machine: expiring(20), now }), ['Certificates will expire soon (2026-12-17T00:00:00Z): rollout.before.certificatesExpiryDays is 21']);
  assert.deepEqual(outdatedReasons({ kcp: k, machine: expiring(22), now }), [], 'not yet');
  assert.deepEqual(outdatedReasons({ kcp: kcp({}), machine: expiring(1), now }), [], 'without rollout.before, nothing rolls for certificates');
  // Before the Machine controller copies it, the KubeadmConfig's annotation counts.
  const config = { apiVersion: 'b/v1', kind: 'KubeadmConfig', metadata: { name: 'a', annotations: { 'machine.cluster.x-k8s.io/certificates-expiry': '2026-12-01T00:00:00Z' } }, spec: machineKubeadmConfigSpec(k.spec.kubeadmConfigSpec, true) };
  assert.match(outdatedReasons({ kcp: k, machine: machine('a'), config, now }).join(), /Certificates will expire soon \(2026-12-01T00:00:00Z\)/);
});

test('the expiry of the certificate an API server serves, read from a TLS handshake that trusts the cluster CA', async () => {
  const ca = await createCA('cluster-ca');
  const serving = await issueCertificate(ca, { commonName: 'kube-apiserver' }, { server: true, hosts: ['127.0.0.1'], days: 10 });
  const server = createTlsServer({ cert: serving.certPem, key: serving.keyPem }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as { port: number }).port;
    const expiry = await servingCertificateExpiry('127.0.0.1', port, ca.certPem);
    assert.equal(expiry.getTime(), Date.parse(new X509Certificate(serving.certPem).validTo));
    assert.ok(Math.abs(expiry.getTime() - (Date.now() + 10 * 86_400_000)) < 120_000, `about ten days from now: ${expiry.toISOString()}`);
    const other = await createCA('another-ca');
    await assert.rejects(servingCertificateExpiry('127.0.0.1', port, other.certPem), /self-signed|unable to verify|certificate/i, 'a server the cluster CA did not sign is not believed');
  } finally {
    server.close();
  }
});

test('remediation: which first, and the retry limits', () => {
  const etcdDown = machine('b', { created: 2, conditions: { EtcdMemberHealthy: 'False', APIServerPodHealthy: 'True' } });
  const apiDown = machine('a', { created: 1, conditions: { EtcdMemberHealthy: 'True', EtcdPodHealthy: 'True', APIServerPodHealthy: 'False' } });
  assert.equal(pickMachineToRemediate([apiDown, etcdDown], true)?.metadata.name, 'b');
  assert.equal(pickMachineToRemediate([apiDown, etcdDown, machine('c', { node: false, created: 3 })], true)?.metadata.name, 'c', 'no Node first');
  const now = Date.parse(at(100));
  const replacement = (retryCount: number, s: number) => machine('r', { annotations: { [REMEDIATION_FOR_ANNOTATION]: JSON.stringify({ machine: 'old', timestamp: at(s), retryCount }) } });
  assert.deepEqual(checkRetryLimits(machine('x'), {}, now), { allowed: true, retryCount: 0 });
  assert.deepEqual(checkRetryLimits(replacement(0, 90), { minHealthyPeriodSeconds: 3600 }, now), { allowed: true, retryCount: 1 });
  assert.deepEqual(checkRetryLimits(replacement(0, 10), { minHealthyPeriodSeconds: 60 }, now), { allowed: true, retryCount: 0 }, 'healthy long enough: a new count');
  const max = checkRetryLimits(replacement(2, 90), { maxRetry: 2 }, now);
  assert.equal(max.allowed, false);
  assert.match((max as { message: string }).message, /already failed 3 times \(spec\.remediation\.maxRetry is 2\)/);
  const soon = checkRetryLimits(replacement(0, 90), { retryPeriodSeconds: 60 }, now);
  assert.deepEqual([soon.allowed, (soon as { deferred: boolean }).deferred], [false, true]);
});

test('etcd quorum without a member: the healthy members left must be a majority of those left', () => {
  const members = [{ name: 'a' }, { name: 'b' }, { name: 'c' }];
  assert.deepEqual(keepsQuorumWithout(members, () => true, 'a'), { ok: true, left: 2, healthy: 2, quorum: 2 });
  assert.deepEqual(keepsQuorumWithout(members, (n) => n !== 'b', 'a'), { ok: false, left: 2, healthy: 1, quorum: 2 });
  assert.equal(keepsQuorumWithout(members, (n) => n !== 'a', 'a').ok, true, 'removing the unhealthy one is safe');
  assert.equal(keepsQuorumWithout([...members, { name: 'd' }, { name: 'e' }], (n) => n !== 'b', 'a').ok, true);
  // A learner (joined, not yet promoted) does not vote: three voters and a learner are three for quorum.
  const withLearner = [...members, { name: 'd', isLearner: true }];
  assert.deepEqual(keepsQuorumWithout(withLearner, (n) => n !== 'd', 'a'), { ok: true, left: 2, healthy: 2, quorum: 2 });
});

test('a mirror pod\'s condition, and the lowest version', () => {
  assert.deepEqual(podCondition('APIServerPodHealthy', 'kube-apiserver-n', undefined), { type: 'APIServerPodHealthy', status: 'False', reason: 'DoesNotExist', message: 'Pod kube-apiserver-n does not exist' });
  const pod = (phase: string, ready: boolean, waiting?: string): api.Pod => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }], containerStatuses: [{ name: 'c', ready, restartCount: 0, image: '', imageID: '', state: waiting ? { waiting: { reason: waiting } } : { running: {} } }] },
  });
  assert.equal(podCondition('T', 'p', pod('Running', true)).status, 'True');
  assert.deepEqual(podCondition('T', 'p', pod('Running', false, 'CrashLoopBackOff')), { type: 'T', status: 'False', reason: 'Failed', message: 'Pod p is running but not ready: c waiting: CrashLoopBackOff' });
  assert.equal(podCondition('T', 'p', pod('Pending', false, 'ContainerCreating')).reason, 'Provisioning');
  assert.equal(podCondition('T', 'p', pod('Failed', false)).reason, 'Failed');
  assert.equal(lowestVersion(['v1.33.1', 'v1.32.5', undefined, 'v1.33.0']), 'v1.32.5');
});
