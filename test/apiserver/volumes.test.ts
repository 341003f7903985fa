// PersistentVolumes, PersistentVolumeClaims and StorageClasses as kube-apiserver serves them,
// through the real kubectl: kube's defaults and validation messages, the update rules (a claim's
// spec fixed but for volumeName once and a bound claim's storage request; a class's provisioner,
// parameters, reclaim policy and binding mode fixed), kubectl's columns as kube 1.33 prints them,
// and the DefaultStorageClass, StorageObjectInUseProtection and PersistentVolumeClaimResize
// admission plugins.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const PV = '/api/v1/persistentvolumes';
const PVC = (ns: string) => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
const SC = '/apis/storage.k8s.io/v1/storageclasses';
const MERGE = 'application/merge-patch+json';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  for (const name of ['claims', 'defaulted']) assert.equal((await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status, 201);
});
after(async () => {
  await api.stop();
});

const volume = (name: string, spec: object = {}) => ({ metadata: { name }, spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/data/${name}` }, ...spec } });
const claim = (name: string, spec: object = {}) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });

test('kubectl applies volumes, claims and classes; they get kube\'s defaults, finalizers and columns', async () => {
  const manifest = [
    'apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-manual}\nspec: {capacity: {storage: 5Gi}, accessModes: [ReadWriteOnce, ReadOnlyMany], storageClassName: manual, hostPath: {path: /data/manual}}',
    'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: claims}\nspec: {accessModes: [ReadWriteOnce], storageClassName: manual, resources: {requests: {storage: 1Gi}}}',
    'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}\nprovisioner: example.com/fast',
  ].join('\n---\n');
  const applied = await api.kubectl(['apply', '-f', '-'], { input: manifest });
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /persistentvolume\/pv-manual created\npersistentvolumeclaim\/data created\nstorageclass\.storage\.k8s\.io\/fast created/);

  const pv = (await api.request('GET', `${PV}/pv-manual`)).json;
  assert.deepEqual([pv.spec.persistentVolumeReclaimPolicy, pv.spec.volumeMode, pv.status.phase, pv.metadata.finalizers], ['Retain', 'Filesystem', 'Pending', ['kubernetes.io/pv-protection']]);
  assert.ok(pv.status.lastPhaseTransitionTime);
  const pvc = (await api.request('GET', `${PVC('claims')}/data`)).json;
  assert.deepEqual([pvc.spec.volumeMode, pvc.status.phase, pvc.metadata.finalizers], ['Filesystem', 'Pending', ['kubernetes.io/pvc-protection']]);
  const sc = (await api.request('GET', `${SC}/fast`)).json;
  assert.deepEqual([sc.reclaimPolicy, sc.volumeBindingMode], ['Delete', 'Immediate']);

  const pvs = await api.kubectl(['get', 'pv']);
  assert.equal(pvs.code, 0, pvs.stderr);
  assert.match(pvs.stdout, /^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+REASON\s+AGE$/m);
  assert.match(pvs.stdout, /^pv-manual\s+5Gi\s+RWO,ROX\s+Retain\s+Pending\s+manual\s+<unset>\s+\d+s$/m);
  const pvcs = await api.kubectl(['get', 'pvc', '-n', 'claims', '-o', 'wide']);
  assert.match(pvcs.stdout, /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE\s+VOLUMEMODE$/m);
  assert.match(pvcs.stdout, /^data\s+Pending\s+manual\s+<unset>\s+\d+s\s+Filesystem$/m);
  const scs = await api.kubectl(['get', 'sc']);
  assert.match(scs.stdout, /^NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE$/m);
  assert.match(scs.stdout, /^fast \(default\)\s+example\.com\/fast\s+Delete\s+Immediate\s+false\s+\d+s$/m);

  // Bound (as the binder would write it): the claim shows its volume, capacity and modes.
  assert.equal((await api.request('PATCH', `${PVC('claims')}/data`, { contentType: MERGE, body: { spec: { volumeName: 'pv-manual' } } })).status, 200);
  const bound = await api.request('PATCH', `${PVC('claims')}/data/status`, { contentType: MERGE, body: { status: { phase: 'Bound', capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] } } });
  assert.equal(bound.status, 200, bound.text);
  assert.match((await api.kubectl(['get', 'pvc', 'data', '-n', 'claims'])).stdout, /^data\s+Bound\s+pv-manual\s+5Gi\s+RWO,ROX\s+manual\s+<unset>\s+\d+s$/m);
  const phased = await api.request('PATCH', `${PV}/pv-manual/status`, { contentType: MERGE, body: { status: { phase: 'Bound' } } });
  assert.equal(phased.json.status.phase, 'Bound');
  assert.ok(phased.json.status.lastPhaseTransitionTime >= pv.status.lastPhaseTransitionTime);

  // The protection finalizer keeps a deleted claim, shown Terminating, until it is removed.
  assert.equal((await api.kubectl(['delete', 'pvc', 'data', '-n', 'claims', '--wait=false'])).code, 0);
  assert.match((await api.kubectl(['get', 'pvc', 'data', '-n', 'claims'])).stdout, /^data\s+Terminating\s+pv-manual/m);
  assert.equal((await api.request('PATCH', `${PVC('claims')}/data`, { contentType: MERGE, body: { metadata: { finalizers: null } } })).status, 200);
  assert.equal((await api.request('GET', `${PVC('claims')}/data`)).status, 404);
});

test('what kube refuses is refused, in its words', async () => {
  const cases: [string, object, RegExp[]][] = [
    [PVC('claims'), { metadata: { name: 'bad' }, spec: { resources: { requests: {} } } }, [/spec\.accessModes: Required value: at least 1 access mode is required/, /spec\.resources\[storage\]: Required value/]],
    [PVC('claims'), claim('bad', { accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'WriteAlways'] }), [/spec\.accessModes: Unsupported value: "WriteAlways": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"/, /spec\.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes/]],
    [PVC('claims'), claim('bad', { resources: { requests: { storage: '0' } } }), [/spec\.resources\[storage\]: Invalid value: "0": must be greater than zero/]],
    [PVC('claims'), claim('bad', { storageClassName: 'Not_A_Name' }), [/spec\.storageClassName: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain/]],
    [PV, { metadata: { name: 'bad' }, spec: {} }, [/spec\.accessModes: Required value/, /spec\.capacity: Required value/, /spec: Required value: must specify a volume type/]],
    [PV, volume('bad', { nfs: { server: 'nfs.example', path: '/x' } }), [/spec\.nfs: Forbidden: may not specify more than 1 volume type/]],
    [PV, volume('bad', { capacity: { storage: '1Gi', cpu: '1' }, persistentVolumeReclaimPolicy: 'Keep' }), [/spec\.capacity: Unsupported value: .*supported values: "storage"/, /spec\.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"/]],
    [PV, volume('bad', { hostPath: undefined, local: { path: '/mnt/disk' } }), [/spec\.nodeAffinity: Required value: Local volume requires node affinity/]],
    [SC, { metadata: { name: 'bad' }, volumeBindingMode: 'Later' }, [/provisioner: Required value/, /volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"/]],
  ];
  for (const [path, body, messages] of cases) {
    const refused = await api.request('POST', path, { body });
    assert.equal(refused.status, 422, `${JSON.stringify(body)}: ${refused.text}`);
    for (const message of messages) assert.match(refused.json.message, message);
  }
});

test('updates: a claim\'s spec is fixed but for volumeName once and a bound claim\'s request; a class\'s provisioner and policies are fixed', async () => {
  assert.equal((await api.request('POST', SC, { body: { metadata: { name: 'expandable' }, provisioner: 'example.com/grow', allowVolumeExpansion: true } })).status, 201);
  assert.equal((await api.request('POST', PVC('claims'), { body: claim('fixed', { storageClassName: 'expandable' }) })).status, 201);
  const grown = await api.request('PATCH', `${PVC('claims')}/fixed`, { contentType: MERGE, body: { spec: { resources: { requests: { storage: '2Gi' } } } } });
  assert.equal(grown.status, 422, 'not bound: the request is fixed');
  assert.match(grown.json.message, /spec: Forbidden: spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims/);
  assert.equal((await api.request('PATCH', `${PVC('claims')}/fixed`, { contentType: MERGE, body: { spec: { volumeName: 'one' } } })).status, 200, 'set once');
  assert.equal((await api.request('PATCH', `${PVC('claims')}/fixed`, { contentType: MERGE, body: { spec: { volumeName: 'two' } } })).status, 422, 'not twice');
  await api.request('PATCH', `${PVC('claims')}/fixed/status`, { contentType: MERGE, body: { status: { phase: 'Bound', capacity: { storage: '1Gi' } } } });
  assert.equal((await api.request('PATCH', `${PVC('claims')}/fixed`, { contentType: MERGE, body: { spec: { resources: { requests: { storage: '2Gi' } } } } })).status, 200, 'bound: it may grow');
  const shrunk = await api.request('PATCH', `${PVC('claims')}/fixed`, { contentType: MERGE, body: { spec: { resources: { requests: { storage: '1Gi' } } } } });
  assert.equal(shrunk.status, 422);
  assert.match(shrunk.json.message, /spec\.resources\.requests\.storage: Forbidden: field can not be less than status\.capacity/);
  // PersistentVolumeClaimResize: only a class that allows expansion lets a bound claim grow.
  assert.equal((await api.request('POST', PVC('claims'), { body: claim('rigid', { storageClassName: 'manual' }) })).status, 201);
  await api.request('PATCH', `${PVC('claims')}/rigid/status`, { contentType: MERGE, body: { status: { phase: 'Bound', capacity: { storage: '1Gi' } } } });
  const rigid = await api.kubectl(['patch', 'pvc', 'rigid', '-n', 'claims', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']);
  assert.notEqual(rigid.code, 0);
  assert.match(rigid.stderr, /persistentvolumeclaims "rigid" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/);

  assert.equal((await api.request('POST', SC, { body: { metadata: { name: 'slow' }, provisioner: 'example.com/slow', parameters: { type: 'hdd' } } })).status, 201);
  const changed = await api.request('PATCH', `${SC}/slow`, { contentType: MERGE, body: { provisioner: 'example.com/other', parameters: { type: 'ssd' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' } });
  assert.equal(changed.status, 422);
  for (const message of [/parameters: Forbidden: updates to parameters are forbidden\./, /provisioner: Forbidden: updates to provisioner are forbidden\./, /reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden\./, /volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable/]) {
    assert.match(changed.json.message, message);
  }
  assert.equal((await api.request('PATCH', `${SC}/slow`, { contentType: MERGE, body: { allowVolumeExpansion: true } })).status, 200, 'expansion may change');

  assert.equal((await api.request('POST', PV, { body: volume('fixed-source') })).status, 201);
  const moved = await api.request('PATCH', `${PV}/fixed-source`, { contentType: MERGE, body: { spec: { hostPath: { path: '/elsewhere' } } } });
  assert.equal(moved.status, 422);
  assert.match(moved.json.message, /spec\.persistentvolumesource: Forbidden: spec\.persistentvolumesource is immutable after creation/);
});

test('DefaultStorageClass: a claim naming no class gets the newest default; "" keeps no class', async () => {
  const first = await api.request('POST', SC, { body: { metadata: { name: 'older-default', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/a' } });
  assert.equal(first.status, 201);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // creation timestamps have second precision
  assert.equal((await api.request('POST', SC, { body: { metadata: { name: 'newer-default', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/b' } })).status, 201);
  const defaulted = await api.request('POST', PVC('defaulted'), { body: claim('plain') });
  assert.equal(defaulted.json.spec.storageClassName, 'newer-default');
  const none = await api.request('POST', PVC('defaulted'), { body: claim('classless', { storageClassName: '' }) });
  assert.equal(none.json.spec.storageClassName, '');
  const named = await api.request('POST', PVC('defaulted'), { body: claim('named', { storageClassName: 'older-default' }) });
  assert.equal(named.json.spec.storageClassName, 'older-default');
});
