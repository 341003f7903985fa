// The CSV phase rules (csv-phase.ts), one row per transition, and the install mode an
// OperatorGroup asks for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { type CsvObservation, installModeFor, nextCsvPhase, operatorGroupProblem } from '../../src/olm/csv-phase.js';

const present: api.RequirementStatus = { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', name: 'widgets.demo.bosun.io', status: 'Present', message: 'ok' };
const base: CsvObservation = { phase: '', requirements: [present], deployments: [{ name: 'op', state: 'available', message: 'available' }] };
const waiting = [{ name: 'op', state: 'waiting' as const, message: '0 of 1 replicas available' }];
const failed = [{ name: 'op', state: 'failed' as const, message: 'ReplicaSet "op-1" has timed out progressing.' }];

test('CSV phases: one row per transition', () => {
  const table: Array<[string, Partial<CsvObservation>, string, string, boolean]> = [
    ['replaced by a Succeeded CSV', { phase: 'Succeeded', replacedBy: { name: 'v2', succeeded: true } }, 'Deleting', 'Replaced', false],
    ['being replaced', { phase: 'Succeeded', replacedBy: { name: 'v2', succeeded: false } }, 'Replacing', 'BeingReplaced', false],
    ['group problem', { phase: 'Succeeded', groupProblem: { reason: 'TooManyOperatorGroups', message: 'x' } }, 'Failed', 'TooManyOperatorGroups', false],
    ['CRD missing', { requirements: [{ ...present, status: 'NotPresent' }] }, 'Pending', 'RequirementsNotMet', false],
    ['new, requirements met', {}, 'InstallReady', 'AllRequirementsMet', false],
    ['InstallReady', { phase: 'InstallReady' }, 'Installing', 'InstallWaiting', true],
    ['Installing, waiting', { phase: 'Installing', deployments: waiting }, 'Installing', 'InstallWaiting', true],
    ['Installing, past the deadline', { phase: 'Installing', deployments: failed }, 'Failed', 'InstallCheckFailed', true],
    ['Installing, available', { phase: 'Installing' }, 'Succeeded', 'InstallSucceeded', true],
    ['Succeeded, stays', { phase: 'Succeeded' }, 'Succeeded', 'InstallSucceeded', true],
    ['Succeeded, unhealthy', { phase: 'Succeeded', deployments: waiting }, 'Failed', 'ComponentUnhealthy', true],
    ['Failed for its Deployment, available again', { phase: 'Failed', reason: 'InstallCheckFailed' }, 'Succeeded', 'InstallSucceeded', true],
    ['Failed for its Deployment, still failing', { phase: 'Failed', reason: 'InstallCheckFailed', deployments: failed }, 'Failed', 'InstallCheckFailed', true],
    ['Failed for its group, fixed', { phase: 'Failed', reason: 'UnsupportedOperatorGroup' }, 'Pending', 'NeedsReinstall', false],
    ['Replacing whose replacement went away', { phase: 'Replacing' }, 'Pending', 'NeedsReinstall', false],
  ];
  for (const [what, change, phase, reason, install] of table) {
    const d = nextCsvPhase({ ...base, ...change });
    assert.deepEqual([d.phase, d.reason, d.install], [phase, reason, install], what);
    assert.equal(d.remove, phase === 'Deleting', what);
  }
});

test('install modes an OperatorGroup asks for, and the group problems', () => {
  assert.equal(installModeFor([''], 'ns'), 'AllNamespaces');
  assert.equal(installModeFor(['ns'], 'ns'), 'OwnNamespace');
  assert.equal(installModeFor(['other'], 'ns'), 'SingleNamespace');
  assert.equal(installModeFor(['a', 'b'], 'ns'), 'MultiNamespace');
  const csv = { metadata: { name: 'c', namespace: 'ns' }, spec: { displayName: 'c', install: { strategy: 'deployment' }, installModes: [{ type: 'OwnNamespace', supported: true }, { type: 'AllNamespaces', supported: false }] } } as api.ClusterServiceVersion;
  const group = (name: string, namespaces?: string[]) => ({ metadata: { name, namespace: 'ns' }, status: namespaces && { namespaces, lastUpdated: '' } }) as api.OperatorGroup;
  assert.equal(operatorGroupProblem(csv, [])?.reason, 'NoOperatorGroup');
  assert.equal(operatorGroupProblem(csv, [group('a', ['ns']), group('b', ['ns'])])?.reason, 'TooManyOperatorGroups');
  assert.equal(operatorGroupProblem(csv, [group('a')])?.reason, 'OperatorGroupNotReady');
  assert.equal(operatorGroupProblem(csv, [group('a', [''])])?.reason, 'UnsupportedOperatorGroup');
  assert.equal(operatorGroupProblem(csv, [group('a', ['ns'])]), undefined);
});
