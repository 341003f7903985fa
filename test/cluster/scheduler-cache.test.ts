// The scheduler cache's assumed pods, and the selector system default spreading counts with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SchedulerCache } from '../../src/cluster/scheduler/cache.js';
import { NodeInfoCache } from '../../src/cluster/scheduler/resources.js';
import { defaultSpreadSelector } from '../../src/cluster/scheduler/topology-spread.js';
import { node, pod } from './scheduler-fixtures.js';

const onNode = (p: ReturnType<typeof pod>, n: string) => ({ ...p, spec: { ...p.spec, nodeName: n } });
const names = (snapshot: ReturnType<SchedulerCache['snapshot']>, n: string) => (snapshot.podsByNode.get(n) ?? []).map((p) => p.metadata.name).sort();

test('assumed pods count on their node until the informer confirms them, or they are forgotten', () => {
  const cache = new SchedulerCache();
  const nodes = [node('a'), node('b')];
  const p = pod('p');
  cache.assume(p, 'a');
  assert.ok(cache.isAssumed('default/p'));
  // The informer still shows p unbound; the snapshot places it on a.
  assert.deepEqual(names(cache.snapshot(nodes, [p]), 'a'), ['p']);
  // Confirmed bound (to wherever the API server says): the assumption goes, the real one counts once.
  cache.observe(onNode(p, 'a'));
  assert.equal(cache.assumedCount, 0);
  assert.deepEqual(names(cache.snapshot(nodes, [onNode(p, 'a')]), 'a'), ['p']);
  // A failed binding forgets the placement.
  cache.assume(pod('q'), 'b');
  cache.forget('default/q');
  assert.deepEqual(names(cache.snapshot(nodes, [pod('q')]), 'b'), []);
});

test('Succeeded and Failed pods hold nothing on their node', () => {
  const cache = new SchedulerCache();
  const done = { ...onNode(pod('done'), 'a'), status: { phase: 'Succeeded' } };
  const failed = { ...onNode(pod('failed'), 'a'), status: { phase: 'Failed' } };
  const running = { ...onNode(pod('running'), 'a'), status: { phase: 'Running' } };
  assert.deepEqual(names(cache.snapshot([node('a')], [done, failed, running]), 'a'), ['running']);
});

test('the default spreading selector: Services selecting the pod, merged with its controller\'s selector', () => {
  const p = pod('web-1', { labels: { app: 'web', tier: 'front', 'pod-template-hash': 'abc' } });
  const service = (namespace: string, selector: Record<string, string> | null) => ({ metadata: { namespace }, spec: { selector } });
  const cases: Array<[string, Parameters<typeof defaultSpreadSelector>[1], Parameters<typeof defaultSpreadSelector>[2], ReturnType<typeof defaultSpreadSelector>]> = [
    ['nothing selects the pod', [], undefined, undefined],
    ['a Service', [service('default', { app: 'web' })], undefined, { matchLabels: { app: 'web' }, matchExpressions: [] }],
    ['two Services merge', [service('default', { app: 'web' }), service('default', { tier: 'front' })], undefined, { matchLabels: { app: 'web', tier: 'front' }, matchExpressions: [] }],
    ['a Service that does not select it', [service('default', { app: 'db' })], undefined, undefined],
    ['a Service in another namespace', [service('other', { app: 'web' })], undefined, undefined],
    ['a Service without a selector', [service('default', null), service('default', {})], undefined, undefined],
    [
      'a ReplicaSet', [service('default', { app: 'web' })], { matchLabels: { app: 'web', 'pod-template-hash': 'abc' } },
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }, { key: 'pod-template-hash', operator: 'In', values: ['abc'] }] },
    ],
  ];
  for (const [name, services, owner, want] of cases) assert.deepEqual(defaultSpreadSelector(p, services, owner), want, name);
});

test('NodeInfos are kept across cycles while a node and its pods are the same objects', () => {
  const cache = new NodeInfoCache();
  const [a, b] = [node('a'), node('b')];
  const onA = [onNode(pod('p', { requests: { cpu: '1' } }), 'a')];
  const first = cache.get([a, b], new Map([['a', onA]]));
  const second = cache.get([a, b], new Map([['a', [...onA]]]));
  assert.equal(second[0], first[0], 'same node, same pods: reused');
  assert.equal(second[1], first[1]);
  const more = [...onA, onNode(pod('q', { requests: { cpu: '2' } }), 'a')];
  const third = cache.get([a, b], new Map([['a', more]]));
  assert.notEqual(third[0], first[0], 'a pod more: recounted');
  assert.equal(third[0].requested.milliCPU, 3000);
  assert.equal(third[1], first[1], 'other nodes untouched');
  const relabelled = { ...b, metadata: { ...b.metadata, labels: { zone: 'x' } } };
  assert.notEqual(cache.get([a, relabelled], new Map([['a', more]]))[1], first[1], 'a new node object: rebuilt');
});
