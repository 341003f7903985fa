// The CVO's status computation, pure: a ClusterVersion status, a pass's result (errors with
// their effects) and the time → conditions and history. Table-tested over the cases OpenShift's
// CVO distinguishes: completed, waiting on operators (none), slow operators (30 minutes; 90 for
// machine-config), Degraded tolerated then failing (fail-after-interval), reported and failing
// errors, and Reconciling where every error fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { UpdateError, type UpdateEffect } from '../../src/cvo/errors.js';
import { acceptedStatus, defaultTimers, refusedStatus, syncStatus, upgradeableStatus, type SyncResult } from '../../src/cvo/status.js';
import type { GraphMode } from '../../src/cvo/task-graph.js';

const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const minutes = (n: number) => n * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const IMAGE = 'bosun.local/release@sha256:' + 'b'.repeat(64);
const OLD = 'bosun.local/release@sha256:' + 'a'.repeat(64);

/** A status mid-update from 1.0.0 to 1.0.1, the update started at t0. */
const updating = {
  availableUpdates: null,
  history: [
    { state: 'Partial', startedTime: iso(t0), completionTime: null, version: '1.0.1', image: IMAGE, verified: false },
    { state: 'Completed', startedTime: iso(t0 - minutes(600)), completionTime: iso(t0 - minutes(590)), version: '1.0.0', image: OLD, verified: false },
  ],
  conditions: [
    { type: 'Available', status: 'True', reason: '', message: 'Done applying 1.0.0', lastTransitionTime: iso(t0 - minutes(590)) },
    { type: 'Failing', status: 'False', reason: '', message: '', lastTransitionTime: iso(t0 - minutes(590)) },
  ],
};
/** A status while installing (nothing Completed yet). */
const installing = { availableUpdates: null, history: [{ ...updating.history[0] }], conditions: [] };

const gate = (operator: string, reason: string, effect: UpdateEffect) => new UpdateError({ reason, message: `Cluster operator ${operator}: ${reason}`, effect, operator });
const failure = (reason: string) => new UpdateError({ reason, message: `Could not update configmap "x": ${reason}`, effect: 'fail' });
const result = (mode: GraphMode, errors: UpdateError[]): SyncResult => ({ mode, version: '1.0.1', image: IMAGE, done: 3, total: 10, errors });
const cond = (s: any, type: string) => s.conditions.find((c: any) => c.type === type);

interface Case {
  name: string;
  status?: any;
  mode?: GraphMode;
  errors: UpdateError[];
  at: number;
  verdict: 'completed' | 'waiting' | 'failing';
  failing: [string, string, string | RegExp];
  progressing?: [string, string | RegExp];
  available?: string;
}

