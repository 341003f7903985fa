// PDB status for minAvailable/maxUnavailable (int and percent) and the eviction decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computePdbStatus, decideEviction, scaledValue, type ControllerScale, type Pdb, type Pod } from '../../src/apiserver/controllers/disruption.js';

const now = new Date('2026-01-01T00:00:00Z');
const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs1', controller: true };

function pod(name: string, ready = true, extra: Partial<Pod['metadata']> = {}, phase = 'Running'): Pod {
  return {
    metadata: { name, namespace: 'default', labels: { app: 'web' }, ownerReferences: [rs], ...extra },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function pdb(spec: Partial<Pdb['spec']>, status?: Pdb['status']): Pdb {
  return { metadata: { name: 'web', namespace: 'default', generation: 1 }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec }, status };
}

test('percentages round up', () => {
  assert.deepEqual([scaledValue('50%', 3), scaledValue('10%', 5), scaledValue(2, 5), scaledValue('0%', 4), scaledValue('100%', 3)], [2, 1, 2, 0, 3]);
  assert.throws(() => scaledValue('abc', 3), /IntOrString/);
});

test('PDB status from pods and their controllers', () => {
  const pods = [pod('a'), pod('b'), pod('c', false), pod('d', true, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    { ...pod('other'), metadata: { name: 'other', namespace: 'default', labels: { app: 'db' } } }];
  const scale5: ControllerScale = () => 5;
  const unknown: ControllerScale = () => undefined;
  // [spec, scale lookup, expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed]
  const table: [Partial<Pdb['spec']>, ControllerScale, number, number, number, number][] = [
    [{ minAvailable: 1 }, scale5, 4, 1, 2, 1],
    [{ minAvailable: 2 }, scale5, 4, 2, 2, 0],
    [{ minAvailable: '50%' }, scale5, 5, 3, 2, 0],
    [{ minAvailable: '20%' }, scale5, 5, 1, 2, 1],
    [{ minAvailable: '20%' }, unknown, 4, 1, 2, 1],
    [{ maxUnavailable: 1 }, scale5, 5, 4, 2, 0],
    [{ maxUnavailable: 3 }, scale5, 5, 2, 2, 0],
    [{ maxUnavailable: '70%' }, scale5, 5, 1, 2, 1],
    [{ maxUnavailable: 10 }, unknown, 4, 0, 2, 2],
    [{ minAvailable: 0, selector: { matchLabels: { app: 'none' } } }, scale5, 0, 0, 0, 0],
  ];
  for (const [spec, scaleOf, expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed] of table) {
    const s = computePdbStatus(pdb(spec), pods, scaleOf, now);
    assert.deepEqual({ expectedPods: s.expectedPods, desiredHealthy: s.desiredHealthy, currentHealthy: s.currentHealthy, disruptionsAllowed: s.disruptionsAllowed },
      { expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed }, JSON.stringify(spec));
    const c = s.conditions!.find((x) => x.type === 'DisruptionAllowed')!;
    assert.equal(c.reason, disruptionsAllowed > 0 ? 'SufficientPods' : 'InsufficientPods');
    assert.equal(c.status, disruptionsAllowed > 0 ? 'True' : 'False');
    assert.equal(s.observedGeneration, 1);
  }
});

test('recently disrupted pods do not count as healthy until they expire; transition time kept while unchanged', () => {
  const recent = new Date(now.getTime() - 30_000).toISOString();
  const old = new Date(now.getTime() - 300_000).toISOString();
  const p = pdb({ minAvailable: 1 }, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptedPods: { a: recent, b: old, gone: recent },
    conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' }] });
  const s = computePdbStatus(p, [pod('a'), pod('b'), pod('c')], () => 3, now);
  assert.deepEqual(s.disruptedPods, { a: recent });
  assert.equal(s.currentHealthy, 2);
  assert.equal(s.disruptionsAllowed, 1);
  assert.equal(s.conditions![0].lastTransitionTime, '2025-01-01T00:00:00Z');
});

test('eviction decisions', () => {
  const healthy = { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, observedGeneration: 1 };
  const exhausted = { ...healthy, disruptionsAllowed: 0, currentHealthy: 1 };

  assert.deepEqual(decideEviction(pod('a', true, {}, 'Succeeded'), [pdb({ minAvailable: 5 }, exhausted)], now), { action: 'delete' });
  assert.deepEqual(decideEviction(pod('a', false, {}, 'Pending'), [pdb({ minAvailable: 5 }, exhausted)], now), { action: 'delete' });
  assert.deepEqual(decideEviction(pod('a'), [], now), { action: 'delete' });

  const refused = decideEviction(pod('a'), [pdb({ minAvailable: 1 }, exhausted)], now);
  assert.equal(refused.action, 'refuse');
  if (refused.action === 'refuse') {
    assert.equal(refused.status.code, 429);
    assert.equal(refused.status.reason, 'TooManyRequests');
    assert.equal(refused.status.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(refused.status.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }]);
  }

  const stale = decideEviction(pod('a'), [{ ...pdb({ minAvailable: 1 }, healthy), metadata: { name: 'web', namespace: 'default', generation: 2 } }], now);
  assert.ok(stale.action === 'refuse' && stale.status.code === 429 && /still being processed/.test(stale.status.details.causes![0].message));

  const two = decideEviction(pod('a'), [pdb({ minAvailable: 1 }, healthy), { ...pdb({ minAvailable: 1 }, healthy), metadata: { name: 'x', namespace: 'default' } }], now);
  assert.ok(two.action === 'refuse' && two.status.code === 500 && /more than one PodDisruptionBudget/.test(two.status.message));

  const ok = decideEviction(pod('a'), [pdb({ minAvailable: 1 }, healthy)], now);
  assert.equal(ok.action, 'delete');
  if (ok.action === 'delete') {
    assert.equal(ok.pdb?.status.disruptionsAllowed, 0);
    assert.deepEqual(ok.pdb?.status.disruptedPods, { a: '2026-01-01T00:00:00Z' });
    assert.equal(ok.pdb?.status.conditions?.[0].reason, 'InsufficientPods');
  }
  // An unready pod goes without using the budget while the application is healthy enough.
  assert.deepEqual(decideEviction(pod('a', false), [pdb({ minAvailable: 1 }, { ...exhausted, currentHealthy: 1, desiredHealthy: 1 })], now), { action: 'delete' });
  assert.equal(decideEviction(pod('a', false), [pdb({ minAvailable: 2 }, { ...exhausted, currentHealthy: 1, desiredHealthy: 2 })], now).action, 'refuse');
  // A PDB in another namespace does not apply.
  assert.deepEqual(decideEviction(pod('a'), [{ ...pdb({ minAvailable: 1 }, exhausted), metadata: { name: 'web', namespace: 'other' } }], now), { action: 'delete' });
});
