// PriorityClasses and the Priority admission as kube-apiserver has them: the two system classes
// exist from the start and cannot be deleted; a pod gets its class's priority (or the global
// default's class and priority), a name no class has or a priority that disagrees is refused;
// one global default only; user classes stay at or below 1,000,000,000 and keep their value.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const PC = '/apis/scheduling.k8s.io/v1/priorityclasses';
const PODS = '/api/v1/namespaces/default/pods';
let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const pod = (name: string, spec: object = {}) => api.request('POST', PODS, { body: { metadata: { name }, spec: { containers: [{ name: 'a', image: 'i' }], ...spec } } });

test('the system classes are there from the start, as kubectl lists them, and cannot be deleted', async () => {
  const listed = await api.kubectl(['get', 'priorityclasses']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$/m);
  assert.match(listed.stdout, /^system-cluster-critical\s+2000000000\s+false\s+\S+\s+PreemptLowerPriority$/m);
  assert.match(listed.stdout, /^system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority$/m);
  const deleted = await api.kubectl(['delete', 'pc', 'system-node-critical']);
  assert.notEqual(deleted.code, 0);
  assert.match(deleted.stderr, /priorityclasses\.scheduling\.k8s\.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted/);
});

test('a pod gets its class\'s priority; an unknown class or a disagreeing priority is refused', async () => {
  const critical = await pod('critical', { priorityClassName: 'system-cluster-critical' });
  assert.equal(critical.status, 201, critical.text);
  assert.deepEqual([critical.json.spec.priority, critical.json.spec.preemptionPolicy], [2000000000, 'PreemptLowerPriority']);
  const plain = await pod('plain');
  assert.equal(plain.json.spec.priority, 0, 'no class and no default: 0');
  const unknown = await pod('unknown', { priorityClassName: 'gold' });
  assert.equal(unknown.status, 403);
  assert.equal(unknown.json.message, 'pods "unknown" is forbidden: no PriorityClass with name gold was found');
  const disagree = await pod('disagree', { priorityClassName: 'system-node-critical', priority: 5 });
  assert.equal(disagree.status, 403);
  assert.equal(disagree.json.message, 'pods "disagree" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 2000001000 from the given PriorityClass name');
  // The preemption policy is the class's (PreemptLowerPriority without one): repeating it is fine, another is refused.
  assert.equal(plain.json.spec.preemptionPolicy, 'PreemptLowerPriority');
  const repeats = await pod('repeats', { priorityClassName: 'system-cluster-critical', preemptionPolicy: 'PreemptLowerPriority' });
  assert.equal(repeats.status, 201, repeats.text);
  const never = await pod('never', { preemptionPolicy: 'Never' });
  assert.equal(never.status, 403);
  assert.equal(never.json.message, 'pods "never" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name');
});

test('user classes: kubectl create priorityclass, one global default, bounds and immutable value', async () => {
  const created = await api.kubectl(['create', 'priorityclass', 'batch-low', '--value=100', '--global-default=true', '--preemption-policy=Never', '--description=batch work']);
  assert.equal(created.code, 0, created.stderr);
  const stored = (await api.request('GET', `${PC}/batch-low`)).json;
  assert.deepEqual([stored.value, stored.globalDefault, stored.preemptionPolicy, stored.description], [100, true, 'Never', 'batch work']);
  const defaulted = await pod('defaulted');
  assert.deepEqual([defaulted.json.spec.priorityClassName, defaulted.json.spec.priority, defaulted.json.spec.preemptionPolicy], ['batch-low', 100, 'Never']);
  const second = await api.request('POST', PC, { body: { metadata: { name: 'also-default' }, value: 5, globalDefault: true } });
  assert.equal(second.status, 403);
  assert.equal(second.json.message, 'priorityclasses.scheduling.k8s.io "also-default" is forbidden: PriorityClass batch-low is already marked as default. Only one default can exist');
  const high = await api.request('POST', PC, { body: { metadata: { name: 'too-high' }, value: 1_000_000_001 } });
  assert.equal(high.status, 422);
  assert.match(high.json.message, /value: Forbidden: maximum allowed value of a user defined priority is 1000000000/);
  const reserved = await api.request('POST', PC, { body: { metadata: { name: 'system-mine' }, value: 1 } });
  assert.equal(reserved.status, 422);
  assert.match(reserved.json.message, /metadata\.name: Forbidden: priority class names with 'system-' prefix are reserved/);
  const changed = await api.request('PATCH', `${PC}/batch-low`, { contentType: 'application/merge-patch+json', body: { value: 200 } });
  assert.equal(changed.status, 422);
  assert.match(changed.json.message, /value: Forbidden: may not be changed in an update\./);
});