const cases: Case[] = [
  { name: 'no errors: completed', errors: [], at: t0 + 1000, verdict: 'completed', failing: ['False', '', ''], progressing: ['False', 'Cluster version is 1.0.1'], available: 'True' },
  {
    name: 'operator updating: waiting, not failing',
    errors: [gate('alpha', 'ClusterOperatorUpdating', 'none')],
    at: t0 + minutes(29),
    verdict: 'waiting',
    failing: ['False', '', ''],
    progressing: ['True', 'Working towards 1.0.1: 3 of 10 done (30% complete), waiting on alpha'],
  },
  {
    name: 'operator updating over 30 minutes: SlowClusterOperator',
    errors: [gate('alpha', 'ClusterOperatorUpdating', 'none')],
    at: t0 + minutes(31),
    verdict: 'waiting',
    failing: ['Unknown', 'SlowClusterOperator', 'waiting on alpha over 30 minutes which is longer than expected'],
  },
  {
    name: 'machine-config gets 90 minutes',
    errors: [gate('machine-config', 'ClusterOperatorUpdating', 'none')],
    at: t0 + minutes(60),
    verdict: 'waiting',
    failing: ['False', '', ''],
  },
  {
    name: 'machine-config over 90 minutes',
    errors: [gate('machine-config', 'ClusterOperatorUpdating', 'none')],
    at: t0 + minutes(91),
    verdict: 'waiting',
    failing: ['Unknown', 'SlowClusterOperator', 'waiting on machine-config over 90 minutes which is longer than expected'],
  },
  {
    name: 'both slow',
    errors: [gate('machine-config', 'ClusterOperatorUpdating', 'none'), gate('alpha', 'ClusterOperatorNotAvailable', 'none')],
    at: t0 + minutes(95),
    verdict: 'waiting',
    failing: ['Unknown', 'SlowClusterOperator', 'waiting on alpha over 30 minutes and machine-config over 90 minutes which is longer than expected'],
    progressing: ['True', /waiting on alpha, machine-config$/],
  },
  {
    name: 'Degraded within 40 minutes: tolerated',
    errors: [gate('alpha', 'ClusterOperatorDegraded', 'fail-after-interval')],
    at: t0 + minutes(39),
    verdict: 'waiting',
    failing: ['False', '', ''],
    progressing: ['True', /waiting on alpha$/],
  },
  {
    name: 'Degraded past 40 minutes: failing',
    errors: [gate('alpha', 'ClusterOperatorDegraded', 'fail-after-interval')],
    at: t0 + minutes(41),
    verdict: 'failing',
    failing: ['True', 'ClusterOperatorDegraded', 'Cluster operator alpha: ClusterOperatorDegraded'],
    progressing: ['True', 'Unable to apply 1.0.1: Cluster operator alpha: ClusterOperatorDegraded'],
    available: 'True',
  },
  {
    name: 'a failure beside a wait: the failure alone is reported',
    errors: [gate('alpha', 'ClusterOperatorUpdating', 'none'), failure('UpdatePayloadResourceInvalid')],
    at: t0 + minutes(1),
    verdict: 'failing',
    failing: ['True', 'UpdatePayloadResourceInvalid', 'Could not update configmap "x": UpdatePayloadResourceInvalid'],
  },
  {
    name: 'several failures',
    errors: [failure('UpdatePayloadResourceInvalid'), failure('UpdatePayloadResourceConflict')],
    at: t0 + minutes(1),
    verdict: 'failing',
    failing: ['True', 'UpdatePayloadResourceInvalid', /^Multiple errors are preventing progress:\n\* .*Invalid\n\* .*Conflict$/],
  },
  {
    name: 'installing: Degraded is reported, the work still progressing, not Available',
    status: installing,
    mode: 'Initializing',
    errors: [gate('alpha', 'ClusterOperatorDegraded', 'report')],
    at: t0 + minutes(1),
    verdict: 'failing',
    failing: ['True', 'ClusterOperatorDegraded', 'Cluster operator alpha: ClusterOperatorDegraded'],
    progressing: ['True', 'Working towards 1.0.1: 3 of 10 done (30% complete)'],
    available: 'False',
  },
  {
    name: 'reconciling: a wait is a failure, Progressing untouched',
    mode: 'Reconciling',
    errors: [gate('alpha', 'ClusterOperatorUpdating', 'none')],
    at: t0 + minutes(1),
    verdict: 'failing',
    failing: ['True', 'ClusterOperatorUpdating', 'Cluster operator alpha: ClusterOperatorUpdating'],
    available: 'True',
  },
];

for (const c of cases) {
  test(`sync status — ${c.name}`, () => {
    const before = structuredClone(c.status ?? updating);
    const out = syncStatus(before, result(c.mode ?? 'Updating', c.errors), c.at);
    assert.deepEqual(before, c.status ?? updating, 'the input is not modified');
    assert.equal(out.verdict, c.verdict);
    const failing = cond(out.status, 'Failing');
    assert.equal(failing.status, c.failing[0]);
    assert.equal(failing.reason, c.failing[1]);
    if (typeof c.failing[2] === 'string') assert.equal(failing.message, c.failing[2]);
    else assert.match(failing.message, c.failing[2]);
    if (c.progressing) {
      assert.equal(cond(out.status, 'Progressing').status, c.progressing[0]);
      if (typeof c.progressing[1] === 'string') assert.equal(cond(out.status, 'Progressing').message, c.progressing[1]);
      else assert.match(cond(out.status, 'Progressing').message, c.progressing[1]);
    } else if (c.mode === 'Reconciling') assert.equal(cond(out.status, 'Progressing'), undefined);
    if (c.available) assert.equal(cond(out.status, 'Available').status, c.available);
  });
}

