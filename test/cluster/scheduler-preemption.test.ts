// Preemption as kube-scheduler's DefaultPreemption decides it (the pure core as tables), and the
// scheduler carrying it out against the embedded API server with the kubelet stand-in: a pod of a
// higher PriorityClass that fits nowhere takes the room of lower-priority pods — they get the
// DisruptionTarget condition, are deleted and told so in a Preempted Event; the pod is nominated to
// the node and bound there once they are gone — while a pod whose preemptionPolicy is Never, or
// for which no victims would help, waits with kube's reasons in its FailedScheduling message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { Manager, loadKubeConfig, resources } from '../../src/kube/index.js';
import { addScheduler } from '../../src/cluster/scheduler/scheduler.js';
import { buildNodeInfos } from '../../src/cluster/scheduler/schedule.js';
import { findPreemption } from '../../src/cluster/scheduler/preemption.js';
import type { Pod } from '../../src/cluster/scheduler/types.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';
import { node, pod, snapshot } from './scheduler-fixtures.js';

const at = (p: Pod, priority: number, started = '2026-11-28T10:00:00Z'): Pod => ({ ...p, spec: { ...p.spec, priority }, status: { phase: 'Running', startTime: started } });
const preempt = (incoming: Pod, nodes: ReturnType<typeof node>[], bound: Record<string, Pod[]>, budgets = []) => {
  const snap = snapshot(nodes, bound);
  const result = findPreemption(incoming, snap, buildNodeInfos(snap), budgets);
  return 'preemption' in result ? { node: result.preemption.node, victims: result.preemption.victims.map((v) => v.metadata.name).sort(), pdbViolations: result.preemption.pdbViolations } : result.message;
};

test('victims and node as kube chooses them', () => {
  const big = at(pod('big', { requests: { cpu: '3' } }), 1000);
  // Only what is needed goes: of three 1-CPU pods on a 4-CPU node, two (the least important).
  assert.deepEqual(preempt(big, [node('a', { cpu: '4' })], { a: [at(pod('l1', { requests: { cpu: '1' } }), 10), at(pod('l2', { requests: { cpu: '1' } }), 5), at(pod('l3', { requests: { cpu: '1' } }), 5, '2026-11-28T11:00:00Z')] }), { node: 'a', victims: ['l2', 'l3'], pdbViolations: 0 });
  // Pods of equal or higher priority are never victims.
  assert.equal(preempt(big, [node('a', { cpu: '4' })], { a: [at(pod('same', { requests: { cpu: '2' } }), 1000)] }), 'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.');
  // Removing every lower pod still leaves too little: the filter's own reason.
  assert.equal(preempt(big, [node('a', { cpu: '4' })], { a: [at(pod('same', { requests: { cpu: '2' } }), 1000), at(pod('low', { requests: { cpu: '1' } }), 1)] }), 'preemption: 0/1 nodes are available: 1 Insufficient cpu.');
  // A node refused for a reason pods do not cause (a taint) is not helped by preemption.
  assert.equal(
    preempt(big, [node('a', { cpu: '4', taints: [{ key: 'k', effect: 'NoSchedule' }] }), node('b', { cpu: '1' })], { a: [at(pod('low', { requests: { cpu: '4' } }), 1)], b: [] }),
    'preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.',
  );
  // Between nodes: the lower highest victim priority wins; then fewer victims.
  const nodeOf = (r: ReturnType<typeof preempt>) => (typeof r === 'string' ? r : r.node);
  assert.equal(nodeOf(preempt(big, [node('a', { cpu: '3' }), node('b', { cpu: '3' })], { a: [at(pod('a1', { requests: { cpu: '3' } }), 50)], b: [at(pod('b1', { requests: { cpu: '3' } }), 20)] })), 'b');
  assert.equal(nodeOf(preempt(big, [node('a', { cpu: '3' }), node('b', { cpu: '3' })], { a: [at(pod('a1', { requests: { cpu: '1' } }), 20), at(pod('a2', { requests: { cpu: '2' } }), 20)], b: [at(pod('b1', { requests: { cpu: '3' } }), 20)] })), 'b');
  // A PodDisruptionBudget with no disruption left: its pods go last, and a node without violations wins.
  const covered = (name: string) => ({ ...at(pod(name, { requests: { cpu: '3' } }), 1), metadata: { name, namespace: 'default', labels: { app: 'db' } } });
  const budgets = [{ namespace: 'default', selector: [{ key: 'app', operator: 'In' as const, values: ['db'] }], disruptionsAllowed: 0 }];
  assert.deepEqual(preempt(big, [node('a', { cpu: '3' }), node('b', { cpu: '3' })], { a: [covered('db-0')], b: [at(pod('web', { requests: { cpu: '3' } }), 100)] }, budgets as never), { node: 'b', victims: ['web'], pdbViolations: 0 });
  assert.deepEqual(preempt(big, [node('a', { cpu: '3' })], { a: [covered('db-0')] }, budgets as never), { node: 'a', victims: ['db-0'], pdbViolations: 1 }, 'a budget is respected when possible, not at any price');
  // Never preempts; a pod waiting for its victims to terminate keeps waiting.
  assert.equal(preempt({ ...big, spec: { ...big.spec, preemptionPolicy: 'Never' } }, [node('a', { cpu: '4' })], { a: [at(pod('low', { requests: { cpu: '4' } }), 1)] }), 'preemption: not eligible due to preemptionPolicy=Never.');
  const terminating = { ...at(pod('low', { requests: { cpu: '4' } }), 1), metadata: { name: 'low', namespace: 'default', deletionTimestamp: '2026-11-28T12:00:00Z' } };
  assert.equal(preempt({ ...big, status: { nominatedNodeName: 'a' } }, [node('a', { cpu: '4' })], { a: [terminating] }), 'preemption: not eligible due to a terminating pod on the nominated node.');
});

