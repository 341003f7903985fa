// The install as `bosun start` runs it, on one shared cluster (test: shared-addresses — machines
// on 127.0.1.N, api-int on 127.0.100.1): 3 masters and 2 workers boot from Ignition, the
// operators run as pods on the masters and the bootstrap hands over to them; a worker's death
// moves its pods; the cluster stops and comes back. (The update on an installed cluster:
// install-update.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CloudClient } from '../../src/cloud/client.js';
import { runKubectl } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { installCluster, OPERATOR_NAMESPACES, type InstalledCluster } from '../helpers/installed-cluster.js';
import type { Obj } from '../../src/kube/client.js';

let c: InstalledCluster;
const kubectl = (args: string[]) => c.kubectl(args);
const json = (args: string[]) => c.json(args);
/** The daemon runs on every node; everything else of the operators runs on the masters. */
const onEveryNode = (pod: Obj) => pod.metadata.labels?.['k8s-app'] === 'machine-config-daemon';

before(async () => {
  c = await installCluster(2);
});

after(async () => {
  await c?.destroy();
});

test('a fresh install: 3 masters and 2 workers Ready, the operators as pods on the masters, ClusterVersion Available', async () => {
  assert.equal(c.cluster.installed, true);
  const steps = c.lines.filter((l) => /^\[\d\/9\]/.test(l)).map((l) => l.slice(0, 5));
  assert.deepEqual(steps, ['[1/9]', '[2/9]', '[3/9]', '[4/9]', '[5/9]', '[6/9]', '[7/9]', '[8/9]', '[9/9]']);
  assert.ok(c.lines.some((l) => /hand-over: the bootstrap cluster-version, machine-config and cloud-controller-manager operators stopped/.test(l)), 'the hand-over was shown');
  assert.ok(c.lines.some((l) => /waiting for 3 master nodes Ready/.test(l)), 'what is waited on was shown');

  const nodes = await kubectl(['get', 'nodes', '-o', 'wide']);
  for (const name of ['bosun-local-master-0', 'bosun-local-master-1', 'bosun-local-master-2']) {
    // (Ready,SchedulingDisabled while its daemon rolls it: see the note on #15.)
    assert.match(nodes, new RegExp(`^${name}\\s+Ready(,SchedulingDisabled)?\\s+control-plane,master\\s+\\S+\\s+v\\S+\\s+127\\.0\\.1\\.\\d+`, 'm'));
  }
  assert.match(nodes, /^bosun-local-worker-a-0\s+Ready(,SchedulingDisabled)?\s+worker\s/m);
  assert.match(nodes, /^bosun-local-worker-b-0\s+Ready(,SchedulingDisabled)?\s+worker\s/m);
  const masters = (await json(['get', 'nodes', '-l', 'node-role.kubernetes.io/master'])).items as Obj[];
  assert.ok(masters.every((n) => n.spec.taints?.some((t: Obj) => t.key === 'node-role.kubernetes.io/master' && t.effect === 'NoSchedule')), 'masters are tainted NoSchedule');

  // Every operator pod runs, on a master, as a process.
  const masterNames = new Set(masters.map((n) => n.metadata.name));
  for (const ns of OPERATOR_NAMESPACES) {
    // (A worker's daemon may still be starting: the workers have just joined.)
    const pods = await eventually(`every pod in ${ns} running`, async () => {
      const items = (await json(['get', 'pods', '-n', ns])).items as Obj[];
      return items.length > 0 && items.every((p) => p.status.phase === 'Running') && items;
    }, 60_000);
    for (const pod of pods) {
      if (!onEveryNode(pod)) assert.ok(masterNames.has(pod.spec.nodeName), `${pod.metadata.name} is on a master (${pod.spec.nodeName})`);
    }
  }
  assert.equal(((await json(['get', 'pods', '-n', 'openshift-machine-config-operator', '-l', 'k8s-app=machine-config-server'])).items as Obj[]).length, 3);
  assert.equal(((await json(['get', 'pods', '-n', 'openshift-machine-config-operator', '-l', 'k8s-app=machine-config-daemon'])).items as Obj[]).length, 5, 'a daemon on every node');
  // The cloud controller manager initialised every node: providerID, zone, no uninitialized taint.
  for (const node of (await json(['get', 'nodes'])).items as Obj[]) {
    assert.match(node.spec.providerID ?? '', /^local:\/\/i-/, `${node.metadata.name} has its providerID`);
    assert.ok(!node.spec.taints?.some((t: Obj) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized'), `${node.metadata.name} is initialised`);
  }
  assert.match(await kubectl(['get', 'co', 'cloud-controller-manager']), /^cloud-controller-manager\s+1\.0\.0\s+True\s/m);
  // The daemons took the nodes: both pools are Updated on their rendered configs.
  await eventually('both pools Updated', async () => ((await json(['get', 'mcp'])).items as Obj[]).every((p) => p.status?.conditions?.some((c: Obj) => c.type === 'Updated' && c.status === 'True')), 180_000);
  // The CVO that now leads is the pod, not the bootstrap.
  // (The bootstrap released the Lease; the pod takes it at its next try, within its retry period.)
  await eventually('the CVO pod holding the Lease, by its name', async () =>
    /^cluster-version-operator-[a-z0-9]+-[a-z0-9]+$/.test((await json(['get', 'lease', 'version', '-n', 'openshift-cluster-version'])).spec.holderIdentity ?? ''), 60_000);
  const logs = await kubectl(['logs', '-n', 'openshift-cluster-version', 'deploy/cluster-version-operator']);
  assert.match(logs, /became leader/);

  assert.match(await kubectl(['get', 'clusterversion']), /^version\s+1\.0\.0\s+True\s+False\s/m);
  assert.match(await kubectl(['get', 'co', 'machine-config']), /^machine-config\s+1\.0\.0\s+True\s/m);
  // Workers booted from the masters' servers through api-int: the bootstrap server is gone from it.
  const cloud = new CloudClient(c.cluster.cloud!.url);
  const apiInt = (await cloud.listLoadBalancers()).find((lb) => lb.name === 'bosun-local-api-int')!;
  assert.equal(apiInt.address, '127.0.100.1');
  assert.deepEqual(apiInt.ports.find((p) => p.port === 22623)!.targets!.sort(), (await cloud.listInstances({ names: [...masterNames] })).map((i) => i.id).sort());
  const userData = JSON.parse(Buffer.from((await json(['get', 'secret', 'worker-user-data', '-n', 'openshift-machine-api'])).data.userData, 'base64').toString());
  assert.deepEqual(userData.ignition.config.merge, [{ source: 'https://127.0.100.1:22623/config/worker' }]);
});

test("a worker's instance terminated: its Node goes (NotReady, then deleted by the CCM) and its pods are recreated on the other worker", async () => {
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [{ name: 'web', image: 'bosun.local/echo' }],
          tolerations: ['not-ready', 'unreachable'].map((t) => ({ key: `node.kubernetes.io/${t}`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 })),
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
        },
      },
    },
  };
  const r = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: JSON.stringify(deployment) });
  assert.equal(r.code, 0, r.stderr);
  const running = async () => ((await json(['get', 'pods', '-l', 'app=web'])).items as Obj[]).filter((p) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp);
  const placed = await eventually('two web pods running, one per worker', async () => {
    const pods = await running();
    return pods.length === 2 && new Set(pods.map((p) => p.spec.nodeName)).size === 2 && pods;
  }, 60_000);
  assert.ok(placed.every((p) => /worker/.test(p.spec.nodeName)), 'workloads land on workers, not on the tainted masters');
  const cloud = new CloudClient(c.cluster.cloud!.url);
  const [victim] = await cloud.listInstances({ names: ['bosun-local-worker-b-0'] });
  await cloud.operate('terminate', victim.id);
  await eventually('worker-b NotReady or gone', async () => {
    const r = await runKubectl(c.cluster.kubeconfigPath, ['get', 'node', 'bosun-local-worker-b-0', '-o', 'json']);
    if (r.code !== 0) return /NotFound/.test(r.stderr);
    return JSON.parse(r.stdout).status.conditions.some((c: Obj) => c.type === 'Ready' && c.status !== 'True');
  }, 90_000);
  await eventually('both web pods running on worker-a', async () => {
    const pods = await running();
    return pods.length === 2 && pods.every((p) => p.spec.nodeName === 'bosun-local-worker-a-0');
  }, 90_000);
  await kubectl(['delete', 'deployment', 'web']);
});

