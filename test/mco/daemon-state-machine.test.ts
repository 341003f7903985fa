// The daemon's update loop (src/mco/daemon/state-machine.ts): one row per transition, each from
// the annotations, disk records and boot the daemon would observe at that point.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextStep, type Observation } from '../../src/mco/daemon/state-machine.js';

const BOOT = 'boot-1';
const base = (o: Partial<Observation> = {}, node: Observation['node'] = {}): Observation => ({
  node: { currentConfig: 'r1', desiredConfig: 'r1', state: 'Done', ...node }, bootId: BOOT, forceFile: false, ...o,
});
const rebootPlan = { reboot: true, drain: true, postActions: [], reasons: [] };
const noRebootPlan = { reboot: false, drain: false, postActions: [], reasons: [] };

test('nextStep: one row per transition of the state machine', () => {
  const rows: { name: string; o: Observation; want: Record<string, unknown> }[] = [
    { name: 'unseeded node with node-annotations.json: seed', o: { node: {}, bootId: BOOT, forceFile: false, firstBoot: { currentConfig: 'r0', desiredConfig: 'r0', state: 'Done' } }, want: { kind: 'seed' } },
    { name: 'unseeded node without the file: wait', o: { node: {}, bootId: BOOT, forceFile: false }, want: { kind: 'wait' } },
    { name: 'steady and valid: idle', o: base(), want: { kind: 'idle' } },
    { name: 'steady, drifted: Degraded with ConfigDriftDetected', o: base({ validationError: 'content mismatch for file "/etc/a"' }), want: { kind: 'set-state', state: 'Degraded', reason: 'unexpected on-disk state validating against r1: content mismatch for file "/etc/a"', event: { reason: 'ConfigDriftDetected', type: 'Warning' } } },
    { name: 'drift already reported: wait', o: base({ validationError: 'x' }, { state: 'Degraded', reason: 'unexpected on-disk state validating against r1: x' }), want: { kind: 'wait' } },
    { name: 'drift repaired: Done', o: base({}, { state: 'Degraded', reason: 'unexpected on-disk state validating against r1: x' }), want: { kind: 'set-state', state: 'Done', reason: '' } },
    { name: 'new desired config: Working first', o: base({ plan: rebootPlan }, { desiredConfig: 'r2' }), want: { kind: 'set-state', state: 'Working' } },
    { name: 'unreconcilable: say why, write nothing', o: base({ unreconcilable: 'cannot' }, { desiredConfig: 'r2', state: 'Working' }), want: { kind: 'set-state', state: 'Unreconcilable', reason: 'cannot' } },
    { name: 'unreconcilable already said: wait', o: base({ unreconcilable: 'cannot' }, { desiredConfig: 'r2', state: 'Unreconcilable', reason: 'cannot' }), want: { kind: 'wait' } },
    { name: 'Working, plan drains: request the drain', o: base({ plan: rebootPlan }, { desiredConfig: 'r2', state: 'Working' }), want: { kind: 'request-drain', value: 'drain-r2' } },
    { name: 'drain requested, not answered: wait', o: base({ plan: rebootPlan }, { desiredConfig: 'r2', state: 'Working', desiredDrain: 'drain-r2', lastAppliedDrain: 'uncordon-r1' }), want: { kind: 'wait' } },
    { name: 'drain unanswered past the timeout: Degraded, saying what blocks', o: base({ plan: rebootPlan, drainTimedOut: 'failed to drain node: w after 1 hour: error when evicting pods: default/p: budget' }, { desiredConfig: 'r2', state: 'Working', desiredDrain: 'drain-r2', lastAppliedDrain: 'uncordon-r1' }), want: { kind: 'set-state', state: 'Degraded', reason: 'failed to drain node: w after 1 hour: error when evicting pods: default/p: budget', event: { reason: 'FailedToDrain', type: 'Warning' } } },
    { name: 'drain timeout already said: wait for the drain', o: base({ plan: rebootPlan, drainTimedOut: 'failed to drain' }, { desiredConfig: 'r2', state: 'Degraded', reason: 'failed to drain', desiredDrain: 'drain-r2', lastAppliedDrain: 'uncordon-r1' }), want: { kind: 'wait' } },
    { name: 'drained at last after a timeout: Working again', o: base({ plan: rebootPlan }, { desiredConfig: 'r2', state: 'Degraded', reason: 'failed to drain', desiredDrain: 'drain-r2', lastAppliedDrain: 'drain-r2' }), want: { kind: 'set-state', state: 'Working', reason: '' } },
    { name: 'drained: write', o: base({ plan: rebootPlan }, { desiredConfig: 'r2', state: 'Working', desiredDrain: 'drain-r2', lastAppliedDrain: 'drain-r2' }), want: { kind: 'write' } },
    { name: 'no drain needed: write at once', o: base({ plan: noRebootPlan }, { desiredConfig: 'r2', state: 'Working' }), want: { kind: 'write' } },
    { name: 'write failed earlier (Degraded): Working again, so it is retried', o: base({ plan: rebootPlan }, { desiredConfig: 'r2', state: 'Degraded', reason: 'failed' }), want: { kind: 'set-state', state: 'Working' } },
    { name: 'pending reboot in the same boot: reboot', o: base({ pending: { config: 'r2', bootId: BOOT, reboot: true } }, { desiredConfig: 'r2', state: 'Working' }), want: { kind: 'reboot' } },
    { name: 'rebooted, disk wrong: Degraded', o: base({ bootId: 'boot-2', pending: { config: 'r2', bootId: BOOT, reboot: true }, validationError: 'content mismatch for file "/etc/a"' }, { desiredConfig: 'r2', state: 'Rebooting' }), want: { kind: 'set-state', state: 'Degraded', reason: 'unexpected on-disk state validating against r2: content mismatch for file "/etc/a"' } },
    { name: 'rebooted, disk wrong, forcefile: skip validation', o: base({ bootId: 'boot-2', forceFile: true, pending: { config: 'r2', bootId: BOOT, reboot: true }, validationError: 'x' }, { desiredConfig: 'r2', state: 'Degraded' }), want: { kind: 'request-drain', value: 'uncordon-r2' } },
    { name: 'forced update after boot: validation skipped once', o: base({ bootId: 'boot-2', pending: { config: 'r1', bootId: BOOT, reboot: true, skipValidation: true }, validationError: 'x' }, { state: 'Rebooting' }), want: { kind: 'request-drain', value: 'uncordon-r1' } },
    { name: 'rebooted and valid: uncordon', o: base({ bootId: 'boot-2', pending: { config: 'r2', bootId: BOOT, reboot: true } }, { desiredConfig: 'r2', state: 'Rebooting', desiredDrain: 'drain-r2', lastAppliedDrain: 'drain-r2' }), want: { kind: 'request-drain', value: 'uncordon-r2' } },
    { name: 'uncordon requested: wait', o: base({ bootId: 'boot-2', pending: { config: 'r2', bootId: BOOT, reboot: true } }, { desiredConfig: 'r2', desiredDrain: 'uncordon-r2', lastAppliedDrain: 'drain-r2' }), want: { kind: 'wait' } },
    { name: 'uncordoned: complete', o: base({ bootId: 'boot-2', pending: { config: 'r2', bootId: BOOT, reboot: true } }, { desiredConfig: 'r2', desiredDrain: 'uncordon-r2', lastAppliedDrain: 'uncordon-r2' }), want: { kind: 'complete', config: 'r2' } },
    { name: 'rebootless write: validate in the same boot, then uncordon', o: base({ pending: { config: 'r2', bootId: BOOT, reboot: false } }, { desiredConfig: 'r2', state: 'Working' }), want: { kind: 'request-drain', value: 'uncordon-r2' } },
    { name: 'forcefile, nothing pending: force', o: base({ forceFile: true }, { state: 'Degraded', reason: 'x' }), want: { kind: 'force' } },
  ];
  for (const row of rows) {
    const step = nextStep(row.o) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(row.want)) assert.deepEqual(step[k], v, `${row.name}: ${k} of ${JSON.stringify(step)}`);
  }
});
