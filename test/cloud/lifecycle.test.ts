// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The pure cores of the local cloud, as tables: which operation each state accepts and what it
// moves to, and how addresses are allocated around the ones held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocateAddress, newInstanceId } from '../../src/cloud/addresses.js';
import { CloudError } from '../../src/cloud/errors.js';
import { transition, type Operation } from '../../src/cloud/lifecycle.js';
import { INSTANCE_STATES, type InstanceState } from '../../src/cloud/types.js';

// [operation, state, next state | 'noop' | 'refused'] for every pair: EC2's answers.
const TABLE: [Operation, InstanceState, InstanceState | 'noop' | 'refused'][] = [
  ['start', 'pending', 'noop'], ['start', 'running', 'noop'], ['start', 'stopping', 'refused'], ['start', 'stopped', 'pending'], ['start', 'terminated', 'refused'],
  ['stop', 'pending', 'stopping'], ['stop', 'running', 'stopping'], ['stop', 'stopping', 'noop'], ['stop', 'stopped', 'noop'], ['stop', 'terminated', 'refused'],
  ['reboot', 'pending', 'refused'], ['reboot', 'running', 'running'], ['reboot', 'stopping', 'refused'], ['reboot', 'stopped', 'refused'], ['reboot', 'terminated', 'refused'],
  ['terminate', 'pending', 'terminated'], ['terminate', 'running', 'terminated'], ['terminate', 'stopping', 'terminated'], ['terminate', 'stopped', 'terminated'], ['terminate', 'terminated', 'noop'],
];

test('every operation in every state', () => {
  assert.equal(TABLE.length, 4 * INSTANCE_STATES.length, 'the table covers every pair');
  for (const [op, state, expected] of TABLE) {
    if (expected === 'refused') {
      assert.throws(() => transition(op, 'i-1', state), (e: CloudError) => e.status === 409 && e.code === 'IncorrectInstanceState' && e.message.includes(`cannot ${op} instance i-1: it is ${state}`), `${op} ${state}`);
    } else {
      assert.equal(transition(op, 'i-1', state), expected === 'noop' ? undefined : expected, `${op} ${state}`);
    }
  }
});

test('addresses: the first free from the start, wrapping, never one held; a full /24 is a 409', () => {
  const cases: [string[], number, string][] = [
    [[], 1, '10.0.0.1'],
    [['10.0.0.1', '10.0.0.2'], 1, '10.0.0.3'],
    [['10.0.0.2'], 1, '10.0.0.1'],
    [['10.0.0.200'], 200, '10.0.0.201'],
    [['10.0.0.254'], 254, '10.0.0.1'],
  ];
  for (const [held, start, expected] of cases) assert.equal(allocateAddress('10.0.0.', held, 'test', start), expected);
  const all = Array.from({ length: 254 }, (_, i) => `10.0.0.${i + 1}`);
  assert.throws(() => allocateAddress('10.0.0.', all, 'instances'), (e: CloudError) => e.status === 409 && /no free address left for instances/.test(e.message));
});

test('instance IDs are i- and 17 hex digits, and differ', () => {
  const ids = new Set(Array.from({ length: 1000 }, newInstanceId));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.match(id, /^i-[0-9a-f]{17}$/);
});
