// test: shared-addresses, test: e2e (npm run test:e2e; minutes on its own cluster) (installs a local cluster: machines on 127.0.1.N, the MCS on 22623)
// Cluster API's quick start on a bosun management cluster, end to end and with real parts only:
// an installed local cluster (3 masters, operators as pods) gets the manifests `bosun cluster
// generate` prints — Cluster, KubeadmControlPlane (3 replicas), LocalCluster, LocalMachineTemplates,
// KubeadmConfigTemplate, MachineDeployment (2 replicas), as Cluster API's quick start writes them —
// through the real kubectl. The controllers create the machines in the local cloud behind a load
// balancer, the machines boot from the kubeadm bootstrap provider's Ignition and run etcd and the
// control plane as static pods, the workers join; then, through the kubeconfig `bosun cluster get
// kubeconfig` prints (its server the balancer's address): 5 Ready nodes, a Deployment's pods
// Running on the workers, its Service answering from its cluster IP. `bosun cluster describe`
// shows the tree Available. The control plane is then rolled from one Kubernetes version to the
// next, one machine at a time, while a client loops on the workload API through the balancer and
// counts failed requests (none allowed). Deleting the Cluster leaves nothing of it in the cloud or
// the API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudClient } from '../../src/cloud/client.js';
import { KubeClient, loadKubeConfig, withConnectionReuse } from '../../src/kube/index.js';
import { installCluster, type InstalledCluster } from '../helpers/installed-cluster.js';
import { runKubectl } from '../helpers/apiserver.js';
import { runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const NAME = 'dev';
/** The version the cluster is made at, and the one its control plane is rolled to. */
const FROM = 'v1.32.5';
const TO = 'v1.33.1';
let c: InstalledCluster;
let dir: string;
let workloadKubeconfig: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bosun-quick-start-'));
  c = await installCluster(0);
});
after(async () => {
  await c?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const bosun = (args: string[], input?: string) => runBosun([...args, `--kubeconfig=${c.cluster.kubeconfigPath}`], { input, timeoutMs: 60_000 });
async function workload(args: string[]): Promise<string> {
  const r = await runKubectl(workloadKubeconfig, args, { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} (workload cluster): ${r.stderr}`);
  return r.stdout;
}

test('Cluster API\'s quick start brings up a workload cluster: 5 Ready nodes, pods on the workers, a Service; the control plane rolls to the next version with no failed request; deleting it leaves nothing', { timeout: 900_000 }, async () => {
  const generated = await runBosun(['cluster', 'generate', NAME, '--kubernetes-version', FROM, '--control-plane-machine-count', '3', '--worker-machine-count', '2'], { timeoutMs: 60_000 });
  assert.equal(generated.code, 0, generated.stderr);
  const applied = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: generated.stdout, timeoutMs: 60_000 });
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /kubeadmcontrolplane\.controlplane\.cluster\.x-k8s\.io\/dev-control-plane created/);

  // While it comes up, describe says what it waits on; once up, every part is Available.
  const provisioning = await bosun(['cluster', 'describe', NAME]);
  assert.equal(provisioning.code, 0, provisioning.stderr);
  assert.match(provisioning.stdout, /^Cluster\/dev /m);
  const described = await eventually('the workload cluster Available', async () => {
    const r = await bosun(['cluster', 'describe', NAME]);
    return /^Cluster\/dev +5\/5 +5 +5 +5 +Available: True/m.test(r.stdout) ? r.stdout : undefined;
  }, { timeoutMs: 600_000, intervalMs: 3_000, detail: () => c.lines.slice(-5).join('\n') });
  assert.match(described, /├─ClusterInfrastructure - LocalCluster\/dev +True +LoadBalancerReady/);
  assert.match(described, /├─ControlPlane - KubeadmControlPlane\/dev-control-plane +3\/3 +3 +3 +3 +Available: True/);
  assert.match(described, /└─MachineDeployment\/dev-md-0 +2\/2 +2 +2 +2 +Available: True/);

  // The kubeconfig names the balancer, and the real kubectl works through it.
  const got = await bosun(['cluster', 'get', 'kubeconfig', NAME]);
  assert.equal(got.code, 0, got.stderr);
  const lc = await c.json(['get', 'localcluster', NAME]);
  const endpoint = lc.spec.controlPlaneEndpoint;
  assert.match(got.stdout, new RegExp(`server: https://${endpoint.host.replaceAll('.', '\\.')}:6443`));
  workloadKubeconfig = join(dir, 'dev.kubeconfig');
  writeFileSync(workloadKubeconfig, got.stdout, { mode: 0o600 });
  const nodes = JSON.parse(await workload(['get', 'nodes', '-o', 'json'])).items;
  assert.equal(nodes.length, 5);
  for (const n of nodes) {
    assert.equal(n.status.conditions.find((x: { type: string }) => x.type === 'Ready')?.status, 'True', n.metadata.name);
    assert.equal(n.status.nodeInfo.kubeletVersion, FROM);
    assert.match(n.spec.providerID, /^local:\/\/i-/);
  }
  assert.equal(nodes.filter((n: { metadata: { labels: Record<string, string> } }) => 'node-role.kubernetes.io/control-plane' in n.metadata.labels).length, 3);
  // The workload cluster's API is its own: none of the management cluster's nodes are there.
  assert.ok(nodes.every((n: { metadata: { name: string } }) => n.metadata.name.startsWith('dev-')));
  const version = JSON.parse(await workload(['version', '-o', 'json']));
  assert.equal(version.serverVersion.gitVersion, FROM);
  // Machines know their nodes, from the workload cluster.
  const machines = (await c.json(['get', 'machines', '-n', 'default'])).items;
  assert.equal(machines.length, 5);
  for (const m of machines) assert.ok(nodes.some((n: { metadata: { name: string } }) => n.metadata.name === m.status?.nodeRef?.name), `Machine ${m.metadata.name} has its node`);

  // A Deployment's pods run on the workers; its Service answers from its cluster IP.
  await workload(['create', 'deployment', 'web', '--image=bosun.local/echo', '--replicas=2', '--port=8080']);
  await workload(['expose', 'deployment', 'web', '--port=80', '--target-port=8080']);
  const pods = await eventually('the Deployment\'s pods Running', async () => {
    const items = JSON.parse(await workload(['get', 'pods', '-l', 'app=web', '-o', 'json'])).items;
    return items.length === 2 && items.every((p: { status: { phase: string } }) => p.status.phase === 'Running') ? items : undefined;
  }, 120_000);
  for (const p of pods) assert.match(p.spec.nodeName, /^dev-md-0-/);
  const clusterIP = (await workload(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  const answer = await eventually(`the Service answering at ${clusterIP}:80`, async () => {
    const res = await fetch(`http://${clusterIP}:80/`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    return res?.ok ? res.text() : undefined;
  }, 60_000);
  assert.ok(pods.some((p: { metadata: { name: string } }) => answer.includes(p.metadata.name)), `the answer names a pod: ${answer}`);

  // The control plane rolled to the next version: one machine at a time (maxSurge 1, so never more
  // than 4), while a client loops on the workload API through the balancer — each request a read
  // that etcd must answer with quorum, on a reused connection and on a new one — and counts failures.
  const reused = new KubeClient(withConnectionReuse(loadKubeConfig(workloadKubeconfig)));
  const fresh = new KubeClient(loadKubeConfig(workloadKubeconfig));
  const tally = { ok: 0, failed: 0, errors: [] as string[] };
  let looping = true;
  const loop = (async () => {
    while (looping) {
      for (const client of [reused, fresh]) {
        try {
          await client.request('GET', '/api/v1/namespaces/default/configmaps?limit=1');
          tally.ok++;
        } catch (e) {
          tally.failed++;
          if (tally.errors.length < 10) tally.errors.push((e as Error).message);
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  let most = 0;
  try {
    await c.kubectl(['patch', 'kcp', `${NAME}-control-plane`, '--type=merge', '-p', JSON.stringify({ spec: { version: TO } })]);
    await eventually(`the control plane rolled to ${TO}`, async () => {
      const cps = (await c.json(['get', 'machines', '-n', 'default', '-l', 'cluster.x-k8s.io/control-plane'])).items;
      most = Math.max(most, cps.length);
      const kcp = await c.json(['get', 'kcp', `${NAME}-control-plane`]);
      return cps.length === 3 && cps.every((m: { spec: { version: string } }) => m.spec.version === TO) && kcp.status?.upToDateReplicas === 3 && kcp.status?.readyReplicas === 3 && kcp.status?.version === TO;
    }, { timeoutMs: 600_000, intervalMs: 2_000 });
  } finally {
    looping = false;
    await loop;
  }
  assert.ok(most <= 4, `at most replicas + maxSurge control-plane machines at once (saw ${most})`);
  assert.ok(tally.ok > 50, `the client kept asking (${tally.ok} answers)`);
  assert.equal(tally.failed, 0, `requests through the balancer failed during the rollout: ${tally.errors.join('; ')}`);
  const rolled = JSON.parse(await workload(['get', 'nodes', '-l', 'node-role.kubernetes.io/control-plane', '-o', 'json'])).items;
  assert.deepEqual(rolled.map((n: { status: { nodeInfo: { kubeletVersion: string } } }) => n.status.nodeInfo.kubeletVersion), [TO, TO, TO]);
  assert.equal(JSON.parse(await workload(['version', '-o', 'json'])).serverVersion.gitVersion, TO);

  // Deleting the Cluster removes every machine, instance, balancer and Secret of it.
  const lbName = `default-${NAME}-apiserver`;
  const deleted = await runKubectl(c.cluster.kubeconfigPath, ['delete', 'cluster', NAME, '--timeout=300s'], { timeoutMs: 320_000 });
  assert.equal(deleted.code, 0, deleted.stderr);
  const cloud = new CloudClient(c.cluster.cloud!.url, c.cluster.cloud!.rootCredential);
  const instances = (await cloud.listInstances()).filter((i) => i.name.startsWith(`${NAME}-`) && i.state !== 'terminated');
  assert.deepEqual(instances.map((i) => i.name), []);
  assert.equal((await cloud.listLoadBalancers()).find((b) => b.name === lbName), undefined);
  for (const kind of ['machines', 'kubeadmcontrolplanes', 'localmachines', 'kubeadmconfigs', 'localclusters']) {
    assert.equal((await c.kubectl(['get', kind, '-n', 'default', '-o', 'name'])).trim(), '', kind);
  }
  const secrets = (await c.kubectl(['get', 'secrets', '-n', 'default', '-o', 'name'])).split('\n').filter((s) => s.startsWith(`secret/${NAME}-`));
  assert.deepEqual(secrets, []);
});
