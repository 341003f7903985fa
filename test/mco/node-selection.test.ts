// The node controller's pure decisions (src/mco/controller/node-selection.ts): pool membership,
// maxUnavailable, candidate choice and zone ordering, paused pools, and pool status arithmetic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseCandidates, computePoolStatus, maxUnavailableCount, poolMembership, updateInProgressTaintChanges } from '../../src/mco/controller/node-selection.js';
import type { MachineConfigPool, NodeView } from '../../src/mco/controller/types.js';
import { renderFailureMessage } from '../../src/mco/controller/render.js';

const OLD = 'rendered-worker-old';
const NEW = 'rendered-worker-new';

interface NodeOpts { current?: string; desired?: string; state?: string; ready?: boolean; zone?: string; age?: number; labels?: Record<string, string>; unschedulable?: boolean; reason?: string }

function node(name: string, o: NodeOpts = {}): NodeView {
  const annotations: Record<string, string> = {};
  const current = o.current ?? OLD;
  if (current) annotations['machineconfiguration.openshift.io/currentConfig'] = current;
  annotations['machineconfiguration.openshift.io/desiredConfig'] = o.desired ?? current;
  annotations['machineconfiguration.openshift.io/state'] = o.state ?? 'Done';
  if (o.reason) annotations['machineconfiguration.openshift.io/reason'] = o.reason;
  return {
    metadata: {
      name,
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + (o.age ?? 0) * 60_000).toISOString(),
      labels: { 'node-role.kubernetes.io/worker': '', ...(o.zone !== undefined ? { 'topology.kubernetes.io/zone': o.zone } : {}), ...o.labels },
      annotations,
    },
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

function pool(name: string, spec: Partial<MachineConfigPool['spec']> = {}): MachineConfigPool {
  return { metadata: { name, generation: 2 }, spec: { nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${name}`]: '' } }, configuration: { name: NEW }, ...spec } };
}

const picked = (p: MachineConfigPool, nodes: NodeView[]) => chooseCandidates(p, nodes, NEW).nodes.map((n) => n.metadata.name);

test('membership: master wins, custom wins over worker, two custom pools is a conflict, empty selector selects nothing', () => {
  const pools = [pool('master'), pool('worker'), pool('infra'), pool('gpu'), pool('empty', { nodeSelector: {} })];
  const nodes = [
    node('w1'),
    node('i1', { labels: { 'node-role.kubernetes.io/infra': '' } }),
    node('m1', { labels: { 'node-role.kubernetes.io/master': '', 'node-role.kubernetes.io/infra': '' } }),
    node('x1', { labels: { 'node-role.kubernetes.io/infra': '', 'node-role.kubernetes.io/gpu': '' } }),
  ];
  const { members, conflicts } = poolMembership(pools, nodes);
  const names = (p: string) => members.get(p)!.map((n) => n.metadata.name);
  assert.deepEqual(names('master'), ['m1']);
  assert.deepEqual(names('worker'), ['w1']);
  assert.deepEqual(names('infra'), ['i1']);
  assert.deepEqual(names('gpu'), []);
  assert.deepEqual(names('empty'), []);
  assert.deepEqual([...conflicts], [['x1', ['gpu', 'infra']]]);
});

test('maxUnavailable: int or percent of the pool, rounded down, at least 1, default 1', () => {
  const rows: [number | string | undefined, number, number][] = [
    [undefined, 10, 1], [1, 10, 1], [2, 10, 2], [0, 10, 1], ['30%', 10, 3], ['30%', 7, 2], ['30%', 3, 1], ['10%', 5, 1], ['100%', 4, 4], ['3', 10, 3],
  ];
  for (const [value, total, want] of rows) assert.equal(maxUnavailableCount(value, total), want, `${value} of ${total}`);
  assert.throws(() => maxUnavailableCount('lots', 3), /percentage like "30%"/);
  assert.throws(() => maxUnavailableCount(-1, 3), /non-negative/);
});

test('candidates for maxUnavailable 1 / 2 / 30%: oldest first, never more than capacity', () => {
  const ten = Array.from({ length: 10 }, (_, i) => node(`n${i}`, { age: 10 - i }));
  assert.deepEqual(picked(pool('worker'), ten), ['n9']);
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 2 }), ten), ['n9', 'n8']);
  assert.deepEqual(picked(pool('worker', { maxUnavailable: '30%' }), ten), ['n9', 'n8', 'n7']);

  // Two already updating (desired=NEW, not Done yet): with 30% (3) one more may go.
  const midway = ten.map((n, i) => (i >= 8 ? node(n.metadata.name!, { age: 10 - i, desired: NEW, state: 'Working' }) : n));
  assert.deepEqual(picked(pool('worker', { maxUnavailable: '30%' }), midway), ['n7']);
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 2 }), midway), []);
  assert.match(chooseCandidates(pool('worker', { maxUnavailable: 2 }), midway, NEW).reason!, /2 of at most 2 nodes unavailable \(n8, n9\)/);

  // Nodes done with NEW no longer count; nodes already at NEW are never candidates.
  const done = ten.map((n, i) => (i >= 8 ? node(n.metadata.name!, { age: 10 - i, current: NEW }) : n));
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 2 }), done), ['n7', 'n6']);

  // A node that is not Ready takes a slot; a NotReady node still on OLD is retargeted at once.
  const sick = ten.map((n, i) => (i === 0 ? node('n0', { age: 10, ready: false }) : n));
  assert.deepEqual(picked(pool('worker'), sick), ['n0']);
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 2 }), sick), ['n0', 'n9']);
  // A cordoned node at NEW and a degraded one at NEW take the slots; nothing else moves.
  const blocked = [...ten.slice(0, 8), node('n8', { current: NEW, unschedulable: true }), node('n9', { desired: NEW, state: 'Degraded' })];
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 2 }), blocked), []);
  // A node no daemon has configured yet (no annotations) is down already and gets the target.
  assert.deepEqual(picked(pool('worker'), [node('fresh', { current: '', state: '' }), node('old')]), ['fresh']);
});

test('zone ordering: one pick at a time from the zone with fewest unavailable, then by zone name, oldest first', () => {
  const nodes = [
    node('a1', { zone: 'a', age: 1 }), node('a2', { zone: 'a', age: 2 }), node('a3', { zone: 'a', age: 3 }),
    node('b1', { zone: 'b', age: 5 }), node('b2', { zone: 'b', age: 4 }),
    node('c1', { zone: 'c', age: 0 }),
  ];
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 4 }), nodes), ['a1', 'b2', 'c1', 'a2']);
  // Zone a already has a node down (updating): zones b and c go first.
  const aDown = nodes.map((n) => (n.metadata.name === 'a3' ? node('a3', { zone: 'a', age: 3, desired: NEW, state: 'Working' }) : n));
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 3 }), aDown), ['b2', 'c1']);
  // Nodes without a zone form the zone "" (sorted first on ties).
  assert.deepEqual(picked(pool('worker', { maxUnavailable: 2 }), [node('z1', { zone: 'z' }), node('nozone', { age: 9 })]), ['nozone', 'z1']);
});

test('paused pools choose nothing', () => {
  const nodes = [node('n1'), node('n2')];
  const choice = chooseCandidates(pool('worker', { paused: true, maxUnavailable: 2 }), nodes, NEW);
  assert.deepEqual(choice.nodes, []);
  assert.equal(choice.reason, `Pool is paused; will not update to ${NEW}`);
});

test('pool status arithmetic and conditions', () => {
  const now = new Date('2024-02-01T00:00:00Z');
  const nowText = '2024-02-01T00:00:00Z';
  const cond = (s: ReturnType<typeof computePoolStatus>, type: string) => s.conditions!.find((c) => c.type === type)!;
  const rows: { name: string; nodes: NodeView[]; paused?: boolean; renderError?: string; want: [number, number, number, number, number]; updated: string; updating: string; degraded: string; nodeDegraded: string; message?: [string, RegExp] }[] = [
    { name: 'all updated', nodes: [node('a', { current: NEW }), node('b', { current: NEW })], want: [2, 2, 2, 0, 0], updated: 'True', updating: 'False', degraded: 'False', nodeDegraded: 'False', message: ['Updated', new RegExp(`All nodes are updated with MachineConfig ${NEW}`)] },
    { name: 'one updating', nodes: [node('a', { current: NEW }), node('b', { desired: NEW, state: 'Working' }), node('c')], want: [3, 1, 1, 1, 0], updated: 'False', updating: 'True', degraded: 'False', nodeDegraded: 'False', message: ['Updating', /1 of 3 nodes updated to MachineConfig rendered-worker-new; waiting for b, c/] },
    { name: 'updated but not ready', nodes: [node('a', { current: NEW, ready: false }), node('b', { current: NEW })], want: [2, 2, 1, 1, 0], updated: 'False', updating: 'True', degraded: 'False', nodeDegraded: 'False' },
    { name: 'degraded node', nodes: [node('a', { current: NEW }), node('b', { desired: NEW, state: 'Degraded', reason: 'failed to drain node b' }), node('c', { state: 'Unreconcilable' })], want: [3, 1, 1, 2, 2], updated: 'False', updating: 'True', degraded: 'True', nodeDegraded: 'True', message: ['NodeDegraded', /Node b is reporting: "failed to drain node b", Node c is reporting: "Unreconcilable"/] },
    { name: 'paused', paused: true, nodes: [node('a')], want: [1, 0, 0, 0, 0], updated: 'False', updating: 'False', degraded: 'False', nodeDegraded: 'False', message: ['Updating', /Pool is paused; will not update to rendered-worker-new/] },
    { name: 'render failure', renderError: 'MachineConfig 50-bad is invalid: x', nodes: [node('a', { current: NEW })], want: [1, 1, 1, 0, 0], updated: 'True', updating: 'False', degraded: 'True', nodeDegraded: 'False', message: ['RenderDegraded', /Failed to render configuration for pool worker: MachineConfig 50-bad is invalid/] },
    { name: 'empty pool', nodes: [], want: [0, 0, 0, 0, 0], updated: 'True', updating: 'False', degraded: 'False', nodeDegraded: 'False' },
  ];
  for (const row of rows) {
    const p = pool('worker', { paused: row.paused });
    // A render failure is on the pool as the render controller writes it.
    if (row.renderError) p.status = { conditions: [{ type: 'RenderDegraded', status: 'True', reason: 'RenderFailed', message: renderFailureMessage('worker', row.renderError) }] };
    const s = computePoolStatus({ pool: p, nodes: row.nodes, target: NEW, now });
    assert.deepEqual([s.machineCount, s.updatedMachineCount, s.readyMachineCount, s.unavailableMachineCount, s.degradedMachineCount], row.want, row.name);
    assert.equal(cond(s, 'Updated').status, row.updated, `${row.name}: Updated`);
    assert.equal(cond(s, 'Updating').status, row.updating, `${row.name}: Updating`);
    assert.equal(cond(s, 'Degraded').status, row.degraded, `${row.name}: Degraded`);
    assert.equal(cond(s, 'NodeDegraded').status, row.nodeDegraded, `${row.name}: NodeDegraded`);
    if (row.message) assert.match(cond(s, row.message[0]).message!, row.message[1], row.name);
    assert.equal(s.observedGeneration, 2);
    assert.deepEqual(s.configuration, row.updated === 'True' ? { name: NEW } : undefined, `${row.name}: status.configuration follows spec only when updated`);
  }
  const bad = computePoolStatus({ pool: pool('worker'), nodes: [node('a', { current: NEW })], target: NEW, specError: 'pool worker: spec.maxUnavailable must be an integer or a percentage like "30%", not "lots"', now });
  assert.deepEqual([cond(bad, 'Degraded').status, cond(bad, 'Degraded').reason], ['True', 'InvalidSpec']);
  assert.match(cond(bad, 'Degraded').message!, /maxUnavailable/);
  const conflicted = computePoolStatus({ pool: pool('infra'), nodes: [], target: NEW, conflicts: ['x1'], now });
  assert.equal(cond(conflicted, 'NodeDegraded').status, 'True');
  assert.match(cond(conflicted, 'NodeDegraded').message!, /Node x1 belongs to more than one custom pool; it is in none/);
  // lastTransitionTime is kept while a condition's status holds.
  const p = pool('worker');
  p.status = { conditions: [{ type: 'Updated', status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' }, { type: 'Updating', status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' }] };
  const s = computePoolStatus({ pool: p, nodes: [node('a', { current: NEW })], target: NEW, now });
  assert.equal(cond(s, 'Updated').lastTransitionTime, '2020-01-01T00:00:00Z');
  assert.equal(cond(s, 'Updating').lastTransitionTime, nowText);
});

test('UpdateInProgress taint: on nodes not yet targeted, off targeted ones, untouched for paused pools', () => {
  const tainted = (n: NodeView) => ({ ...n, spec: { taints: [{ key: 'other', effect: 'NoSchedule' }, { key: 'UpdateInProgress', effect: 'PreferNoSchedule' }] } });
  const nodes = [node('old'), tainted(node('old-tainted')), node('targeted', { desired: NEW, state: 'Working' }), tainted(node('targeted-tainted', { desired: NEW })), node('done', { current: NEW })];
  assert.deepEqual(updateInProgressTaintChanges(pool('worker'), nodes, NEW), { add: ['old'], remove: ['targeted-tainted'] });
  assert.deepEqual(updateInProgressTaintChanges(pool('worker', { paused: true }), nodes, NEW), { add: [], remove: [] });
  assert.deepEqual(updateInProgressTaintChanges(pool('worker'), nodes, ''), { add: [], remove: [] });
});
