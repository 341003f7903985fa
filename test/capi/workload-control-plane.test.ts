// test: shared-addresses, test: e2e, test: timeout 1200 (npm run test:e2e; minutes on one workload cluster) (a local cloud whose machines run node agents: 127.0.1.N:6443, :2379, :2380, balancers on 127.0.200.N)
// A workload cluster's control plane through faults, on real parts only: the embedded management
// API server runs Cluster API's controllers (and webhooks) and a local cloud whose machines run the
// real node agent; `bosun cluster generate` (3 control-plane machines, 1 worker) is applied with
// kubectl; the machines boot from the kubeadm bootstrap provider's Ignition, run etcd, the API
// server, the controller-manager and the scheduler as static pods, and the worker joins. On that one
// workload cluster, in order:
//   - its pods and Services get addresses from Cluster.spec.clusterNetwork (each Node's podCIDR a
//     /24 of the pods' range, the pod's address inside it), and answer there;
//   - a rollout with maxSurge 0 (a new version): scale-in first — never more than 3 control-plane
//     Machines, at some point 2 — etcd keeps quorum, and a client looping on the workload API
//     through the load balancer sees no failed request;
//   - one control-plane machine's instance is terminated in the cloud: its Node goes NotReady, the
//     MachineHealthCheck marks its Machine, KCP removes its etcd member and replaces it, and the
//     looping client again sees no failed request;
//   - two control-plane machines down at once (stopped in the cloud): remediation refuses, saying
//     why (etcd quorum) on the Machine's OwnerRemediated and the KCP's Remediating, and deletes
//     nothing; started again, etcd has quorum and the control plane comes back to 3 healthy Machines;
//   - `bosun cluster move` to a second management cluster on the same cloud while the cluster runs:
//     the workload API answers throughout, no instance is made or removed, no bootstrap data is
//     made anew (the KubeadmConfigs take back the data their Machines name), and the target then
//     manages it — its KubeadmControlPlane Available, and scaling its MachineDeployment there
//     joins a fifth Node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type * as api from '../../src/api/index.js';
import { API_VERSION, CLUSTERS, LABEL, MACHINES, MACHINE_DEPLOYMENTS } from '../../src/capi/api.js';
import { machineDir } from '../../src/cloud/firmware.js';
import { parseCidr } from '../../src/common/ipv4.js';
import { logger } from '../../src/common/log.js';
import { NodeAgentRuntime } from '../../src/cluster/node-agent/runtime.js';
import { KubeClient, type Obj, loadKubeConfig, resources, withConnectionReuse } from '../../src/kube/index.js';
import { runKubectl } from '../helpers/apiserver.js';
import { runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutEtcd } from '../helpers/etcd.js';
import { waitForInstance } from '../cloud/cloud-fixture.js';
import { type CapiCluster, startCapiCluster } from './capi-fixture.js';

const NS = 'default';
const NAME = 'wcp';
const KCP = `${NAME}-control-plane`;
const FROM = 'v1.32.5';
const TO = 'v1.33.1';
const CP = `${LABEL.clusterName}=${NAME},${LABEL.controlPlane}`;

let c: CapiCluster;
let target: CapiCluster | undefined;
let dir: string;
let workloadKubeconfig: string;
let clusterNetwork: { pods: string; services: string };

