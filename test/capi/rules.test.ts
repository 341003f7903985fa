// The pure cores of the Cluster API controllers, table-tested: a rolling step of a
// MachineDeployment (rollout.ts), whom a MachineSet deletes (machineset-scaling.ts), a health
// check's verdicts and remediation limit (health.ts), and a Machine's phase and conditions
// (machine-status.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeTarget, remediationAllowance } from '../../src/capi/health.js';
import { machineStatus } from '../../src/capi/machine-status.js';
import { machinesToDelete, remediationBudget } from '../../src/capi/machineset-scaling.js';
import { fenceposts, rollingStep, templateHash } from '../../src/capi/rollout.js';
import type * as api from '../../src/api/index.js';
import type { InfraMachine } from '../../src/capi/api.js';
import type { MachineObservation, MachineStatus } from '../../src/capi/machine-status.js';

type RollingUpdate = { maxSurge?: number | string; maxUnavailable?: number | string };
type Conditions = { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }[];

test('fenceposts: Cluster API defaults maxSurge 1 and maxUnavailable 0; percentages round surge up, unavailable down', () => {
  const md = (replicas: number, rollingUpdate?: RollingUpdate) => ({ spec: { replicas, rollout: rollingUpdate ? { strategy: { rollingUpdate } } : undefined } }) as api.MachineDeployment;
  const cases: [api.MachineDeployment, [number, number]][] = [
    [md(3), [1, 0]],
    [md(3, { maxSurge: 0, maxUnavailable: 0 }), [0, 1]],
    [md(10, { maxSurge: '25%', maxUnavailable: '25%' }), [3, 2]],
    [md(2, { maxSurge: 0, maxUnavailable: 5 }), [0, 2]],
  ];
  for (const [d, want] of cases) assert.deepEqual(fenceposts(d), want, JSON.stringify(d.spec));
});

test('rollingStep: grow the new set within the surge, shrink old sets within the availability floor', () => {
  const s = (name: string, replicas: number, available: number) => ({ name, replicas, available });
  const cases: { what: string; args: Parameters<typeof rollingStep>; want: Record<string, number> }[] = [
    { what: 'start: surge one', args: [2, 1, 0, s('new', 0, 0), [s('old', 2, 2)]], want: { new: 1 } },
    { what: 'new not available yet: nothing goes', args: [2, 1, 0, s('new', 1, 0), [s('old', 2, 2)]], want: {} },
    { what: 'new available: one old goes', args: [2, 1, 0, s('new', 1, 1), [s('old', 2, 2)]], want: { old: 1 } },
    { what: 'room again: new grows', args: [2, 1, 0, s('new', 1, 1), [s('old', 1, 1)]], want: { new: 2 } },
    { what: 'done: last old goes', args: [2, 1, 0, s('new', 2, 2), [s('old', 1, 1)]], want: { old: 0 } },
    { what: 'unavailable old machines go first, costing nothing', args: [3, 1, 0, s('new', 1, 1), [s('old', 3, 2)]], want: { old: 2 } },
    { what: 'an unavailable new machine holds the old ones', args: [3, 1, 0, s('new', 1, 0), [s('old', 3, 2)]], want: {} },
    { what: 'maxUnavailable 1, no surge: an old one goes at once', args: [2, 0, 1, s('new', 0, 0), [s('old', 2, 2)]], want: { old: 1 } },
    { what: 'scaled below the new set: it shrinks', args: [1, 1, 0, s('new', 3, 3), []], want: { new: 1 } },
    { what: 'oldest set shrinks first', args: [2, 1, 0, s('new', 2, 2), [s('a', 1, 1), s('b', 1, 1)]], want: { a: 0, b: 0 } },
  ];
  for (const { what, args, want } of cases) assert.deepEqual(Object.fromEntries(rollingStep(...args)), want, what);
});