test('a stopped cluster comes back: the same nodes, the operators running again, no bootstrap', async () => {
  const before = (((await json(['get', 'nodes'])).items as Obj[]).map((n) => n.metadata.uid as string)).sort();
  await c.restart();
  assert.equal(c.cluster.installed, false);
  assert.ok(c.lines.some((l) => /^\[5\/6\] bringing the installed cluster back/.test(l)), c.lines.join('\n'));
  assert.ok(!c.lines.some((l) => /bootstrap:/.test(l)), 'no bootstrap ran');
  const now = (((await json(['get', 'nodes'])).items as Obj[]).map((n) => n.metadata.uid as string)).sort();
  assert.deepEqual(now.filter((uid) => before.includes(uid)), now, 'the same Node objects');
  const ready = (await json(['get', 'nodes'])).items.filter((n: Obj) => n.status.conditions.some((c: Obj) => c.type === 'Ready' && c.status === 'True'));
  assert.equal(ready.length, 4, 'the three masters and the surviving worker');
  await eventually('the terminated worker\'s Node deleted by the CCM', async () => !(await json(['get', 'nodes'])).items.some((n: Obj) => n.metadata.name === 'bosun-local-worker-b-0'), 90_000);
  assert.match(await kubectl(['get', 'clusterversion']), /^version\s+1\.0\.0\s+True\s/m);
});