const condition = (o: { status?: { conditions?: Obj[] } } | undefined, type: string) => o?.status?.conditions?.find((x) => x.type === type);
const cpMachines = async () => ((await c.kube.list(MACHINES, NS, { labelSelector: CP })).items ?? []) as api.Machine[];
const liveCpMachines = async () => (await cpMachines()).filter((m) => !m.metadata.deletionTimestamp);
const kcp = async () => (await c.kube.get(resources.kubeadmControlPlanes, KCP, NS)) as api.KubeadmControlPlane;
const instanceOf = (m: api.Machine) => String(m.spec?.providerID ?? '').replace(/^local:\/\//, '');
async function workload(args: string[]): Promise<string> {
  const r = await runKubectl(workloadKubeconfig, ['--request-timeout=15s', ...args], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} (workload cluster): ${r.stderr}`);
  return r.stdout;
}

/** Everything well: 3 control-plane Machines up to date, Ready, healthy; the KCP Available with a healthy etcd. */
let lastSeen = '';
/** What the last settle check saw, for a timeout's message. */
const seen = () => lastSeen;

async function controlPlaneSettled(version: string): Promise<api.Machine[] | undefined> {
  const all = await cpMachines();
  const k = await kcp();
  const bad = (o: { metadata: { name: string }; status?: { conditions?: Obj[] } }) => `${o.metadata.name}: ${(o.status?.conditions ?? []).filter((x) => x.status !== 'True' && !['Deleting', 'Paused', 'RollingOut', 'ScalingUp', 'ScalingDown', 'Remediating'].includes(x.type) || (x.status === 'True' && ['RollingOut', 'ScalingUp', 'ScalingDown', 'Remediating', 'Deleting'].includes(x.type))).map((x) => `${x.type}=${x.status} ${x.reason}: ${x.message}`).join(' | ')}`;
  lastSeen = [bad(k), ...all.map((m) => `${m.metadata.deletionTimestamp ? '(deleting) ' : ''}${m.spec?.version} ${bad(m)}`)].join('\n');
  const ok = all.length === 3 && all.every((m) => m.spec?.version === version && !m.metadata.deletionTimestamp && m.status?.nodeRef)
    && k.status?.readyReplicas === 3 && k.status?.upToDateReplicas === 3
    && ['Available', 'EtcdClusterHealthy', 'ControlPlaneComponentsHealthy'].every((t) => condition(k, t)?.status === 'True');
  return ok ? all : undefined;
}

/**
 * A client looping on the workload API through the balancer — a read etcd must answer with quorum,
 * on a reused connection and on a new one each time — counting answers and failures. It retries as
 * client-go (kubectl's library) does and no more, which KubeClient does: an answer with a
 * Retry-After (an API server shutting down answers 503 with one) is asked again after that long,
 * and a GET whose connection was cut before an answer (an instance going away mid-handshake) after
 * a second, up to 10 times; those retries are counted apart. Any other error is a failure.
 */
function loopOnWorkloadApi() {
  const reused = new KubeClient(withConnectionReuse(loadKubeConfig(workloadKubeconfig)));
  const fresh = new KubeClient(loadKubeConfig(workloadKubeconfig));
  const tally = { ok: 0, failed: 0, retriedAfter: 0, retriedReset: 0, errors: [] as string[] };
  let looping = true;
  const ask = (client: KubeClient) => client.request('GET', '/api/v1/namespaces/default/configmaps?limit=1', { signal: AbortSignal.timeout(20_000) });
  const loop = (async () => {
    while (looping) {
      for (const client of [reused, fresh]) {
        try {
          await ask(client);
          tally.ok++;
        } catch (e) {
          tally.failed++;
          if (tally.errors.length < 10) tally.errors.push(`${new Date().toISOString()} ${(e as Error).message}`);
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    tally,
    stop: async (what: string) => {
      looping = false;
      await loop;
      tally.retriedAfter = reused.retried.retryAfter + fresh.retried.retryAfter;
      tally.retriedReset = reused.retried.connectionReset + fresh.retried.connectionReset;
      console.log(`${what}: ${tally.ok} answers, ${tally.failed} failed, ${tally.retriedAfter} asked again after a Retry-After, ${tally.retriedReset} after a cut connection`);
      return tally;
    },
  };
}

before(async () => {
  if (skipWithoutEtcd) return;
  dir = mkdtempSync(join(tmpdir(), 'bosun-wcp-'));
  const runtime = new NodeAgentRuntime({
    log: logger('node-agent'), leaseRenewIntervalMs: 2000, nodeStatusUpdateMs: 2000, restartDelayMs: 1000, csrPollMs: 300, staticPodCheckMs: 2000,
    crashBackoffBaseMs: 1000, crashBackoffMaxMs: 5000, apiWaitPollMs: 500, certificateRotationJitter: () => 0.5,
  });
  c = await startCapiCluster({ webhooks: true, cloud: { runtime, bootDelayMs: 300 } });
  const generated = await runBosun(['cluster', 'generate', NAME, '--kubernetes-version', FROM, '--control-plane-machine-count', '3', '--worker-machine-count', '1'], { timeoutMs: 60_000 });
  assert.equal(generated.code, 0, generated.stderr);
  // What a KubeadmControlPlane may carry: etcd's elections and the node monitor fast enough for a loaded machine and a test.
  const objects = parseAllDocuments(generated.stdout).map((d) => d.toJS() as Obj);
  const k = objects.find((o) => o.kind === 'KubeadmControlPlane')!;
  k.spec.kubeadmConfigSpec.clusterConfiguration.etcd = { local: { extraArgs: [{ name: 'heartbeat-interval', value: '250' }, { name: 'election-timeout', value: '2500' }] } };
  k.spec.kubeadmConfigSpec.clusterConfiguration.controllerManager = { extraArgs: [{ name: 'node-monitor-grace-period', value: '15s' }] };
  const cluster = objects.find((o) => o.kind === 'Cluster')!;
  clusterNetwork = { pods: cluster.spec.clusterNetwork.pods.cidrBlocks[0], services: cluster.spec.clusterNetwork.services.cidrBlocks[0] };
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  let seen = '';
  await eventually('the workload cluster up: 3 control-plane Machines and the worker Running, the Cluster Available', async () => {
    const cl = await c.kube.read(CLUSTERS, NAME, NS);
    const machines = (await c.kube.list(MACHINES, NS)).items ?? [];
    seen = JSON.stringify(machines.map((m) => [m.metadata.name, m.status?.phase, (m.status?.conditions ?? []).filter((x) => x.status !== 'True').map((x) => `${x.type}: ${x.message}`)]), null, 1);
    return condition(cl, 'Available')?.status === 'True' && machines.length === 4 && machines.every((m) => m.status?.phase === 'Running') && (await controlPlaneSettled(FROM)) ? true : undefined;
  }, { timeoutMs: 600_000, intervalMs: 3_000, detail: () => seen });
  const got = await runBosun(['cluster', 'get', 'kubeconfig', NAME, `--kubeconfig=${c.api.server.kubeconfigPath}`], { timeoutMs: 60_000 });
  assert.equal(got.code, 0, got.stderr);
  workloadKubeconfig = join(dir, `${NAME}.kubeconfig`);
  writeFileSync(workloadKubeconfig, got.stdout, { mode: 0o600 });
});

after(async () => {
  await target?.close();
  await c?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Whether an address or a network lies inside a network. */
function within(inner: string, outer: string): boolean {
  const a = parseCidr(inner.includes('/') ? inner : `${inner}/32`)!;
  const b = parseCidr(outer)!;
  return a.bits >= b.bits && Math.floor(a.base / 2 ** (32 - b.bits)) === Math.floor(b.base / 2 ** (32 - b.bits));
}

test('the pods\' and Services\' addresses come from Cluster.spec.clusterNetwork, and answer there', { skip: skipWithoutEtcd, timeout: 300_000 }, async () => {
  const nodes = JSON.parse(await workload(['get', 'nodes', '-o', 'json'])).items as api.Node[];
  assert.equal(nodes.length, 4);
  for (const n of nodes) assert.ok(n.spec?.podCIDR && within(n.spec.podCIDR, clusterNetwork.pods), `Node ${n.metadata.name}'s podCIDR ${n.spec?.podCIDR} inside ${clusterNetwork.pods}`);
  assert.equal(new Set(nodes.map((n) => n.spec?.podCIDR)).size, 4, 'each Node its own range');
  await workload(['create', 'deployment', 'web', '--image=bosun.local/echo', '--replicas=1', '--port=8080']);
  await workload(['expose', 'deployment', 'web', '--port=80', '--target-port=8080']);
  const pod = await eventually('the Deployment\'s pod Running', async () => {
    const items = JSON.parse(await workload(['get', 'pods', '-l', 'app=web', '-o', 'json'])).items as api.Pod[];
    return items.length === 1 && items[0].status?.phase === 'Running' && items[0].status.podIP ? items[0] : undefined;
  }, 120_000);
  const podIP = pod.status!.podIP!;
  const node = nodes.find((n) => n.metadata.name === pod.spec?.nodeName)!;
  assert.ok(within(podIP, node.spec!.podCIDR!), `pod IP ${podIP} inside its Node's ${node.spec!.podCIDR}`);
  const clusterIP = (await workload(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  assert.ok(within(clusterIP, clusterNetwork.services), `Service IP ${clusterIP} inside ${clusterNetwork.services}`);
  for (const url of [`http://${podIP}:8080/`, `http://${clusterIP}:80/`]) {
    const answer = await eventually(`an answer from ${url}`, async () => {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      return res?.ok ? res.text() : undefined;
    }, 60_000);
    assert.ok(answer.includes(pod.metadata.name), `the answer names the pod: ${answer}`);
  }
  await workload(['delete', 'deployment', 'web']);
});

test('the joining control-plane machines\' etcd members came in as learners and were promoted once in sync, as kubeadm joins them', { skip: skipWithoutEtcd }, async () => {
  const instances = await c.cloud.client.listInstances({ states: ['running'] });
  const logs = instances.map((i) => ({ name: i.name, log: (() => {
    try {
      return readFileSync(join(machineDir(c.cloud.dataDir, i.id).root, 'var/log/boot.log'), 'utf8');
    } catch {
      return '';
    }
  })() }));
  const joined = logs.filter((l) => /\[etcd\] Added .* to the etcd cluster as a learner/.test(l.log));
  assert.equal(joined.length, 2, `two control-plane machines joined etcd: ${logs.map((l) => l.name).join(', ')}`);
  for (const j of joined) assert.match(j.log, /\[etcd\] Promoted .* from learner to voting member/, `${j.name}'s member was promoted`);
});

test('each control-plane Machine says when its certificates expire: read by KCP from its API server\'s serving certificate (kubeadm\'s year)', { skip: skipWithoutEtcd }, async () => {
  const day = 86_400_000;
  const dates = await eventually('status.certificatesExpiryDate on the three control-plane Machines', async () => {
    const ms = await liveCpMachines();
    return ms.length === 3 && ms.every((m) => m.status?.certificatesExpiryDate) ? ms.map((m) => Date.parse(m.status!.certificatesExpiryDate!)) : undefined;
  }, 60_000);
  for (const d of dates) assert.ok(Math.abs(d - (Date.now() + 365 * day)) < 2 * day, `about a year from now: ${new Date(d).toISOString()}`);
});

test('a rollout with maxSurge 0 scales in first, keeps etcd\'s quorum and loses no request through the balancer', { skip: skipWithoutEtcd, timeout: 900_000 }, async () => {
  const loop = loopOnWorkloadApi();
  let most = 0;
  let fewest = 3;
  try {
    await c.kubectlOk(['patch', 'kcp', KCP, '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { version: TO, rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } } } })]);
    await eventually(`the control plane rolled to ${TO}`, async () => {
      const live = await liveCpMachines();
      most = Math.max(most, (await cpMachines()).length);
      fewest = Math.min(fewest, live.length);
      return controlPlaneSettled(TO);
    }, { timeoutMs: 780_000, intervalMs: 1_000, detail: seen });
  } finally {
    await loop.stop('the maxSurge 0 rollout');
  }
  assert.ok(most <= 3, `maxSurge 0: never more than 3 control-plane Machines (saw ${most})`);
  assert.equal(fewest, 2, 'maxSurge 0: an outdated Machine goes before its replacement comes');
  assert.ok(loop.tally.ok > 50, `the client kept asking (${loop.tally.ok} answers)`);
  assert.equal(loop.tally.failed, 0, `requests through the balancer failed during the rollout: ${loop.tally.errors.join('; ')}`);
  const nodes = JSON.parse(await workload(['get', 'nodes', '-l', 'node-role.kubernetes.io/control-plane', '-o', 'json'])).items as api.Node[];
  assert.deepEqual(nodes.map((n) => n.status?.nodeInfo?.kubeletVersion), [TO, TO, TO]);
});

test('a terminated control-plane instance: the MachineHealthCheck marks it, KCP removes its etcd member and replaces it, no request fails', { skip: skipWithoutEtcd, timeout: 900_000 }, async () => {
  await c.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: API_VERSION, kind: 'MachineHealthCheck', metadata: { name: `${NAME}-control-plane-unhealthy`, namespace: NS },
    spec: {
      clusterName: NAME, selector: { matchLabels: { [LABEL.clusterName]: NAME, [LABEL.controlPlane]: '' } },
      checks: { unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 10 }, { type: 'Ready', status: 'False', timeoutSeconds: 10 }] },
    },
  }));
  const before = (await controlPlaneSettled(TO))!;
  assert.ok(before, 'the control plane is settled before the fault');
  const victim = before[0];
  const victimNode = victim.status!.nodeRef!.name;
  const loop = loopOnWorkloadApi();
  let replacement: api.Machine;
  try {
    await c.cloud.client.operate('terminate', instanceOf(victim));
    const marked = await eventually(`Machine ${victim.metadata.name} marked unhealthy`, async () => {
      const m = await c.kube.read(MACHINES, victim.metadata.name, NS);
      return !m || condition(m, 'HealthCheckSucceeded')?.status === 'False' ? m ?? true : undefined;
    }, { timeoutMs: 180_000, intervalMs: 500 });
    void marked;
    const settled = await eventually('a replacement joined: 3 healthy control-plane Machines, etcd healthy', async () => {
      const all = await controlPlaneSettled(TO);
      return all && !all.some((m) => m.metadata.name === victim.metadata.name) ? all : undefined;
    }, { timeoutMs: 600_000, intervalMs: 1_000, detail: seen });
    replacement = settled.find((m) => !before.some((b) => b.metadata.name === m.metadata.name))!;
  } finally {
    await loop.stop('the remediation');
  }
  assert.ok(replacement, 'a new control-plane Machine');
  const events = JSON.parse(await c.kubectlOk(['get', 'events', '-n', NS, '-o', 'json'])).items as Obj[];
  const reasons = (name: string) => events.filter((e) => e.involvedObject.name === name).map((e) => `${e.reason}: ${e.message}`);
  assert.ok(reasons(victim.metadata.name).some((r) => r.startsWith('MachineMarkedUnhealthy')), reasons(victim.metadata.name).join('\n'));
  assert.ok(reasons(victim.metadata.name).some((r) => r.startsWith('MachineRemediated')), reasons(victim.metadata.name).join('\n'));
  assert.ok(reasons(KCP).some((r) => r.startsWith('EtcdMemberRemoved') && r.includes(victimNode)), reasons(KCP).join('\n'));
  // The remediation is recorded, and the replacement carries it.
  const k = await kcp();
  assert.equal(k.status?.lastRemediation?.machine, victim.metadata.name);
  // The workload cluster knows the new Node and no longer the old one.
  const nodes = (JSON.parse(await workload(['get', 'nodes', '-o', 'json'])).items as api.Node[]).map((n) => n.metadata.name);
  assert.ok(!nodes.includes(victimNode), `${victimNode} is gone from ${nodes.join(', ')}`);
  assert.ok(nodes.includes(replacement!.status!.nodeRef!.name));
  assert.ok(loop.tally.ok > 50, `the client kept asking (${loop.tally.ok} answers)`);
  assert.equal(loop.tally.failed, 0, `requests through the balancer failed while the control plane was remediated: ${loop.tally.errors.join('; ')}`);
});

