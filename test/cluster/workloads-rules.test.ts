// The pure cores of the workload controllers as tables: a Deployment's rollout conditions
// (complete, progressing, timed out, paused), revision annotations on rollback, history clean-up,
// and the DaemonSet rolling update's next step with and without maxSurge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { rfc3339 } from '../../src/kube/index.js';
import { pausedCondition, rolloutStatus } from '../../src/cluster/workloads/deployment-status.js';
import { historyToDelete, newReplicaSetAnnotations } from '../../src/cluster/workloads/deployment-revisions.js';
import { rollingUpdateStep } from '../../src/cluster/workloads/daemonset.js';
import { templateHash, equalIgnoringHash } from '../../src/kube/template-hash.js';
import { defaultPodSpec } from '../../src/kube/pod-defaults.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const ago = (s: number) => rfc3339(new Date(NOW - s * 1000));

const deployment = (status: api.Deployment['status'] = {}, spec: Partial<api.Deployment['spec']> = {}): api.Deployment => ({
  metadata: { name: 'web', generation: 2, annotations: {} },
  spec: { replicas: 3, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } }, ...spec },
  status,
} as api.Deployment);
const rs = (name: string, replicas: number, available: number, extra: Partial<api.ObjectMeta> = {}): api.ReplicaSet => ({
  metadata: { name, annotations: {}, ...extra },
  spec: { replicas },
  status: { replicas, readyReplicas: available, availableReplicas: available },
} as api.ReplicaSet);
const progressing = (reason: string, updatedSecondsAgo: number) => ({ type: 'Progressing', status: 'True', reason, message: '', lastUpdateTime: ago(updatedSecondsAgo), lastTransitionTime: ago(updatedSecondsAgo) });

