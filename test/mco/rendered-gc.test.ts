// Garbage collection of rendered configs (src/mco/controller/rendered-gc.ts): referenced configs
// are never collected; unreferenced ones after the grace period; other pools' configs untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planCollection, referencedConfigs } from '../../src/mco/controller/rendered-gc.js';
import type { MachineConfig, MachineConfigPool, NodeView } from '../../src/mco/controller/types.js';

const rendered = (name: string, pool: string): MachineConfig => ({
  metadata: { name, ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: pool, uid: pool }] },
  spec: {},
});
const pool = (name: string, spec?: string, status?: string): MachineConfigPool => ({
  metadata: { name }, spec: { configuration: spec ? { name: spec } : undefined }, status: status ? { configuration: { name: status } } : undefined,
});
const node = (current: string, desired = current): NodeView => ({
  metadata: { name: current, annotations: { 'machineconfiguration.openshift.io/currentConfig': current, 'machineconfiguration.openshift.io/desiredConfig': desired } },
});

test('referenced: pool spec and status, node current and desired', () => {
  const refs = referencedConfigs([pool('worker', 'rendered-worker-c', 'rendered-worker-b')], [node('rendered-worker-a', 'rendered-worker-c')]);
  assert.deepEqual([...refs].sort(), ['rendered-worker-a', 'rendered-worker-b', 'rendered-worker-c']);
});

test('unreferenced configs go after the grace period, referenced ones never, other pools untouched', () => {
  const configs = ['a', 'b', 'c', 'd'].map((x) => rendered(`rendered-worker-${x}`, 'worker'));
  configs.push(rendered('rendered-worker-gpu-a', 'worker-gpu'), { metadata: { name: '00-worker' }, spec: {} });
  const memory = new Map<string, number>();
  const refs = new Set(['rendered-worker-c', 'rendered-worker-a']);

  const first = planCollection('worker', configs, refs, memory, 1_000, 500);
  assert.deepEqual(first, { collect: [], recheckInMs: 500 });
  assert.deepEqual([...memory.keys()].sort(), ['rendered-worker-b', 'rendered-worker-d']);

  // b becomes referenced again (a node rolled back): its clock is forgotten.
  const later = planCollection('worker', configs, new Set([...refs, 'rendered-worker-b']), memory, 1_300, 500);
  assert.deepEqual(later, { collect: [], recheckInMs: 200 });
  assert.deepEqual([...memory.keys()], ['rendered-worker-d']);

  const due = planCollection('worker', configs, refs, memory, 1_500, 500);
  assert.deepEqual(due, { collect: ['rendered-worker-d'], recheckInMs: 500 }, 'd is due; b starts its grace again');
  assert.deepEqual(planCollection('worker', configs, new Set(configs.map((c) => c.metadata.name!)), memory, 9_000, 500), { collect: [] });
  assert.equal(memory.size, 0);
});