test('templateHash: follows the machine spec, not template labels', () => {
  const md = (version: string, labels: Record<string, string> = {}) => ({ spec: { template: { metadata: { labels }, spec: { version } } } }) as api.MachineDeployment;
  assert.equal(templateHash(md('v1')), templateHash(md('v1', { extra: 'x' })));
  assert.notEqual(templateHash(md('v1')), templateHash(md('v2')));
  assert.match(templateHash(md('v1')), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
});

test('machinesToDelete: the delete-machine annotation, then unhealthy, then the deletion order', () => {
  const m = (name: string, created: string, o: { annotated?: boolean; ready?: boolean; failedCheck?: boolean } = {}) => ({
    metadata: { name, uid: name, creationTimestamp: created, annotations: o.annotated ? { 'cluster.x-k8s.io/delete-machine': '' } : {} },
    status: { nodeRef: { name }, conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }, ...(o.failedCheck ? [{ type: 'HealthCheckSucceeded', status: 'False' }] : [])] },
  }) as api.Machine;
  const old = m('old', '2026-01-01T00:00:00Z');
  const mid = m('mid', '2026-01-02T00:00:00Z');
  const young = m('young', '2026-01-03T00:00:00Z');
  const names = (list: api.Machine[]) => list.map((x) => x.metadata.name);
  assert.deepEqual(names(machinesToDelete([old, mid, young], 1, 'Oldest')), ['old']);
  assert.deepEqual(names(machinesToDelete([old, mid, young], 2, 'Newest')), ['young', 'mid']);
  assert.deepEqual(names(machinesToDelete([old, mid, young, m('marked', '2026-01-01T00:00:00Z', { annotated: true })], 1, 'Oldest')), ['marked']);
  assert.deepEqual(names(machinesToDelete([old, young, m('sick', '2026-01-04T00:00:00Z', { ready: false })], 1, 'Oldest')), ['sick']);
  assert.deepEqual(names(machinesToDelete([old, young, m('failed', '2026-01-04T00:00:00Z', { failedCheck: true }), m('sick', '2026-01-01T00:00:00Z', { ready: false })], 1, 'Oldest')), ['failed']);
  const random = names(machinesToDelete([old, mid, young], 2, 'Random'));
  assert.deepEqual(names(machinesToDelete([young, old, mid], 2, 'Random')), random, 'Random is stable across passes');
  assert.deepEqual(machinesToDelete([old], 0), []);
});

test('judgeTarget: annotation, deleted node, startup timeout, node conditions with their timeouts', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const check: api.MachineHealthCheck = { metadata: { name: 'check' }, spec: { clusterName: 'c', selector: {}, checks: { nodeStartupTimeoutSeconds: 300, unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: 60 }] } } };
  const machine = (o: { annotations?: Record<string, string>; nodeRef?: { name: string }; conditions?: Conditions } = {}) => ({ metadata: { name: 'm', creationTimestamp: '2026-01-01T00:00:00Z', annotations: o.annotations ?? {} }, status: { nodeRef: o.nodeRef, conditions: o.conditions ?? [] } }) as api.Machine;
  const node = (status: string, since: string) => ({ metadata: { name: 'n' }, status: { conditions: [{ type: 'Ready', status, lastTransitionTime: since }] } }) as api.Node;
  const cases: { what: string; args: [api.Machine, api.Node | undefined, api.MachineHealthCheck?]; want: Record<string, unknown> }[] = [
    { what: 'remediate annotation', args: [machine({ annotations: { 'cluster.x-k8s.io/remediate-machine': '' }, nodeRef: { name: 'n' } }), node('True', '2026-01-01T00:00:00Z')], want: { healthy: false, reason: 'HasRemediateAnnotation' } },
    { what: 'node gone', args: [machine({ nodeRef: { name: 'n' } }), undefined], want: { healthy: false, reason: 'NodeDeleted' } },
    { what: 'no node after the startup timeout', args: [machine(), undefined], want: { healthy: false, reason: 'NodeStartupTimeout' } },
    { what: 'no node, infrastructure ready recently: the timeout runs from then', args: [machine({ conditions: [{ type: 'InfrastructureReady', status: 'True', lastTransitionTime: '2026-01-01T00:09:00Z' }] }), undefined], want: { healthy: true, nextCheckMs: 240_000 } },
    { what: 'NotReady past its timeout', args: [machine({ nodeRef: { name: 'n' } }), node('False', '2026-01-01T00:08:00Z')], want: { healthy: false, reason: 'UnhealthyNode' } },
    { what: 'NotReady within its timeout: next check when it runs out', args: [machine({ nodeRef: { name: 'n' } }), node('False', '2026-01-01T00:09:30Z')], want: { healthy: true, nextCheckMs: 30_000 } },
    { what: 'Unknown is not in the checks', args: [machine({ nodeRef: { name: 'n' } }), node('Unknown', '2026-01-01T00:00:00Z')], want: { healthy: true, nextCheckMs: undefined } },
  ];
  for (const { what, args, want } of cases) {
    const verdict = judgeTarget(args[2] ?? check, args[0], args[1], now);
    assert.deepEqual({ healthy: verdict.healthy, ...(verdict.healthy ? { nextCheckMs: verdict.nextCheckMs } : { reason: verdict.reason }) }, want, what);
  }
  assert.deepEqual(judgeTarget({ spec: { checks: { nodeStartupTimeoutSeconds: 0 } } } as api.MachineHealthCheck, machine(), undefined, now), { healthy: true }, '0 disables the startup timeout');
});