test('Deployment rollout conditions', () => {
  const cases: Array<[string, api.Deployment, api.ReplicaSet[], string, [string, string, string] | undefined]> = [
    ['complete', deployment({ replicas: 4, updatedReplicas: 2, conditions: [progressing('ReplicaSetUpdated', 5)] }), [rs('old', 0, 0), rs('new', 3, 3)], 'new', ['True', 'NewReplicaSetAvailable', 'ReplicaSet "new" has successfully progressed.']],
    ['progress refreshes ReplicaSetUpdated', deployment({ replicas: 4, updatedReplicas: 1, conditions: [progressing('ReplicaSetUpdated', 500)] }), [rs('old', 2, 2), rs('new', 2, 1)], 'new', ['True', 'ReplicaSetUpdated', 'ReplicaSet "new" is progressing.']],
    ['no progress past the deadline', deployment({ replicas: 4, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3, conditions: [progressing('ReplicaSetUpdated', 700)] }), [rs('old', 3, 3), rs('new', 1, 0)], 'new', ['False', 'ProgressDeadlineExceeded', 'ReplicaSet "new" has timed out progressing.']],
    ['no progress within the deadline: unchanged', deployment({ replicas: 4, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3, conditions: [progressing('ReplicaSetUpdated', 100)] }), [rs('old', 3, 3), rs('new', 1, 0)], 'new', ['True', 'ReplicaSetUpdated', '']],
    ['no deadline: no Progressing', deployment({}, { progressDeadlineSeconds: 2147483647 }), [rs('new', 3, 3)], 'new', undefined],
  ];
  for (const [what, d, rss, newName, want] of cases) {
    const status = rolloutStatus(rss, rss.find((r) => r.metadata.name === newName), d, NOW);
    const p = status.conditions?.find((c) => c.type === 'Progressing');
    assert.deepEqual(p ? [p.status, p.reason, p.message] : undefined, want, what);
    if (what === 'progress refreshes ReplicaSetUpdated') {
      assert.equal(p!.lastUpdateTime, rfc3339(new Date(NOW)), 'lastUpdateTime moves on progress');
      assert.equal(p!.lastTransitionTime, ago(500), 'lastTransitionTime stays');
    }
  }
  const a = rolloutStatus([rs('old', 1, 1), rs('new', 2, 0)], undefined, deployment(), NOW).conditions!.find((c) => c.type === 'Available')!;
  assert.deepEqual([a.status, a.reason, a.message], ['False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.']);
  assert.deepEqual(pausedCondition(deployment({}, { paused: true }), NOW)?.reason, 'DeploymentPaused');
  assert.deepEqual(pausedCondition(deployment({ conditions: [{ type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused' }] }), NOW)?.reason, 'DeploymentResumed');
  assert.equal(pausedCondition(deployment({ conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }, { paused: true }), NOW), undefined, 'a timed-out rollout stays timed out');
});

test('revisions: a rollback reuses the old ReplicaSet under a new number and remembers the old ones', () => {
  const d = { metadata: { annotations: { 'kubernetes.io/change-cause': 'kubectl set image', 'deployment.kubernetes.io/revision': '3' } }, spec: { replicas: 2 } } as unknown as api.Deployment;
  const old = { metadata: { annotations: { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/revision-history': '' } } } as unknown as api.ReplicaSet;
  const { annotations, changed } = newReplicaSetAnnotations(d, old, 4, true);
  assert.ok(changed);
  assert.equal(annotations['deployment.kubernetes.io/revision'], '4');
  assert.equal(annotations['deployment.kubernetes.io/revision-history'], '1');
  assert.equal(annotations['kubernetes.io/change-cause'], 'kubectl set image', "the Deployment's annotations are copied");
  const again = newReplicaSetAnnotations(d, { metadata: { annotations } } as api.ReplicaSet, 4, true);
  assert.equal(again.changed, false, 'nothing changes the second time');
  const created = newReplicaSetAnnotations({ ...d, spec: { replicas: 4, strategy: { rollingUpdate: { maxSurge: '25%' } } } } as api.Deployment, { metadata: {} } as api.ReplicaSet, 1, false).annotations;
  assert.deepEqual([created['deployment.kubernetes.io/desired-replicas'], created['deployment.kubernetes.io/max-replicas']], ['4', '5']);

  const set = (rev: number, replicas: number, extra: Partial<api.ObjectMeta> = {}) => ({ metadata: { name: `rs-${rev}`, generation: 1, creationTimestamp: ago(100 - rev), annotations: { 'deployment.kubernetes.io/revision': String(rev) }, ...extra }, spec: { replicas }, status: { replicas, observedGeneration: 1 } } as api.ReplicaSet);
  const olds = [set(3, 0), set(1, 0), set(2, 1), set(4, 0, { deletionTimestamp: ago(1) })];
  assert.deepEqual(historyToDelete({ spec: { revisionHistoryLimit: 1 } } as api.Deployment, olds).map((r) => r.metadata.name), ['rs-1'], 'oldest revisions first, never one still scaled up or already going');
  assert.deepEqual(historyToDelete({ spec: {} } as api.Deployment, olds), [], 'no limit, no clean-up');
});

test('pod-template hash: stable, kube-shaped, blind to the empties a typed round-trip adds', () => {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } };
  const roundTripped = { metadata: { labels: { app: 'web' }, creationTimestamp: null }, spec: { containers: [{ name: 'c', image: 'img:1', resources: {} }] } };
  assert.equal(templateHash(template), templateHash(roundTripped));
  assert.match(templateHash(template), /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  assert.notEqual(templateHash(template), templateHash(template, 1), 'the collision count changes the hash');
  assert.notEqual(templateHash(template), templateHash({ ...template, spec: { containers: [{ name: 'c', image: 'img:2' }] } }));
  assert.ok(equalIgnoringHash(template, { ...roundTripped, metadata: { labels: { app: 'web', 'pod-template-hash': 'x' } } }));
  // A Deployment stored before templates got the PodSpec defaults has the same template as the
  // ReplicaSet made from it since, which has them; one that says otherwise does not.
  const defaulted = structuredClone(template) as typeof template & { spec: api.PodSpec };
  defaultPodSpec(defaulted.spec);
  assert.equal(defaulted.spec.containers[0].terminationMessagePath, '/dev/termination-log');
  assert.ok(equalIgnoringHash(template, defaulted));
  assert.ok(!equalIgnoringHash({ ...template, spec: { ...template.spec, dnsPolicy: 'Default' } }, defaulted));
  assert.deepEqual(template.spec, { containers: [{ name: 'c', image: 'img:1' }] }, 'comparing leaves the templates as they are');
});

test('DaemonSet rolling update steps', () => {
  const pod = (name: string, node: string, hash: string, ready: boolean): api.Pod => ({
    metadata: { name, labels: { 'controller-revision-hash': hash } },
    spec: { nodeName: node },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago(60) }] },
  } as unknown as api.Pod);
  const ds = (rollingUpdate: NonNullable<NonNullable<api.DaemonSet['spec']>['updateStrategy']>['rollingUpdate']) => ({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate } } } as api.DaemonSet);
  const nodes = (...entries: Array<[string, api.Pod[]]>) => new Map(entries);
  const names = (step: { deletions: api.Pod[]; surgeNodes: string[] }) => ({ deletions: step.deletions.map((p) => p.metadata.name).sort(), surgeNodes: [...step.surgeNodes].sort() });
  const all = () => true;
  const cases: Array<[string, api.DaemonSet, Map<string, api.Pod[]>, { deletions: string[]; surgeNodes: string[] }]> = [
    ['maxUnavailable 1: one old pod at a time', ds({ maxUnavailable: 1 }), nodes(['a', [pod('a1', 'a', 'old', true)]], ['b', [pod('b1', 'b', 'old', true)]]), { deletions: ['a1'], surgeNodes: [] }],
    ['unavailable old pods go at once', ds({ maxUnavailable: 1 }), nodes(['a', [pod('a1', 'a', 'old', false)]], ['b', [pod('b1', 'b', 'old', false)]]), { deletions: ['a1', 'b1'], surgeNodes: [] }],
    ['a new pod not yet available uses the budget', ds({ maxUnavailable: 1 }), nodes(['a', [pod('a2', 'a', 'new', false)]], ['b', [pod('b1', 'b', 'old', true)]]), { deletions: [], surgeNodes: [] }],
    ['maxUnavailable 50% of 3 rounds up to 2', ds({ maxUnavailable: '50%' }), nodes(['a', [pod('a1', 'a', 'old', true)]], ['b', [pod('b1', 'b', 'old', true)]], ['c', [pod('c1', 'c', 'old', true)]]), { deletions: ['a1', 'b1'], surgeNodes: [] }],
    ['maxSurge 1: a new pod beside one old pod', ds({ maxSurge: 1, maxUnavailable: 0 }), nodes(['a', [pod('a1', 'a', 'old', true)]], ['b', [pod('b1', 'b', 'old', true)]]), { deletions: [], surgeNodes: ['a'] }],
    ['maxSurge: the old pod goes once the new one is available', ds({ maxSurge: 1, maxUnavailable: 0 }), nodes(['a', [pod('a1', 'a', 'old', true), pod('a2', 'a', 'new', true)]], ['b', [pod('b1', 'b', 'old', true)]]), { deletions: ['a1'], surgeNodes: ['b'] }],
    ['maxSurge: a surge in progress holds the next', ds({ maxSurge: 1, maxUnavailable: 0 }), nodes(['a', [pod('a1', 'a', 'old', true), pod('a2', 'a', 'new', false)]], ['b', [pod('b1', 'b', 'old', true)]]), { deletions: [], surgeNodes: [] }],
    ['maxSurge: an unavailable old pod is replaced at once', ds({ maxSurge: 1, maxUnavailable: 0 }), nodes(['a', [pod('a1', 'a', 'old', true), pod('a2', 'a', 'new', false)]], ['b', [pod('b1', 'b', 'old', false)]]), { deletions: [], surgeNodes: ['b'] }],
  ];
  for (const [what, d, byNode, want] of cases) assert.deepEqual(names(rollingUpdateStep(d, byNode.size, byNode, all, 'new', NOW)), want, what);
});
