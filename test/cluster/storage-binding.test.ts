// The binder's pure choice of a volume for a claim (src/cluster/storage/binding.ts), one row per
// rule: class, access modes, size (the smallest that fits), volume mode, selector, availability,
// pre-binding, the selected node's affinity, and volumes being deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { delaysBinding, findVolume } from '../../src/cluster/storage/binding.js';

type VolumeSpec = NonNullable<api.PersistentVolume['spec']>;
const volume = (name: string, storage: string, spec: Partial<VolumeSpec> = {}, extra: { labels?: Record<string, string>; phase?: string; deleting?: boolean } = {}): api.PersistentVolume => ({
  apiVersion: 'v1', kind: 'PersistentVolume',
  metadata: { name, labels: extra.labels, ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { capacity: { storage }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', volumeMode: 'Filesystem', hostPath: { path: '/x' }, ...spec },
  status: { phase: extra.phase ?? 'Available' },
});
const claim = (spec: Partial<NonNullable<api.PersistentVolumeClaim['spec']>> = {}): api.PersistentVolumeClaim => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'ns', uid: 'uid-c' },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'manual', volumeMode: 'Filesystem', resources: { requests: { storage: '2Gi' } }, ...spec },
});
const node = (name: string): api.Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
const onNode = (name: string): Partial<VolumeSpec> => ({ nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [name] }] }] } } });

const cases: [string, api.PersistentVolumeClaim, api.PersistentVolume[], string | undefined, api.Node?][] = [
  ['the smallest that fits', claim(), [volume('10g', '10Gi'), volume('1g', '1Gi'), volume('3g', '3Gi'), volume('2048m', '2048Mi')], '2048m'],
  ['only the claim\'s class', claim(), [volume('other', '5Gi', { storageClassName: 'fast' })], undefined],
  ['no class matches only no class', claim({ storageClassName: '' }), [volume('manual', '5Gi'), volume('none', '5Gi', { storageClassName: '' })], 'none'],
  ['every access mode asked for', claim({ accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] }), [volume('rwo', '5Gi'), volume('both', '9Gi', { accessModes: ['ReadOnlyMany', 'ReadWriteOnce'] })], 'both'],
  ['the same volume mode', claim({ volumeMode: 'Block' }), [volume('fs', '5Gi'), volume('block', '5Gi', { volumeMode: 'Block' })], 'block'],
  ['the selector\'s labels', claim({ selector: { matchLabels: { tier: 'gold' } } }), [volume('plain', '3Gi'), volume('gold', '9Gi', {}, { labels: { tier: 'gold' } })], 'gold'],
  ['Available only', claim(), [volume('released', '3Gi', {}, { phase: 'Released' }), volume('pending', '3Gi', {}, { phase: 'Pending' })], undefined],
  ['not one being deleted', claim(), [volume('going', '3Gi', {}, { deleting: true })], undefined],
  ['not one another claim holds', claim(), [volume('held', '3Gi', { claimRef: { namespace: 'ns', name: 'other', uid: 'u2' } })], undefined],
  ['pre-bound to the claim first, whatever its phase or size rank', claim(), [volume('2g', '2Gi'), volume('mine', '8Gi', { claimRef: { namespace: 'ns', name: 'c' } }, { phase: 'Pending' })], 'mine'],
  ['pre-bound to a claim of that name with another uid: not this one', claim(), [volume('old', '8Gi', { claimRef: { namespace: 'ns', name: 'c', uid: 'uid-old' } })], undefined],
  ['on the selected node', claim(), [volume('on-a', '2Gi', onNode('a')), volume('on-b', '5Gi', onNode('b'))], 'on-b', node('b')],
];

for (const [name, c, volumes, expected, n] of cases) {
  test(`findVolume: ${name}`, () => {
    assert.equal(findVolume(c, volumes, n)?.metadata.name, expected);
  });
}

test('delaysBinding: only a claim whose class exists with WaitForFirstConsumer', () => {
  const classes: api.StorageClass[] = [
    { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'late' }, provisioner: 'p', volumeBindingMode: 'WaitForFirstConsumer' },
    { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'now' }, provisioner: 'p', volumeBindingMode: 'Immediate' },
  ];
  assert.deepEqual(['late', 'now', 'missing', ''].map((storageClassName) => delaysBinding(claim({ storageClassName }), classes)), [true, false, false, false]);
});