test('remediationAllowance: unhealthyLessThanOrEqualTo (int or percent, default 100%) and unhealthyInRange', () => {
  const check = (triggerIf?: { unhealthyLessThanOrEqualTo?: number | string; unhealthyInRange?: string }) => ({ spec: { remediation: triggerIf ? { triggerIf } : undefined } }) as api.MachineHealthCheck;
  assert.deepEqual(remediationAllowance(check(), 3, 3), { allowed: true, remaining: 0 });
  assert.deepEqual(remediationAllowance(check({ unhealthyLessThanOrEqualTo: 1 }), 3, 1), { allowed: true, remaining: 0 });
  const refused = remediationAllowance(check({ unhealthyLessThanOrEqualTo: '40%' }), 5, 3);
  assert.equal(refused.allowed, false);
  assert.equal(refused.message, 'Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 5, unhealthy: 3, maxUnhealthy: 40%)');
  assert.deepEqual(remediationAllowance(check({ unhealthyInRange: '[2-4]' }), 10, 3), { allowed: true, remaining: 1 });
  assert.equal(remediationAllowance(check({ unhealthyInRange: '[2-4]' }), 10, 1).allowed, false);
});

test('machineStatus: the phase follows bootstrap, infrastructure and node; Failed when provisioned infrastructure vanishes', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const machine = (status: Partial<MachineStatus> | { conditions: Conditions } = {}, extra: { deletionTimestamp?: string } = {}) => ({ metadata: { name: 'm', generation: 1, ...extra }, spec: { providerID: 'local://i-1', infrastructureRef: { kind: 'LocalMachine', name: 'm' } }, status }) as api.Machine;
  const infra = (provisioned: boolean) => ({ spec: { providerID: 'local://i-1' }, status: { initialization: { provisioned }, addresses: [{ type: 'InternalIP', address: '127.0.1.9' }], failureDomain: 'local-b' } }) as InfraMachine;
  const readyNode = { metadata: { name: 'm' }, status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { osImage: 'bosun' } } } as api.Node;
  const phase = (o: Partial<MachineObservation>) => machineStatus({ machine: machine(), bootstrapReady: false, now, ...o }).status.phase;
  assert.equal(phase({}), 'Pending');
  assert.equal(phase({ bootstrapReady: true, infra: infra(false) }), 'Provisioning');
  assert.equal(phase({ bootstrapReady: true, infra: infra(true) }), 'Provisioned');
  assert.equal(phase({ bootstrapReady: true, infra: infra(true), node: readyNode }), 'Running');
  assert.equal(phase({ machine: machine({ initialization: { infrastructureProvisioned: true } }), bootstrapReady: true }), 'Failed');
  assert.equal(phase({ machine: machine({}, { deletionTimestamp: '2026-01-01T00:00:00Z' }), bootstrapReady: true, deleting: { reason: 'DrainingNode', message: '' } }), 'Deleting');
  const running = machineStatus({ machine: machine(), bootstrapReady: true, infra: infra(true), node: readyNode, now }).status;
  assert.deepEqual(running.nodeRef, { name: 'm' });
  assert.equal(running.failureDomain, 'local-b');
  assert.deepEqual(running.conditions.filter((c) => ['Ready', 'Available', 'NodeHealthy'].includes(c.type)).map((c) => [c.type, c.status]), [['NodeHealthy', 'True'], ['Ready', 'True'], ['Available', 'True']]);
  // A workload API that cannot be read: nodeRef, nodeInfo and Running stay; the node conditions are Unknown.
  const unreachable = machineStatus({ machine: machine(running), bootstrapReady: true, infra: infra(true), nodeUnreachable: 'connect ECONNREFUSED', now }).status;
  assert.equal(unreachable.phase, 'Running');
  assert.deepEqual(unreachable.nodeRef, { name: 'm' });
  assert.deepEqual(unreachable.nodeInfo, { osImage: 'bosun' });
  assert.deepEqual(unreachable.conditions.filter((c) => ['NodeReady', 'NodeHealthy', 'Ready'].includes(c.type)).map((c) => [c.type, c.status, c.reason, c.message]), [
    ['NodeReady', 'Unknown', 'ConnectionDown', 'Cannot read the Node m: connect ECONNREFUSED'],
    ['NodeHealthy', 'Unknown', 'ConnectionDown', 'Cannot read the Node m: connect ECONNREFUSED'],
    ['Ready', 'False', 'NotReady', 'Cannot read the Node m: connect ECONNREFUSED'],
  ]);
  assert.equal(phase({ bootstrapReady: true, infra: infra(true), nodeUnreachable: 'down' }), 'Provisioned', 'never had a Node: not Running');
  const kept = machineStatus({ machine: machine({ conditions: [{ type: 'HealthCheckSucceeded', status: 'False', reason: 'UnhealthyNode', message: 'x' }] }), bootstrapReady: true, infra: infra(true), node: readyNode, now }).status;
  assert.equal(kept.conditions.find((c) => c.type === 'HealthCheckSucceeded')!.reason, 'UnhealthyNode', 'conditions of other controllers are kept');
  assert.equal(kept.conditions.find((c) => c.type === 'Ready')!.status, 'False', 'a failed health check makes the Machine not Ready');
  const waiting = machineStatus({ machine: { ...machine(), spec: { ...machine().spec, minReadySeconds: 30 } }, bootstrapReady: true, infra: infra(true), node: readyNode, now });
  assert.equal(waiting.status.conditions.find((c) => c.type === 'Available')!.reason, 'WaitingForMinReadySeconds');
  assert.equal(waiting.recheckAfterMs, 30_000);
});

test('remediationBudget: a MachineDeployment\'s remediation.maxInFlight less the remediations under way', () => {
  const md = (maxInFlight?: number | string, replicas = 4) => ({ spec: { replicas, remediation: maxInFlight === undefined ? undefined : { maxInFlight } } }) as api.MachineDeployment;
  const remediating = { metadata: { name: 'a', deletionTimestamp: '2026-01-01T00:00:00Z' }, status: { conditions: [{ type: 'OwnerRemediated', status: 'False', reason: 'MachineDeleting' }] } } as api.Machine;
  const scaledDown = { metadata: { name: 'b', deletionTimestamp: '2026-01-01T00:00:00Z' }, status: {} } as api.Machine;
  assert.equal(remediationBudget(undefined, []), Number.POSITIVE_INFINITY, 'a MachineSet of its own: no limit');
  assert.equal(remediationBudget(md(), [remediating]), Number.POSITIVE_INFINITY);
  assert.equal(remediationBudget(md(1), []), 1);
  assert.equal(remediationBudget(md(1), [remediating, scaledDown]), 0, 'only remediations count');
  assert.equal(remediationBudget(md('50%', 3), [remediating]), 1, 'a percentage of the replicas, rounded up');
});
