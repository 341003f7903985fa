// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// A machine booted by the local cloud from the worker role's rendered config: its node agent
// registers the Node (addresses, labels, taint, capacity, nodeInfo), renews its Lease, and after a
// reboot comes back with the new boot ID, having stopped its heartbeat while down.
import { after, before, test } from 'node:test';
import { resources } from '../../src/kube/resources.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Obj, ResourceRef } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { bootWorker, readyCondition, startNodeCluster, workerUserData, type NodeCluster } from './node-agent-fixture.js';

let c: NodeCluster;

before(async () => {
  // A reboot keeps the machine down 3 s; the node lifecycle controller gives a silent node 1.5 s.
  c = await startNodeCluster({ bootDelayMs: 3000, nodeGraceMs: 1500 });
});
after(async () => {
  await c?.close();
});

const node = (name: string) => c.kube.read<Obj>(resources.nodes as ResourceRef<Obj>, name);
const lease = (name: string) => c.kube.read<Obj>({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true }, name, 'kube-node-lease');

test('a booted machine registers its Node Ready with its addresses, labels, taint, capacity and nodeInfo; its Lease is renewed', { timeout: 90_000 }, async () => {
  const stopWatch = new AbortController();
  const watch = await c.kube.open('GET', '/api/v1/nodes', { query: { watch: 1, fieldSelector: 'metadata.name=worker-a' }, signal: stopWatch.signal });
  watch.on('error', () => undefined);
  const firstAdded = new Promise<Obj | undefined>((resolve) => {
    let partial = '';
    watch.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines.filter(Boolean)) {
        const event = JSON.parse(line);
        if (event.type === 'ADDED') resolve(event.object);
      }
    });
    watch.on('close', () => resolve(undefined));
  });
  const userData = workerUserData(c.api, { bootstrapUser: { token: c.api.token }, nodeUser: { token: c.api.token } });
  const instance = await bootWorker(c, 'worker-a', userData);
  const root = join(c.dataDir, 'machines', instance.id, 'root');
  const n = await eventually('worker-a Ready', async () => {
    const x = await node('worker-a');
    return readyCondition(x)?.status === 'True' ? x : undefined;
  });
  assert.deepEqual(n.status.addresses, [{ type: 'InternalIP', address: instance.privateIp }, { type: 'Hostname', address: 'worker-a' }]);
  const N = instance.privateIp.split('.')[3];
  assert.equal(n.spec.podCIDR, `127.1.${N}.0/24`);
  assert.deepEqual(n.spec.taints, [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }]);
  const labels = n.metadata.labels;
  assert.equal(labels['node-role.kubernetes.io/worker'], '', 'from the unit\'s --node-labels');
  assert.equal(labels['kubernetes.io/hostname'], 'worker-a');
  assert.equal(labels['kubernetes.io/os'], 'linux');
  assert.ok(labels['kubernetes.io/arch']);
  assert.equal(labels['node.kubernetes.io/instance-type'], 'local.small');
  assert.equal(labels['topology.kubernetes.io/zone'], 'local-b');
  assert.equal(labels['topology.kubernetes.io/region'], 'local');
  // local.small: 2 CPUs, 4 GiB; kubelet.conf reserves 500m, 1Gi and 1Gi of disk.
  assert.equal(n.status.capacity.cpu, '2');
  assert.equal(n.status.capacity.memory, `${4096 * 1024}Ki`);
  assert.equal(n.status.capacity.pods, '250', 'maxPods from the rendered kubelet.conf');
  assert.equal(n.status.allocatable.cpu, '1500m');
  assert.equal(n.status.allocatable.memory, `${(4096 - 1024 - 100) * 1024}Ki`);
  assert.ok(n.status.capacity['ephemeral-storage']);
  assert.equal(n.status.daemonEndpoints.kubeletEndpoint.Port, 10250);
  assert.equal(n.status.nodeInfo.bootID, readFileSync(join(root, 'proc/sys/kernel/random/boot_id'), 'utf8').trim());
  assert.equal(n.status.nodeInfo.bootID, instance.bootId);
  assert.equal(n.status.nodeInfo.machineID, readFileSync(join(root, 'etc/machine-id'), 'utf8').trim());
  assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.33.0+bosun');
  assert.deepEqual(n.status.conditions.map((x: Obj) => `${x.type}=${x.status}`).sort(), ['DiskPressure=False', 'MemoryPressure=False', 'PIDPressure=False', 'Ready=True']);
  // Created with its status, as the kubelet's initial Node is: the scheduler never sees it without room.
  const added = await firstAdded;
  assert.equal(added?.status?.allocatable?.cpu, '1500m', JSON.stringify(added));
  stopWatch.abort();

  const first = await eventually('a lease', () => lease('worker-a'));
  assert.equal(first.spec.holderIdentity, 'worker-a');
  assert.equal(first.metadata.ownerReferences?.[0]?.kind, 'Node');
  const renewed = await eventually('the lease renewed', async () => {
    const l = await lease('worker-a');
    return Date.parse(l!.spec.renewTime) > Date.parse(first.spec.renewTime) ? l : undefined;
  }, 10_000);
  assert.ok(renewed);

  const out = await c.api.kubectlOk(['get', 'nodes', '-o', 'wide']);
  assert.match(out, new RegExp(`worker-a\\s+Ready\\s+worker\\s+\\S+\\s+v1\\.33\\.0\\+bosun\\s+${instance.privateIp.replace(/\./g, '\\.')}`));
});