test('the scheduler preempts: victims marked, deleted and told; the pod nominated, then bound', async () => {
  const { api: server, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  let finishing = true;
  const standIns = startStandIns(client, { readyAfterMs: 20, schedule: false, finishDeletion: () => finishing });
  const manager = new Manager({ name: 'scheduler', kubeconfig: loadKubeConfig(server.kubeconfigPath) });
  addScheduler(manager);
  const running = manager.start(stop.signal);
  try {
    await createNode(client, 'worker-a'); // 4 CPUs
    await server.kubectlOk(['create', 'priorityclass', 'low', '--value=100']);
    await server.kubectlOk(['create', 'priorityclass', 'high', '--value=1000']);
    // A pod takes its preemption policy from its class, as kube's priority admission sets it.
    await server.kubectlOk(['create', 'priorityclass', 'high-polite', '--value=1000', '--preemption-policy=Never']);
    const make = (name: string, cpu: string, extra: Partial<api.PodSpec> = {}) =>
      client.create(resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu } } }], ...extra } } as api.Pod);
    for (const name of ['low-1', 'low-2']) await make(name, '2', { priorityClassName: 'low' });
    await eventually('the low pods run', async () => (await client.list(resources.pods, 'default')).items.filter((p) => p.status?.phase === 'Running').length === 2);

    // Never: waits, and says why.
    await make('polite', '3', { priorityClassName: 'high-polite' });
    await eventually('polite refused', async () => {
      const c = (await client.get(resources.pods, 'polite', 'default')).status?.conditions?.find((x) => x.type === 'PodScheduled');
      return c?.message === '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.';
    });
    await client.delete(resources.pods, 'polite', 'default', { gracePeriodSeconds: 0 });

    // The victim's kubelet takes its time: the preemptor is nominated and waits.
    finishing = false;
    await make('urgent', '2', { priorityClassName: 'high' });
    await eventually('urgent nominated', async () => (await client.get(resources.pods, 'urgent', 'default')).status?.nominatedNodeName === 'worker-a');
    const victim = (await client.list(resources.pods, 'default')).items.find((p) => p.metadata.deletionTimestamp)!;
    assert.deepEqual(
      victim.status?.conditions?.filter((c) => c.type === 'DisruptionTarget').map((c) => [c.status, c.reason, c.message]),
      [['True', 'PreemptionByScheduler', 'default-scheduler: preempting to accommodate a higher priority pod']],
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await client.get(resources.pods, 'urgent', 'default')).spec?.nodeName, undefined, 'not bound while the victim terminates');
    finishing = true;
    await client.mergePatch(resources.pods, victim.metadata.name, 'default', { metadata: { annotations: { poked: '1' } } });
    await eventually('urgent bound to worker-a', async () => (await client.get(resources.pods, 'urgent', 'default')).spec?.nodeName === 'worker-a');
    const urgent = await client.get(resources.pods, 'urgent', 'default');
    const left = (await client.list(resources.pods, 'default')).items.map((p) => p.metadata.name).sort();
    assert.equal(left.length, 2, `one low pod made room: ${left.join(', ')}`);
    const events = (await client.list(resources.events, 'default', { fieldSelector: 'reason=Preempted' })).items;
    assert.equal(events.length, 1);
    assert.equal(events[0].message, `Preempted by pod ${urgent.metadata.uid} on node worker-a`);
    assert.match(events[0].involvedObject.name ?? '', /^low-[12]$/);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await server.stop();
  }
});