test('sync status — completed closes the history entry at that time; Failing keeps its transition time while False', () => {
  const out = syncStatus(structuredClone(updating), result('Updating', []), t0 + minutes(5));
  assert.deepEqual(out.status.history![0], { ...updating.history[0], state: 'Completed', completionTime: iso(t0 + minutes(5)) });
  assert.equal(cond(out.status, 'Failing').lastTransitionTime, iso(t0 - minutes(590)));
  assert.equal(cond(out.status, 'Progressing').lastTransitionTime, iso(t0 + minutes(5)));
});

test('sync status — time counts from the entry of this release, not an older one', () => {
  // The Partial entry for IMAGE is not written yet: waiting is not slow however old history is.
  const stale = { ...structuredClone(updating), history: [updating.history[1]] };
  const out = syncStatus(stale, result('Updating', [gate('alpha', 'ClusterOperatorUpdating', 'none')]), t0 + minutes(600));
  assert.equal(cond(out.status, 'Failing').status, 'False');
});

test('sync status — custom timers', () => {
  const out = syncStatus(structuredClone(updating), result('Updating', [gate('alpha', 'ClusterOperatorUpdating', 'none')]), t0 + 7000, { ...defaultTimers, slowOperatorMs: 6000 });
  assert.equal(cond(out.status, 'Failing').message, 'waiting on alpha over 6 seconds which is longer than expected');
});

test('accepted and refused releases', () => {
  const accepted = acceptedStatus({ availableUpdates: null, history: [updating.history[1]], conditions: [] }, 3, { version: '1.0.1', image: IMAGE, verified: true, message: 'Payload loaded version="1.0.1"' }, t0);
  assert.deepEqual(accepted.history!.map((h: any) => [h.version, h.state, h.startedTime]), [['1.0.1', 'Partial', iso(t0)], ['1.0.0', 'Completed', updating.history[1].startedTime]]);
  assert.deepEqual(accepted.desired, { version: '1.0.1', image: IMAGE });
  assert.equal(accepted.observedGeneration, 3);
  assert.equal(cond(accepted, 'ReleaseAccepted').reason, 'PayloadLoaded');
  assert.match(accepted.versionHash!, /^[\w-]{11}$/);
  // Accepting it again adds nothing; another release ends the Partial one now.
  assert.deepEqual(acceptedStatus(accepted, 3, { version: '1.0.1', image: IMAGE, verified: true, message: 'Payload loaded version="1.0.1"' }, t0 + 5).history, accepted.history);
  const next = acceptedStatus(accepted, 4, { version: '1.0.2', image: OLD.replace('a', 'c'), verified: false, acceptedRisks: 'forced', message: 'm' }, t0 + minutes(2));
  assert.equal(next.history![1].completionTime, iso(t0 + minutes(2)));
  assert.equal(next.history![0].acceptedRisks, 'forced');

  const refused = refusedStatus(accepted, 5, 'RetrievePayload', 'Retrieving payload failed', t0 + minutes(3));
  assert.equal(cond(refused, 'ReleaseAccepted').status, 'False');
  assert.equal(cond(refused, 'ReleaseAccepted').lastTransitionTime, iso(t0 + minutes(3)));
  assert.deepEqual(refused.history, accepted.history);
});

test('Upgradeable aggregates the operators that say False', () => {
  const co = (name: string, status?: string, reason?: string, message?: string) =>
    ({ metadata: { name }, status: { conditions: status ? [{ type: 'Upgradeable', status, reason, message }] : [] } }) as unknown as api.ClusterOperator;
  assert.equal(cond(upgradeableStatus({ conditions: [{ type: 'Upgradeable', status: 'False', lastTransitionTime: iso(t0) }] }, [co('a', 'True'), co('b')], t0), 'Upgradeable'), undefined);
  const one = cond(upgradeableStatus({ conditions: [] }, [co('a', 'False', 'AdminAckRequired', 'ack it')], t0), 'Upgradeable');
  assert.deepEqual([one.status, one.reason, one.message], ['False', 'AdminAckRequired', 'Cluster operator a should not be upgraded between minor versions: ack it']);
  const two = cond(upgradeableStatus({ conditions: [] }, [co('a', 'False', 'R1', 'm1'), co('b', 'False', 'R2', 'm2')], t0), 'Upgradeable');
  assert.equal(two.reason, 'ClusterOperatorsNotUpgradeable');
  assert.equal(two.message, 'Multiple cluster operators should not be upgraded between minor versions:\n* Cluster operator a: R1: m1\n* Cluster operator b: R2: m2');
});