test('a machine whose Ignition config installs no kubelet boots and runs no node agent; a broken kubelet config fails the boot, saying why', { timeout: 30_000 }, async () => {
  const bare = await bootWorker(c, 'no-kubelet', JSON.stringify({ ignition: { version: '3.2.0' } }));
  assert.equal(bare.machine.phase, 'Up');
  assert.equal(c.runtime.agent(bare.id), undefined);
  assert.equal(await node('no-kubelet'), undefined);
  await c.client.operate('terminate', bare.id);

  const unit = '[Service]\nExecStart=/usr/bin/kubelet --config=/etc/kubernetes/missing.conf --kubeconfig=/var/lib/kubelet/kubeconfig\n';
  const broken = await c.client.createInstance({ name: 'broken-kubelet', userData: JSON.stringify({ ignition: { version: '3.2.0' }, systemd: { units: [{ name: 'kubelet.service', enabled: true, contents: unit }] } }) });
  const failed = await eventually('boot failed', async () => {
    const i = await c.client.getInstance(broken.id);
    return i.machine.phase === 'Failed' ? i : undefined;
  });
  assert.match(failed.machine.message!, /the kubelet unit names --config=\/etc\/kubernetes\/missing.conf, which is not in the machine root/);
  await c.client.operate('terminate', broken.id);
});

test('a reboot stops the heartbeat: the Node goes NotReady while the machine is down and comes back Ready with the new boot ID', { timeout: 90_000 }, async () => {
  const instance = (await c.client.listInstances({ names: ['worker-a'] }))[0];
  const before = await node('worker-a');
  await c.client.operate('reboot', instance.id);
  await eventually('machine down', async () => (await c.client.getInstance(instance.id)).machine.phase === 'Down');
  const stale = await lease('worker-a');
  const notReady = await eventually('worker-a NotReady and tainted unreachable', async () => {
    const n = await node('worker-a');
    return readyCondition(n)?.status === 'Unknown' && n!.spec.taints?.some((t: Obj) => t.key === 'node.kubernetes.io/unreachable') ? n : undefined;
  }, 10_000);
  assert.equal(readyCondition(notReady)!.reason, 'NodeStatusUnknown');
  assert.equal((await lease('worker-a'))!.spec.renewTime, stale!.spec.renewTime, 'nothing renewed the lease while the machine was down');
  const after = await eventually('new boot ID reported, Ready', async () => {
    const n = await node('worker-a');
    return n?.status?.nodeInfo?.bootID !== before!.status.nodeInfo.bootID && readyCondition(n)?.status === 'True' ? n : undefined;
  }, 30_000);
  const rebooted = await c.client.getInstance(instance.id);
  assert.equal(after.status.nodeInfo.bootID, rebooted.bootId);
  assert.equal(after.metadata.uid, before!.metadata.uid, 'the same Node object, taken over');
  const rebootedEvent = await eventually('a Rebooted event', async () => ((await c.kube.list<Obj>({ group: '', version: 'v1', resource: 'events', namespaced: true }, 'default')).items as Obj[])
    .find((e) => e.reason === 'Rebooted' && e.involvedObject?.name === 'worker-a'));
  assert.equal(rebootedEvent.message, `Node worker-a has been rebooted, boot id: ${rebooted.bootId}`);
});
