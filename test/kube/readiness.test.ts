// One readiness answer per kind, from the condition its controller or agent writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conditionStatus, isClusterOperatorAvailable, isCrdEstablished, isMachineReady, isNodeReady, isPodReady, nodeReadyStatus } from '../../src/kube/readiness.js';

const withCondition = (type: string, status: string) => ({ status: { conditions: [{ type: 'Other', status: 'True' }, { type, status }] } });

test('each kind is ready only when its own condition is True', () => {
  const table: Array<[string, (o: ReturnType<typeof withCondition> | undefined) => boolean, string]> = [
    ['Node', isNodeReady, 'Ready'],
    ['Pod', isPodReady, 'Ready'],
    ['Machine', isMachineReady, 'Ready'],
    ['CustomResourceDefinition', isCrdEstablished, 'Established'],
    ['ClusterOperator', isClusterOperatorAvailable, 'Available'],
  ];
  for (const [kind, ready, type] of table) {
    assert.equal(ready(withCondition(type, 'True')), true, `${kind} ${type}=True`);
    for (const status of ['False', 'Unknown']) assert.equal(ready(withCondition(type, status)), false, `${kind} ${type}=${status}`);
    assert.equal(ready(withCondition('Other2', 'True')), false, `${kind} without ${type}`);
    assert.equal(ready(undefined), false, `no ${kind}`);
    assert.equal(ready({ status: {} } as never), false, `${kind} without conditions`);
  }
});

test("a Node's Ready status tells an unreachable node (Unknown) from a not-ready one", () => {
  assert.equal(nodeReadyStatus(withCondition('Ready', 'Unknown')), 'Unknown');
  assert.equal(nodeReadyStatus(withCondition('Ready', 'False')), 'False');
  assert.equal(nodeReadyStatus({}), undefined);
  assert.equal(conditionStatus(withCondition('Ready', 'True'), 'Other'), 'True');
});