test('two control-plane machines down at once: remediation refuses for etcd\'s quorum, and says so; started again, the control plane recovers', { skip: skipWithoutEtcd, timeout: 900_000 }, async () => {
  const before = (await controlPlaneSettled(TO))!;
  assert.ok(before, 'the control plane is settled before the fault');
  const [first, second] = before;
  // The first goes down and is marked while etcd still has quorum; KCP is paused meanwhile, so the
  // second is down too before it looks — both down at once, as far as remediation is concerned.
  await c.kubectlOk(['annotate', 'kcp', KCP, '-n', NS, 'cluster.x-k8s.io/paused=']);
  await c.cloud.client.operate('stop', instanceOf(first));
  await eventually(`Machine ${first.metadata.name} marked unhealthy and handed over`, async () => {
    const m = await c.kube.get(MACHINES, first.metadata.name, NS);
    return condition(m, 'HealthCheckSucceeded')?.status === 'False' && condition(m, 'OwnerRemediated')?.status === 'False' ? true : undefined;
  }, { timeoutMs: 180_000, intervalMs: 500 });
  await c.cloud.client.operate('stop', instanceOf(second));
  await c.kubectlOk(['annotate', 'kcp', KCP, '-n', NS, 'cluster.x-k8s.io/paused-']);
  try {
    const refused = await eventually('remediation refused for etcd\'s quorum', async () => {
      const m = await c.kube.get(MACHINES, first.metadata.name, NS);
      const owner = condition(m, 'OwnerRemediated');
      return owner?.reason === 'CannotBeRemediated' ? { m, owner } : undefined;
    }, { timeoutMs: 120_000, intervalMs: 500 });
    // Which members answer decides the words: usually the one left running does (1 of the 2 left
    // would be healthy), but an etcd without quorum may not answer the member list in time.
    assert.match(refused.owner.message, /^A control plane Machine needs remediation, but (removing this Machine could result in etcd quorum loss: 1 of the 2 etcd members left would be healthy, 2 needed for quorum|no etcd member answers with the member list, so removing this Machine could result in etcd quorum loss)\. Remediation cannot proceed$/);
    const remediating = condition(await kcp(), 'Remediating');
    assert.equal(remediating?.status, 'True');
    assert.match(remediating?.message, new RegExp(`Machine ${first.metadata.name} needs remediation: .*etcd quorum loss`));
    // Nothing was deleted: all three Machines are still there.
    assert.deepEqual((await cpMachines()).filter((m) => m.metadata.deletionTimestamp).map((m) => m.metadata.name), []);
    assert.equal((await cpMachines()).length, 3);
  } finally {
    // Started again (whatever happened above), both rejoin with their data and etcd has quorum
    // again. The first is still marked from its time down, and the second is marked too once its
    // Node has been NotReady long enough — and so may the third be, never down but whose Node's
    // lease could not be renewed while etcd had no quorum; with quorum back, KCP may now remediate
    // them, one at a time (Cluster API would too), if it gets to one before its Node is Ready
    // again. Either way the control plane comes back to 3 healthy Machines, and a Machine that
    // went was marked unhealthy by the MachineHealthCheck and remediated, nothing else.
    for (const m of [first, second]) {
      const i = await waitForInstance(c.cloud.client, instanceOf(m), 'stopped', (x) => x.state === 'stopped' || x.state === 'running', 60_000);
      if (i.state === 'stopped') await c.cloud.client.operate('start', instanceOf(m));
    }
  }
  const back = await eventually('the control plane back to 3 healthy Machines', () => controlPlaneSettled(TO), { timeoutMs: 420_000, intervalMs: 1_000, detail: seen });
  const names = back.map((m) => m.metadata.name);
  const events = JSON.parse(await c.kubectlOk(['get', 'events', '-n', NS, '-o', 'json'])).items as Obj[];
  for (const m of before) {
    if (names.includes(m.metadata.name)) continue;
    const about = events.filter((e) => e.involvedObject.name === m.metadata.name).map((e) => `${e.reason}: ${e.message}`);
    console.log(`${m.metadata.name}${m === first ? ' (first down)' : m === second ? ' (second down)' : ' (never down)'} was replaced:\n  ${about.join('\n  ')}`);
    assert.ok(about.some((r) => r.startsWith('MachineMarkedUnhealthy')) && about.some((r) => r.startsWith('MachineRemediated')), `${m.metadata.name} was marked unhealthy and replaced by remediation, once etcd had quorum again: ${about.join('; ')}`);
  }
  await workload(['get', 'nodes']);
});

