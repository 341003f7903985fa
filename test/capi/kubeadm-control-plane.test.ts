// test: shared-addresses (starts a local cloud; serves on the machines' 127.0.1.N:6443, :2379, :2380)
// The KubeadmControlPlane controller against the embedded API server, the real local cloud and
// real etcd members on the machines' addresses (kcp-machines.ts plays what the machines do once
// booted): the certificates and the admin kubeconfig it writes and renews; the init Machine with
// its LocalMachine and KubeadmConfig, named, labelled and owned as Cluster API's; preflight
// naming what it waits on; the joins once the control plane is initialized, one at a time, each
// in the failure domain with the fewest; the Machines' pod and etcd conditions; scale down (the
// delete-machine annotation first, then the failure domain with the most, its oldest) removing
// the etcd member before the Machine; rollouts with maxSurge 1 (add, then delete) and 0 (delete,
// then add); remediation refused while etcd would lose quorum, then done.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type * as api from '../../src/api/index.js';
import { API_VERSION, CLUSTERS, INFRA_API_VERSION, LABEL, LOCAL_MACHINES, MACHINES } from '../../src/capi/api.js';
import { issueCertificate, type KeyPair } from '../../src/common/pki.js';
import { kubeconfigYaml } from '../../src/capi/kubeadm/certificates.js';
import { KCP_CLEANUP_HOOK } from '../../src/capi/kubeadm/controlplane-controller.js';
import { type Obj, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutEtcd } from '../helpers/etcd.js';
import { type CapiCluster, runKubelets, startCapiCluster } from './capi-fixture.js';
import { ControlPlaneMachines } from './kcp-machines.js';

const NS = 'kcp';
const NAME = 'wc';
const KCP = `${NAME}-control-plane`;
const kcpResource = resources.kubeadmControlPlanes;

let c: CapiCluster;
let machinesPlayer: ControlPlaneMachines;
const kubelets = new AbortController();
let kubeletLoop: Promise<void>;

before(async () => {
  if (skipWithoutEtcd) return;
  c = await startCapiCluster();
  kubeletLoop = runKubelets(c, kubelets.signal);
  machinesPlayer = new ControlPlaneMachines(c, NS, NAME);
  await c.kubectlOk(['create', 'namespace', NS]);
  const apply = (o: Obj) => c.kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: { name: NAME, namespace: NS }, spec: {} });
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalMachineTemplate', metadata: { name: KCP, namespace: NS }, spec: { template: { spec: { instanceType: 'local.small' } } } });
  await apply({
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlane', metadata: { name: KCP, namespace: NS },
    spec: {
      replicas: 3, version: 'v1.32.5',
      machineTemplate: { metadata: { labels: { role: 'cp' } }, spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: KCP } } },
      kubeadmConfigSpec: { clusterConfiguration: { apiServer: { certSANs: ['localhost'] } }, initConfiguration: { nodeRegistration: { kubeletExtraArgs: [{ name: 'v', value: '2' }] } } },
    },
  });
  await apply({
    apiVersion: API_VERSION, kind: 'Cluster', metadata: { name: NAME, namespace: NS },
    spec: {
      clusterNetwork: { pods: { cidrBlocks: ['127.71.0.0/16'] }, services: { cidrBlocks: ['127.135.0.0/16'] } },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', name: NAME },
      controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', name: KCP },
    },
  });
});

after(async () => {
  kubelets.abort();
  await kubeletLoop;
  await machinesPlayer?.stop();
  await c?.close();
});

const kcp = () => c.kube.get(kcpResource, KCP, NS);
type Cond = { type: string; status: string; reason: string; message: string };
const condition = (o: { status?: { conditions?: Cond[] } } | undefined, type: string): Cond | undefined => o?.status?.conditions?.find((x) => x.type === type);
const ownMachines = async () => ((await c.kube.list(MACHINES, NS, { labelSelector: `${LABEL.clusterName}=${NAME},${LABEL.controlPlane}` })).items ?? []).sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)) || a.metadata.name.localeCompare(b.metadata.name));
const live = async () => (await ownMachines()).filter((m) => !m.metadata.deletionTimestamp);
const HEALTH = ['APIServerPodHealthy', 'ControllerManagerPodHealthy', 'SchedulerPodHealthy', 'EtcdPodHealthy', 'EtcdMemberHealthy'];
const healthy = (m: api.Machine) => HEALTH.every((t) => condition(m, t)?.status === 'True');

