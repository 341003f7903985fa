// The VolumeBinding and VolumeRestrictions plugins in the scheduler's pure core (volume-binding.ts,
// volume-restrictions.ts, through schedulePod):
// one row per rule — claims that rule out every node (missing, being deleted, unbound with an
// Immediate class or no class), bound volumes' node affinity, WaitForFirstConsumer claims placed
// where an Available volume fits or a provisioner can make one — with kube's messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { schedulePod } from '../../src/cluster/scheduler/schedule.js';
import type { StorageSnapshot } from '../../src/cluster/scheduler/types.js';
import { node, pod, snapshot } from './scheduler-fixtures.js';

const claim = (name: string, extra: { volumeName?: string; storageClassName?: string; deleting?: boolean; accessModes?: string[] } = {}): api.PersistentVolumeClaim => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { accessModes: extra.accessModes ?? ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: extra.storageClassName ?? 'manual', volumeName: extra.volumeName },
});
const volume = (name: string, nodeName?: string, storageClassName = 'manual'): api.PersistentVolume => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: {
    capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName, volumeMode: 'Filesystem', hostPath: { path: `/v/${name}` },
    ...(nodeName ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName] }] }] } } } : {}),
  },
  status: { phase: 'Available' },
});
const storageClass = (name: string, provisioner: string, mode = 'WaitForFirstConsumer'): api.StorageClass => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, volumeBindingMode: mode });

function storage(claims: api.PersistentVolumeClaim[], volumes: api.PersistentVolume[], classes: api.StorageClass[]): StorageSnapshot {
  return {
    claim: (namespace, name) => claims.find((c) => c.metadata.namespace === namespace && c.metadata.name === name),
    volume: (name) => volumes.find((v) => v.metadata.name === name),
    volumes: () => volumes,
    storageClass: (name) => classes.find((c) => c.metadata.name === name),
  };
}

const nodes = [node('a'), node('b')];
const usesClaim = (name: string) => pod('p', { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }] });
const LOCAL = storageClass('local', 'kubernetes.io/no-provisioner');
const MADE = storageClass('made', 'bosun.io/local-path');
const NOW = storageClass('now', 'bosun.io/local-path', 'Immediate');

const cases: [string, api.PersistentVolumeClaim[], api.PersistentVolume[], string][] = [
  ['a claim that does not exist', [], [], '0/2 nodes are available: persistentvolumeclaim "data" not found.'],
  ['a claim being deleted', [claim('data', { deleting: true })], [], '0/2 nodes are available: persistentvolumeclaim "data" is being deleted.'],
  ['an unbound claim of an Immediate class', [claim('data', { storageClassName: 'now' })], [], '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.'],
  ['an unbound claim of no class', [claim('data', { storageClassName: '' })], [], '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.'],
  ['bound to a volume pinned elsewhere', [claim('data', { volumeName: 'on-c' })], [volume('on-c', 'c')], '0/2 nodes are available: 2 node(s) had volume node affinity conflict.'],
  ['bound to a volume that does not exist', [claim('data', { volumeName: 'gone' })], [], '0/2 nodes are available: 2 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s).'],
  ['WaitForFirstConsumer, no provisioner, no volume fits anywhere', [claim('data', { storageClassName: 'local' })], [volume('small-elsewhere', 'c', 'local')], "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."],
];

for (const [name, claims, volumes, message] of cases) {
  test(`VolumeBinding rules out: ${name}`, () => {
    const result = schedulePod(usesClaim('data'), { ...snapshot(nodes), storage: storage(claims, volumes, [LOCAL, MADE, NOW]) });
    assert.ok('error' in result, 'no node');
    assert.equal(result.error.message, message);
  });
}

const placements: [string, api.PersistentVolumeClaim[], api.PersistentVolume[], string[]][] = [
  ['bound to a volume pinned to b: b', [claim('data', { volumeName: 'on-b' })], [volume('on-b', 'b')], ['b']],
  ['bound to a volume usable anywhere: either', [claim('data', { volumeName: 'anywhere' })], [volume('anywhere')], ['a', 'b']],
  ['WaitForFirstConsumer with a free volume only on a: a', [claim('data', { storageClassName: 'local' })], [volume('local-a', 'a', 'local')], ['a']],
  ['WaitForFirstConsumer with a provisioner: either', [claim('data', { storageClassName: 'made' })], [], ['a', 'b']],
];

for (const [name, claims, volumes, allowed] of placements) {
  test(`VolumeBinding places: ${name}`, () => {
    const result = schedulePod(usesClaim('data'), { ...snapshot(nodes), storage: storage(claims, volumes, [LOCAL, MADE, NOW]) });
    assert.ok('node' in result, 'error' in result ? result.error.message : '');
    assert.ok(allowed.includes(result.node), result.node);
    assert.equal(result.feasible, allowed.length);
  });
}

test('a pod without claims is not looked at by VolumeBinding, with or without storage', () => {
  assert.ok('node' in schedulePod(pod('p'), snapshot(nodes)));
});

test('VolumeRestrictions: a ReadWriteOncePod claim another pod holds rules out every node; a ReadWriteOnce one does not', () => {
  const exclusive = claim('solo', { volumeName: 'anywhere', accessModes: ['ReadWriteOncePod'] });
  const shared = claim('data', { volumeName: 'anywhere-2' });
  const holder = pod('holder', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'solo' } }, { name: 'w', persistentVolumeClaim: { claimName: 'data' } }] });
  const snap = { ...snapshot(nodes, { a: [holder] }), storage: storage([exclusive, shared], [volume('anywhere'), volume('anywhere-2')], []) };
  const refused = schedulePod(pod('p', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'solo' } }] }), snap);
  assert.ok('error' in refused);
  assert.equal(refused.error.message, '0/2 nodes are available: node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode.');
  assert.ok('node' in schedulePod(pod('p', { volumes: [{ name: 'w', persistentVolumeClaim: { claimName: 'data' } }] }), snap), 'ReadWriteOnce: shared within a node');
});
