// The pod garbage collector against the embedded API server: a pod bound to a node that is gone
// is failed with DisruptionTarget DeletionByPodGC and deleted after the quarantine, and only then;
// finished pods beyond the threshold go oldest first; a pod stuck terminating on a NotReady node is
// forced once the node is tainted out-of-service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { loadKubeConfig } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { NODES, PODS } from '../../src/cluster/workloads/resources.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startWorkloadTestServer } from './workloads/stand-ins.js';

const pod = (name: string, nodeName?: string): api.Pod => ({ metadata: { name, namespace: 'default' }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'i' }] } });

test('pods on a deleted node are collected after the quarantine; finished pods beyond the threshold, oldest first', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  try {
    await createNode(client, 'node-1');
    await createNode(client, 'node-2');
    await client.create(PODS, pod('stays', 'node-1'));
    // A finalizer holds the orphan after its deletion, so that what the collector wrote can be read.
    await client.create(PODS, { ...pod('orphan', 'node-2'), metadata: { name: 'orphan', namespace: 'default', finalizers: ['example.com/hold'] } });
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['podgc'], leaderElection: false, podGc: { quarantineMs: 1500, terminatedThreshold: 1 } });
    const deletedAt = Date.now();
    await client.delete(NODES, 'node-2');
    await new Promise((r) => setTimeout(r, 700));
    assert.ok(!(await client.get(PODS, 'orphan', 'default')).metadata.deletionTimestamp, 'not before the quarantine');
    const collected = await eventually('the orphan collected', async () => {
      const p = await client.get(PODS, 'orphan', 'default');
      return p.metadata.deletionTimestamp ? p : undefined;
    });
    assert.ok(Date.now() - deletedAt >= 1500);
    assert.equal(collected.status!.phase, 'Failed');
    const disruption = collected.status!.conditions!.find((c) => c.type === 'DisruptionTarget')!;
    assert.deepEqual([disruption.status, disruption.reason, disruption.message], ['True', 'DeletionByPodGC', 'PodGC: node no longer exists']);
    await client.mergePatch(PODS, 'orphan', 'default', { metadata: { finalizers: null } });
    assert.ok(!(await client.get(PODS, 'stays', 'default')).metadata.deletionTimestamp, 'a pod on a live node stays');

    for (const name of ['done-1', 'done-2', 'done-3']) {
      await client.create(PODS, pod(name, 'node-1'));
      await client.mergePatch(PODS, name, 'default', { status: { phase: 'Succeeded' } }, 'status');
      await new Promise((r) => setTimeout(r, 1100)); // creation times are kept to the second
    }
    await eventually('only the newest finished pod left', async () => {
      const names = ((await client.list(PODS, 'default')).items).map((p) => p.metadata.name).sort();
      return JSON.stringify(names) === JSON.stringify(['done-3', 'stays']);
    });
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await api.stop();
  }
});

test('a pod stuck terminating on a NotReady node stays until the node is tainted out-of-service, then is failed and deleted', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  try {
    for (const name of ['down-1', 'down-2']) {
      await createNode(client, name);
      await client.mergePatch(NODES, name, undefined, { status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] } }, 'status');
    }
    // Deleted gracefully (30 s), with no kubelet to finish: Terminating. A finalizer keeps the collected one readable.
    await client.create(PODS, { ...pod('stuck', 'down-1'), metadata: { name: 'stuck', namespace: 'default', finalizers: ['example.com/hold'] } });
    await client.create(PODS, pod('waits', 'down-2'));
    for (const name of ['stuck', 'waits']) await client.delete(PODS, name, 'default');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['podgc'], leaderElection: false });
    await new Promise((r) => setTimeout(r, 700));
    const waiting = await client.get(PODS, 'stuck', 'default');
    assert.equal(waiting.metadata.deletionGracePeriodSeconds, 30, 'a NotReady node alone is no reason to force it');
    await client.mergePatch(NODES, 'down-1', undefined, { spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] } });
    const collected = await eventually('the stuck pod forced', async () => {
      const p = await client.get(PODS, 'stuck', 'default');
      return p.metadata.deletionGracePeriodSeconds === 0 && p;
    });
    assert.equal(collected.status!.phase, 'Failed');
    assert.equal((await client.get(PODS, 'waits', 'default')).metadata.deletionGracePeriodSeconds, 30, 'the other node is not out of service');
    await client.mergePatch(PODS, 'stuck', 'default', { metadata: { finalizers: null } });
    await eventually('the stuck pod gone', async () => !(await client.read(PODS, 'stuck', 'default')));
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await api.stop();
  }
});