/** Waits until the control plane has `n` live Machines, all Running and healthy, and etcd exactly their members. */
async function settled(n: number, timeoutMs = 150_000): Promise<api.Machine[]> {
  return eventually(`${n} healthy control-plane Machines`, async () => {
    const ms = await live();
    if (ms.length !== n || (await ownMachines()).length !== n || !ms.every((m) => m.status?.phase === 'Running' && healthy(m))) return undefined;
    const members = await machinesPlayer.memberNames();
    return JSON.stringify(members) === JSON.stringify(ms.map((m) => m.metadata.name).sort()) ? ms : undefined;
  }, { timeoutMs, intervalMs: 500, detail: () => 'see the KubeadmControlPlane conditions' });
}

const skip = skipWithoutEtcd;

test('the init Machine: certificates and the kubeconfig owned by the KCP, one Machine with its LocalMachine and KubeadmConfig, scale-up waiting on initialization', { skip, timeout: 120_000 }, async () => {
  const [first] = await eventually('the init Machine', async () => { const ms = await ownMachines(); return ms.length === 1 ? ms : undefined; }, 60_000);
  const name = first.metadata.name;
  assert.match(name, new RegExp(`^${KCP}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
  const k = await kcp();
  assert.deepEqual(first.metadata.labels, { role: 'cp', [LABEL.clusterName]: NAME, [LABEL.controlPlane]: '', 'cluster.x-k8s.io/control-plane-name': KCP });
  assert.deepEqual(first.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [['KubeadmControlPlane', KCP, k.metadata.uid, true]]);
  assert.equal(first.spec.version, 'v1.32.5');
  assert.equal(first.spec.failureDomain, 'local-a');
  assert.deepEqual(first.spec.bootstrap.configRef, { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name });
  assert.deepEqual(first.spec.infrastructureRef, { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name });
  const lm = await c.kube.get(LOCAL_MACHINES, name, NS);
  assert.equal(lm.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name'], KCP);
  assert.equal(lm.metadata.annotations?.['cluster.x-k8s.io/cloned-from-groupkind'], 'LocalMachineTemplate.infrastructure.cluster.x-k8s.io');
  assert.equal(lm.spec?.instanceType, 'local.small');
  const config = await c.kube.get(resources.kubeadmConfigs, name, NS);
  assert.deepEqual(config.spec?.initConfiguration, { nodeRegistration: { kubeletExtraArgs: [{ name: 'v', value: '2' }] } });
  assert.deepEqual(config.spec?.clusterConfiguration, { apiServer: { certSANs: ['localhost'] } });
  assert.equal(config.spec?.joinConfiguration, undefined);

  for (const purpose of ['ca', 'etcd', 'proxy', 'sa']) {
    const s = await c.kube.get(resources.secrets, `${NAME}-${purpose}`, NS);
    assert.deepEqual(s.metadata.ownerReferences?.filter((r) => r.controller).map((r) => [r.kind, r.name]), [['KubeadmControlPlane', KCP]], purpose);
  }
  const cluster = await c.kube.get(CLUSTERS, NAME, NS);
  const secret = await c.kube.get(resources.secrets, `${NAME}-kubeconfig`, NS);
  assert.equal(secret.type, 'cluster.x-k8s.io/secret');
  assert.deepEqual(secret.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['KubeadmControlPlane', KCP, true]]);
  const kubeconfig = parseYaml(Buffer.from(secret.data!.value, 'base64').toString());
  assert.equal(kubeconfig.clusters[0].cluster.server, `https://${cluster.spec!.controlPlaneEndpoint!.host}:6443`);
  assert.equal(kubeconfig['current-context'], `${NAME}-admin@${NAME}`);
  const cert = new X509Certificate(Buffer.from(kubeconfig.users[0].user['client-certificate-data'], 'base64'));
  assert.match(cert.subject, /CN=kubernetes-admin/);
  assert.match(cert.subject, /O=system:masters/);

  // Nothing answers at the endpoint yet: scale-up says it waits for initialization, and for the Machine's Node.
  const waiting = await eventually('ScalingUp names the wait', async () => {
    const x = await kcp();
    return /is blocked because:\n\* waiting for the control plane to be initialized/.test(condition(x, 'ScalingUp')?.message ?? '') ? x : undefined;
  }, 60_000);
  assert.match(condition(waiting, 'ScalingUp')!.message, /^Scaling up from 1 to 3 replicas is blocked because:\n/);
  assert.equal(condition(waiting, 'Initialized')?.status, 'False');
  assert.equal(condition(waiting, 'CertificatesAvailable')?.status, 'True');
  assert.equal(waiting.status?.replicas, 1);
  assert.equal(waiting.status?.selector, `${LABEL.clusterName}=${NAME},${LABEL.controlPlane}`);
  assert.equal((await ownMachines()).length, 1, 'no join before the control plane is initialized');

  // A kubeconfig whose certificate runs out in 30 days is renewed.
  const ca: KeyPair = { certPem: Buffer.from((await c.kube.get(resources.secrets, `${NAME}-ca`, NS)).data!['tls.crt'], 'base64').toString(), keyPem: Buffer.from((await c.kube.get(resources.secrets, `${NAME}-ca`, NS)).data!['tls.key'], 'base64').toString() };
  const short = kubeconfigYaml({ cluster: NAME, server: kubeconfig.clusters[0].cluster.server, caPem: ca.certPem, user: `${NAME}-admin`, context: `${NAME}-admin@${NAME}`, clientCert: await issueCertificate(ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'] }, { client: true, days: 30 }) });
  await c.kube.update(resources.secrets, { ...secret, data: { value: Buffer.from(short).toString('base64') } });
  await c.kube.mergePatch(kcpResource, KCP, NS, { metadata: { annotations: { poke: '1' } } });
  await eventually('the kubeconfig renewed', async () => {
    const s = await c.kube.get(resources.secrets, `${NAME}-kubeconfig`, NS);
    const kc = parseYaml(Buffer.from(s.data!.value, 'base64').toString());
    const until = Date.parse(new X509Certificate(Buffer.from(kc.users[0].user['client-certificate-data'], 'base64')).validTo);
    return until - Date.now() > 300 * 24 * 3600_000;
  }, 30_000);
});

test('once the first machine answers: initialized, then joins one at a time across the failure domains, each Machine healthy from its pods and etcd member', { skip, timeout: 240_000 }, async () => {
  const cluster = await c.kube.get(CLUSTERS, NAME, NS);
  await machinesPlayer.start(cluster.spec!.controlPlaneEndpoint!.host!);
  const ms = await settled(3, 200_000);
  assert.deepEqual(ms.map((m) => m.spec.failureDomain), ['local-a', 'local-b', 'local-c']);
  const joiner = await c.kube.get(resources.kubeadmConfigs, ms[1].metadata.name, NS);
  assert.deepEqual(joiner.spec?.joinConfiguration?.controlPlane, {});
  assert.equal(joiner.spec?.initConfiguration, undefined);
  const k = await eventually('KCP Available', async () => { const x = await kcp(); return condition(x, 'Available')?.status === 'True' && x.status?.readyReplicas === 3 ? x : undefined; }, 60_000);
  assert.equal(k.status?.initialization?.controlPlaneInitialized, true);
  assert.deepEqual([k.status?.replicas, k.status?.upToDateReplicas, k.status?.version], [3, 3, 'v1.32.5']);
  for (const type of ['Initialized', 'CertificatesAvailable', 'EtcdClusterHealthy', 'ControlPlaneComponentsHealthy']) assert.equal(condition(k, type)?.status, 'True', type);
  const cl = await eventually('the Cluster initialized', async () => { const x = await c.kube.get(CLUSTERS, NAME, NS); return x.status?.initialization?.controlPlaneInitialized ? x : undefined; }, 30_000);
  assert.equal(cl.status?.controlPlane?.replicas, 3);
  const row = await c.kubectlOk(['get', 'kcp', '-n', NS]);
  assert.match(row, /^NAME +CLUSTER +AVAILABLE +DESIRED +CURRENT +READY +AVAILABLE +UP-TO-DATE +INITIALIZED +AGE +VERSION\n/);
  assert.match(row, new RegExp(`\\n${KCP} +${NAME} +True +3 +3 +3 +3 +3 +true +\\S+ +v1\\.32\\.5\\n`));
  console.log(row);

  // A broken API server pod: the Machine and the KCP say so, and preflight names it.
  const broken = ms[2].metadata.name;
  await machinesPlayer.writePod('kube-apiserver', broken, false);
  await eventually('the broken pod reported', async () => {
    const x = await kcp();
    return (condition(x, 'ControlPlaneComponentsHealthy')?.message ?? '').includes(`Machine ${broken}: APIServerPodHealthy: Pod kube-apiserver-${broken} is running but not ready`) ? x : undefined;
  }, 30_000);
  await machinesPlayer.writePod('kube-apiserver', broken, true);
});

test('scale down 3 → 1: the delete-machine annotation first, then the busiest failure domain\'s oldest; each etcd member removed once its Machine is drained, before its instance goes', { skip, timeout: 180_000 }, async () => {
  const [a, b, cc] = await live();
  await c.kube.mergePatch(MACHINES, b.metadata.name, NS, { metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': '' } } });
  await c.kube.mergePatch(kcpResource, KCP, NS, { spec: { replicas: 1 } });
  const firstGone = await eventually('a Machine deleting', async () => (await ownMachines()).find((m) => m.metadata.deletionTimestamp), 60_000);
  assert.equal(firstGone.metadata.name, b.metadata.name, 'the annotated Machine goes first');
  // KCP holds it with its pre-terminate hook; once the Machine controller has drained it, the
  // member goes and then the hook, and only then the instance.
  assert.equal(firstGone.metadata.annotations?.[KCP_CLEANUP_HOOK], '', 'KCP holds the deleted Machine with its hook');
  await eventually('its etcd member removed, then the hook', async () => {
    const m = (await ownMachines()).find((x) => x.metadata.name === b.metadata.name);
    return !(await machinesPlayer.memberNames()).includes(b.metadata.name) && m?.metadata.annotations?.[KCP_CLEANUP_HOOK] === undefined;
  }, 60_000);
  const [left] = await settled(1);
  // Then of local-a and local-c (one each): local-a's, the init Machine.
  assert.equal(left.metadata.name, cc.metadata.name);
  assert.deepEqual(await machinesPlayer.memberNames(), [cc.metadata.name]);
  void a;
});

test('rollout with maxSurge 1: a new Machine of the new version is added before the old one goes', { skip, timeout: 180_000 }, async () => {
  const [old] = await live();
  const seen: number[] = [];
  let watching = true;
  const watcher = (async () => { while (watching) { seen.push((await live()).length); await new Promise((r) => setTimeout(r, 200)); } })();
  await c.kube.mergePatch(kcpResource, KCP, NS, { spec: { version: 'v1.33.1' } });
  const rolling = await eventually('RollingOut', async () => { const x = await kcp(); return condition(x, 'RollingOut')?.status === 'True' ? x : undefined; }, 30_000);
  assert.match(condition(rolling, 'RollingOut')!.message, new RegExp(`Machine ${old.metadata.name}: Version v1\\.32\\.5, v1\\.33\\.1 required`));
  const [fresh] = await eventually('the old Machine replaced', async () => { const ms = await ownMachines(); return ms.length === 1 && ms[0].metadata.name !== old.metadata.name ? ms : undefined; }, 150_000);
  watching = false;
  await watcher;
  assert.equal(fresh.spec.version, 'v1.33.1');
  assert.ok(seen.includes(2), 'two Machines at once: the new one came first');
  assert.ok(!seen.includes(0), 'never none');
  const k = await eventually('KCP settled on the new version', async () => { const x = await kcp(); return x.status?.version === 'v1.33.1' && condition(x, 'RollingOut')?.status === 'False' ? x : undefined; }, 60_000);
  assert.equal(k.status?.upToDateReplicas, 1);
});

test('rollout with maxSurge 0 (replicas 3, rollout.after): an outdated Machine goes before its replacement comes', { skip, timeout: 400_000 }, async () => {
  await c.kube.mergePatch(kcpResource, KCP, NS, { spec: { replicas: 3 } });
  const before = await settled(3, 200_000);
  const seen: number[] = [];
  // Machines not being deleted: with maxSurge 0 an outdated one is marked deleting before its
  // replacement is made (while KCP's hook holds it, the total may stay at 3).
  const seenLive: number[] = [];
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const ms = await ownMachines();
      seen.push(ms.length);
      seenLive.push(ms.filter((m) => !m.metadata.deletionTimestamp).length);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  await c.kube.mergePatch(kcpResource, KCP, NS, { spec: { rollout: { after: new Date().toISOString(), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } } } });
  const first = await eventually('an outdated Machine deleting', async () => (await ownMachines()).find((m) => m.metadata.deletionTimestamp), 60_000);
  assert.ok(before.some((m) => m.metadata.name === first.metadata.name));
  await eventually('every Machine replaced', async () => {
    const ms = await live();
    return ms.length === 3 && ms.every((m) => !before.some((b) => b.metadata.name === m.metadata.name)) && ms.every((m) => m.status?.phase === 'Running' && healthy(m)) ? ms : undefined;
  }, 330_000);
  watching = false;
  await watcher;
  assert.ok(Math.max(...seen) <= 3, `never more than 3 Machines (saw ${Math.max(...seen)})`);
  assert.ok(seenLive.includes(2), 'down to 2 while replacing');
});

test('remediation: refused while removing the Machine would lose etcd quorum (the KCP says so), done once it would not', { skip, timeout: 240_000 }, async () => {
  const [a, b] = await settled(3);
  await c.kube.create(resources.machineHealthChecks, {
    apiVersion: API_VERSION, kind: 'MachineHealthCheck', metadata: { name: 'cp', namespace: NS },
    spec: { clusterName: NAME, selector: { matchLabels: { [LABEL.controlPlane]: '' } }, checks: { nodeStartupTimeoutSeconds: 0 } },
  });
  await machinesPlayer.killEtcd(b.metadata.name);
  await eventually('the dead member reported', async () => condition(await c.kube.get(MACHINES, b.metadata.name, NS), 'EtcdMemberHealthy')?.status === 'False', 30_000);
  await c.kube.mergePatch(MACHINES, a.metadata.name, NS, { metadata: { annotations: { 'cluster.x-k8s.io/remediate-machine': '' } } });
  // Refused for the quorum arithmetic; on a loaded machine a first pass may refuse because no
  // member answered its member-list request in time (also CannotBeRemediated, another message).
  const refused = await eventually('remediation refused for quorum', async () => {
    const m = await c.kube.get(MACHINES, a.metadata.name, NS);
    const owner = condition(m, 'OwnerRemediated');
    return owner?.reason === 'CannotBeRemediated' && /members left would be healthy/.test(owner.message ?? '') ? m : undefined;
  }, 60_000);
  assert.match(condition(refused, 'OwnerRemediated')!.message, /removing this Machine could result in etcd quorum loss: 1 of the 2 etcd members left would be healthy, 2 needed for quorum/);
  // The KCP's status is written at the end of the pass that wrote the Machine's condition.
  const k = await eventually('Remediating says why', async () => { const x = await kcp(); return /etcd quorum loss/.test(condition(x, 'Remediating')?.message ?? '') ? x : undefined; }, 30_000);
  assert.match(condition(k, 'Remediating')!.message, new RegExp(`^Machine ${a.metadata.name} needs remediation: A control plane Machine needs remediation, but removing this Machine could result in etcd quorum loss`));
  assert.equal(condition(k, 'Remediating')!.status, 'True');
  assert.ok(!refused.metadata.deletionTimestamp);

  machinesPlayer.restartEtcd(b.metadata.name);
  await eventually('the remediated Machine replaced', async () => {
    const ms = await live();
    return ms.length === 3 && !ms.some((m) => m.metadata.name === a.metadata.name) ? ms : undefined;
  }, 200_000);
  const replacement = (await live()).find((m) => m.metadata.annotations?.['controlplane.cluster.x-k8s.io/remediation-for']);
  assert.ok(replacement, 'the replacement records the remediation');
  assert.equal(JSON.parse(replacement.metadata.annotations!['controlplane.cluster.x-k8s.io/remediation-for']).machine, a.metadata.name);
  const after = await eventually('lastRemediation', async () => { const x = await kcp(); return x.status?.lastRemediation ? x : undefined; }, 30_000);
  assert.equal(after.status!.lastRemediation!.machine, a.metadata.name);
  assert.equal(after.status!.lastRemediation!.retryCount, 0);
  assert.ok(!(await machinesPlayer.memberNames()).includes(a.metadata.name));
});

test('a paused Cluster pauses its KCP (Paused says why); deleting the Cluster deletes the KCP\'s Machines, then the KCP, and what it owned', { skip, timeout: 180_000 }, async () => {
  await c.kube.mergePatch(CLUSTERS, NAME, NS, { spec: { paused: true } });
  const paused = await eventually('Paused', async () => { const x = await kcp(); return condition(x, 'Paused')?.status === 'True' ? x : undefined; }, 30_000);
  assert.equal(condition(paused, 'Paused')!.message, `Cluster ${NAME} is paused`);
  await c.kube.mergePatch(CLUSTERS, NAME, NS, { spec: { paused: false } });
  await eventually('unpaused', async () => condition(await kcp(), 'Paused')?.status === 'False', 30_000);

  const r = await c.kubectl(['delete', 'cluster', NAME, '-n', NS, '--wait=true', '--timeout=150s']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await c.kube.read(kcpResource, KCP, NS), undefined);
  assert.deepEqual((await ownMachines()).map((m) => m.metadata.name), []);
  const left = (await c.cloud.client.listInstances()).filter((i) => i.name.startsWith(KCP) && i.state !== 'terminated');
  assert.deepEqual(left.map((i) => i.name), []);
  await eventually('the KCP\'s Secrets collected with it', async () => (await c.kube.read(resources.secrets, `${NAME}-kubeconfig`, NS)) === undefined && (await c.kube.read(resources.secrets, `${NAME}-etcd`, NS)) === undefined, 30_000);
});
