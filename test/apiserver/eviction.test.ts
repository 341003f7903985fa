// kubectl drain against the embedded API server: evictions refused with 429 while the
// PodDisruptionBudget allows none (kubectl retries), granted once more matching pods are Ready;
// DaemonSet pods left alone; PDB status kept current.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { enableEvictions } from '../../src/apiserver/controllers/eviction.js';
import { eventually } from '../helpers/eventually.js';

const setup = `
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default, uid: will-be-replaced}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
`;

function pod(name: string, node: string, owner: { kind: string; name: string; uid: string }, app: string): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app }, ownerReferences: [{ apiVersion: 'apps/v1', ...owner, controller: true }] },
    // No kubelet runs here to finish a graceful deletion: an evicted pod goes at once.
    spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx' }] },
  });
}

test('kubectl drain waits for the disruption budget, then evicts; DaemonSet pods stay', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  const evictions = enableEvictions(api.server);
  try {
    const ok = async (args: string[], input?: string) => {
      const r = await api.kubectl(args, { input });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    await ok(['apply', '-f', '-'], setup);
    const rsUid = (await ok(['get', 'rs', 'web', '-o', 'jsonpath={.metadata.uid}'])).trim();
    const dsUid = (await ok(['get', 'ds', 'agent', '-o', 'jsonpath={.metadata.uid}'])).trim();
    const readyPod = async (name: string, node: string, owner = { kind: 'ReplicaSet', name: 'web', uid: rsUid }, app = 'web') => {
      await ok(['create', '-f', '-'], pod(name, node, owner, app));
      await ok(['patch', 'pod', name, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}']);
    };
    await readyPod('web-a', 'n1');
    await readyPod('web-b', 'n1');
    await readyPod('agent-x', 'n1', { kind: 'DaemonSet', name: 'agent', uid: dsUid }, 'agent');

    const pdbStatus = async () => JSON.parse(await ok(['get', 'pdb', 'web', '-o', 'jsonpath={.status}']));
    const status = await eventually('the PDB to count 2 healthy pods', async () => {
      const s = await pdbStatus();
      return s.currentHealthy === 2 ? s : undefined;
    }, 5000);
    assert.deepEqual([status.currentHealthy, status.desiredHealthy, status.expectedPods, status.disruptionsAllowed], [2, 2, 2, 0]);
    assert.equal(status.conditions[0].reason, 'InsufficientPods');

    const drain = api.kubectl(['drain', 'n1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=60s'], { timeoutMs: 70_000 });
    await new Promise((r) => setTimeout(r, 2500));
    assert.match(await ok(['get', 'pods', '-o', 'name']), /web-a[\s\S]*web-b/, 'both pods still there while the budget is exhausted');
    assert.match(await ok(['get', 'node', 'n1', '-o', 'jsonpath={.spec.unschedulable}']), /true/);

    await readyPod('web-c', 'n2');
    await readyPod('web-d', 'n2');
    const result = await drain;
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr + result.stdout, /Cannot evict pod as it would violate the pod's disruption budget/);
    assert.match(result.stdout, /node\/n1 drained/);
    assert.deepEqual((await ok(['get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}'])).trim().split(' ').sort(), ['agent-x', 'web-c', 'web-d']);

    // policy/v1beta1 Evictions (older clients) get the same answers.
    const evict = (name: string) => api.request('POST', `/api/v1/namespaces/default/pods/${name}/eviction`, { body: { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name, namespace: 'default' } } });
    const refused = await evict('web-c');
    assert.equal(refused.status, 429);
    assert.match(refused.json.message, /Cannot evict pod as it would violate the pod's disruption budget/);
    assert.equal((await evict('agent-x')).status, 201, 'a pod no budget covers is evicted');
  } finally {
    evictions.stop();
    await api.stop();
  }
});
