// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// Scale mode: 20 simulated nodes in this process register Ready against the embedded API server,
// renew their Leases, run a pod bound to one of them as Running/Ready without a process (a Job's
// pod to completion), and stop cleanly (no renewal after stop). The lease and status periods carry the kubelet's 4% jitter.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { logger } from '../../src/common/log.js';
import { KubeClient, loadKubeConfig, resources, type Obj } from '../../src/kube/index.js';
import { SimulatedNodes } from '../../src/cluster/node-agent/scale.js';
import { jittered } from '../../src/cluster/node-agent/node-status.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

const { nodes: NODES, leases: LEASES, pods: PODS } = resources;
let api: TestApiServer;
let client: KubeClient;

before(async () => {
  api = await startTestApiServer();
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
});
after(async () => {
  await api?.stop();
});

test('20 simulated nodes register Ready, renew their Leases, run a pod without a process and stop cleanly', { timeout: 60_000 }, async () => {
  const renewals: number[] = [];
  const sim = new SimulatedNodes(client, { count: 20, leaseRenewIntervalMs: 300, onLeaseRenewed: (ms) => renewals.push(ms), log: logger('scale-test') });
  try {
    await sim.start();
    const list = await client.list(NODES);
    const simulated = list.items.filter((n: Obj) => n.metadata.labels?.['bosun.local/simulated'] === 'true');
    assert.equal(simulated.length, 20);
    for (const n of simulated) {
      assert.equal(n.status!.conditions!.find((c: Obj) => c.type === 'Ready')?.status, 'True', `${n.metadata.name} Ready`);
    }
    assert.equal(new Set(simulated.map((n: Obj) => n.spec.podCIDR)).size, 20, 'every node its own pod CIDR');

    const first = await client.get(LEASES, 'sim-node-7', 'kube-node-lease');
    const renewed = await eventually('sim-node-7 Lease renewed', async () => {
      const l = await client.get(LEASES, 'sim-node-7', 'kube-node-lease');
      return l.spec!.renewTime !== first.spec!.renewTime ? l : undefined;
    });
    assert.equal(renewed.spec!.holderIdentity, 'sim-node-7');
    assert.equal(renewed.metadata.ownerReferences?.[0]?.name, 'sim-node-7');
    // Each node's first renewal waits a random part of the interval (as kubelets start apart).
    await eventually('every node to renew at least twice (40 renewals)', () => renewals.length >= 40, { timeoutMs: 20_000 });

    await client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sim-pod', namespace: 'default' }, spec: { nodeName: 'sim-node-3', containers: [{ name: 'c', image: 'bosun.local/echo' }] } });
    const pod = await eventually('sim-pod Running', async () => {
      const p = await client.get(PODS, 'sim-pod', 'default');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(pod.status!.conditions!.find((c: Obj) => c.type === 'Ready')?.status, 'True');
    assert.equal(pod.status!.podIP, '10.128.3.2', 'the first address of sim-node-3\'s pod CIDR');
    assert.equal(pod.status!.hostIP, '172.16.0.3');
    await client.delete(PODS, 'sim-pod', 'default', { gracePeriodSeconds: 30 });
    await eventually('sim-pod gone after a graceful deletion', async () => (await client.read(PODS, 'sim-pod', 'default')) === undefined);
    // A Job's pod completes at once (kwok's pod-complete stage), with exit code 0.
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: '9e0c3d1a-0000-4000-8000-00000000000a', controller: true };
    await client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sim-job-pod', namespace: 'default', ownerReferences: [owner] }, spec: { nodeName: 'sim-node-4', restartPolicy: 'Never', containers: [{ name: 'c', image: 'perl' }] } });
    const done = await eventually('sim-job-pod Succeeded', async () => {
      const p = await client.get(PODS, 'sim-job-pod', 'default');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    assert.deepEqual(done.status!.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  } finally {
    await sim.stop();
  }
  const stopped = await client.get(LEASES, 'sim-node-7', 'kube-node-lease');
  const count = renewals.length;
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(renewals.length, count, 'no renewal after stop');
  assert.equal((await client.get(LEASES, 'sim-node-7', 'kube-node-lease')).spec!.renewTime, stopped.spec!.renewTime);
});

test("the lease and status periods are jittered as the kubelet's (JitterUntil, factor 0.04), in whole milliseconds", () => {
  const periods = Array.from({ length: 10_000 }, () => jittered(10_000));
  assert.ok(periods.every((p) => Number.isInteger(p) && p >= 10_000 && p <= 10_400), 'between the period and 4% more, whole ms');
  const mean = periods.reduce((a, b) => a + b, 0) / periods.length;
  assert.ok(Math.abs(mean - 10_200) < 20, `spread evenly: mean ${mean}`);
  // Heartbeats that once finished together drift apart: few equal periods, at most 401 distinct timer durations.
  const distinct = new Set(periods).size;
  assert.ok(distinct > 300 && distinct <= 401, `${distinct} distinct periods`);
});