test('bosun cluster move of the live workload cluster: the workload API answers throughout, the target manages it and scales its MachineDeployment', { skip: skipWithoutEtcd, timeout: 600_000 }, async () => {
  await eventually('the control plane settled before the move', () => controlPlaneSettled(TO), { timeoutMs: 420_000, intervalMs: 1_000, detail: seen });
  target = await startCapiCluster({ sharedCloud: c.cloud, webhooks: true });
  const ours = async () => (await c.cloud.client.listInstances()).filter((i) => i.name.startsWith(`${NAME}-`) && i.state === 'running').map((i) => i.id).sort();
  const instancesBefore = await ours();
  assert.equal(instancesBefore.length, 4);
  const dataBefore = new Map<string, string>();
  for (const config of (await c.kube.list(resources.kubeadmConfigs, NS)).items ?? []) {
    const name = config.status!.dataSecretName!;
    dataBefore.set(name, (await c.kube.get(resources.secrets, name, NS)).data!.value);
  }
  assert.equal(dataBefore.size, 4);

  const loop = loopOnWorkloadApi();
  try {
    const moved = await runBosun(['cluster', 'move', NAME, '-n', NS, `--kubeconfig=${c.api.server.kubeconfigPath}`, `--to-kubeconfig=${target.api.server.kubeconfigPath}`], { timeoutMs: 120_000 });
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stdout, /Resumed cluster default\/wcp on the target/);
    await eventually('the source keeps nothing of the cluster', async () => (await c.kube.read(CLUSTERS, NAME, NS)) === undefined && ((await c.kube.list(MACHINES, NS)).items ?? []).length === 0, 60_000);
    await eventually('the target\'s control plane Available, its Machines Running, the Cluster Available', async () => {
      const t = target!;
      const k = await t.kube.read(resources.kubeadmControlPlanes, KCP, NS);
      const cl = await t.kube.read(CLUSTERS, NAME, NS);
      const ms = (await t.kube.list(MACHINES, NS)).items ?? [];
      return condition(k, 'Available')?.status === 'True' && k?.status?.readyReplicas === 3 && condition(cl, 'Available')?.status === 'True'
        && ms.length === 4 && ms.every((m) => m.status?.phase === 'Running' && m.status.nodeRef) ? true : undefined;
    }, { timeoutMs: 240_000, intervalMs: 1_000 });
  } finally {
    await loop.stop('the move');
  }
  assert.equal(loop.tally.failed, 0, `requests to the workload API failed during the move: ${loop.tally.errors.join('; ')}`);
  assert.deepEqual(await ours(), instancesBefore, 'the same instances run: nothing made, nothing removed');
  // The data the machines booted from is the target's configs' again, not made anew.
  for (const config of (await target.kube.list(resources.kubeadmConfigs, NS)).items ?? []) {
    const name = await eventually(`KubeadmConfig ${config.metadata.name} names its data again`, async () => (await target!.kube.get(resources.kubeadmConfigs, config.metadata.name, NS)).status?.dataSecretName);
    assert.equal((await target.kube.get(resources.secrets, name, NS)).data!.value, dataBefore.get(name), `the data of ${name} is unchanged`);
  }

  // The target manages it: one more worker joins the workload cluster.
  await target.kubectlOk(['scale', 'machinedeployment', `${NAME}-md-0`, '-n', NS, '--replicas=2']);
  await eventually('a fifth Node Ready in the workload cluster, its Machine Running on the target', async () => {
    const nodes = JSON.parse(await workload(['get', 'nodes', '-o', 'json'])).items as api.Node[];
    const md = await target!.kube.get(MACHINE_DEPLOYMENTS, `${NAME}-md-0`, NS);
    return nodes.length === 5 && nodes.every((n) => n.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True') && md.status?.readyReplicas === 2 ? true : undefined;
  }, { timeoutMs: 300_000, intervalMs: 2_000 });
  assert.equal((await ours()).length, 5);
  assert.equal(await c.kube.read(MACHINE_DEPLOYMENTS, `${NAME}-md-0`, NS), undefined);
});
