// The PersistentVolume binder and the protection controllers against the real API server: claims
// bind to the smallest volume that fits (class, modes, size, selector), to a volume they name, or
// to the volume on the node the scheduler selected for a WaitForFirstConsumer class; phases and
// kube's annotations and events; a deleted claim's volume is Released (Retain) or deleted
// (Delete); a claim a running pod uses stays until the pod goes. One API server and controller
// manager for the file; each test in a namespace of its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as kube from '../../src/api/index.js';
import { loadKubeConfig, resources, type KubeClient } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { NAMESPACES, PODS } from '../../src/cluster/workloads/resources.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startWorkloadTestServer } from './workloads/stand-ins.js';
import type { TestApiServer } from '../helpers/apiserver.js';

const PVS = resources.persistentVolumes;
const PVCS = resources.persistentVolumeClaims;
const CLASSES = resources.storageClasses;

let api: TestApiServer;
let client: KubeClient;
const stop = new AbortController();
let running: Promise<void>;
before(async () => {
  ({ api, client } = await startWorkloadTestServer());
  running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['persistentvolume-binder', 'pvc-protection', 'pv-protection'], leaderElection: false });
});
after(async () => {
  stop.abort();
  await running;
  await api.stop();
});

async function namespace(name: string): Promise<void> {
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

const volume = (name: string, storage: string, spec: Partial<NonNullable<kube.PersistentVolume['spec']>> = {}, labels?: Record<string, string>): Promise<kube.PersistentVolume> =>
  client.create(PVS, { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name, labels }, spec: { capacity: { storage }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', hostPath: { path: `/data/${name}` }, ...spec } });
const claim = (ns: string, name: string, storage: string, spec: Partial<NonNullable<kube.PersistentVolumeClaim['spec']>> = {}): Promise<kube.PersistentVolumeClaim> =>
  client.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'manual', resources: { requests: { storage } }, ...spec } });
const phaseOf = async (name: string) => (await client.read(PVS, name))?.status?.phase;
const bound = (ns: string, name: string) => eventually(`${ns}/${name} bound`, async () => {
  const c = await client.get(PVCS, name, ns);
  return c.status?.phase === 'Bound' ? c : undefined;
});
const events = async (ns: string, name: string) => (await api.request('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${name}`)).json.items.map((e: kube.Event) => `${e.type} ${e.reason}: ${e.message}`);

test('a claim binds to the smallest Available volume of its class that fits; kubectl shows both Bound', async () => {
  await namespace('binding');
  await volume('small-1g', '1Gi');
  await volume('mid-5g', '5Gi');
  await volume('big-10g', '10Gi');
  await volume('rwx-5g', '5Gi', { accessModes: ['ReadWriteMany'] });
  await eventually('volumes Available', async () => (await phaseOf('small-1g')) === 'Available' && (await phaseOf('big-10g')) === 'Available');
  await claim('binding', 'data', '3Gi');
  const pvc = await bound('binding', 'data');
  assert.equal(pvc.spec?.volumeName, 'mid-5g');
  assert.deepEqual([pvc.status?.capacity, pvc.status?.accessModes], [{ storage: '5Gi' }, ['ReadWriteOnce']]);
  assert.deepEqual(pvc.metadata.annotations, { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' });
  const pv = await client.get(PVS, 'mid-5g');
  assert.deepEqual([pv.status?.phase, pv.spec?.claimRef?.name, pv.spec?.claimRef?.namespace, pv.spec?.claimRef?.uid], ['Bound', 'data', 'binding', pvc.metadata.uid]);
  assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.match((await api.kubectl(['get', 'pv', 'mid-5g'])).stdout, /^mid-5g\s+5Gi\s+RWO\s+Retain\s+Bound\s+binding\/data\s+manual\s+<unset>\s+\d+s$/m);
  assert.match((await api.kubectl(['get', 'pvc', 'data', '-n', 'binding'])).stdout, /^data\s+Bound\s+mid-5g\s+5Gi\s+RWO\s+manual\s+<unset>\s+\d+s$/m);

  // Nothing fits ReadWriteMany of 6Gi; a class that does not exist cannot provision either.
  await claim('binding', 'shared', '6Gi', { accessModes: ['ReadWriteMany'] });
  await eventually('ProvisioningFailed', async () => (await events('binding', 'shared')).includes('Warning ProvisioningFailed: storageclass.storage.k8s.io "manual" not found'));
  assert.equal((await client.get(PVCS, 'shared', 'binding')).status?.phase, 'Pending');
  // No class at all: kube's FailedBinding.
  await claim('binding', 'classless', '1Gi', { storageClassName: '' });
  await eventually('FailedBinding', async () => (await events('binding', 'classless')).includes('Normal FailedBinding: no persistent volumes available for this claim and no storage class is set'));
  // A volume that fits comes later: the waiting claim takes it.
  await volume('rwx-8g', '8Gi', { accessModes: ['ReadWriteMany', 'ReadWriteOnce'] });
  assert.equal((await bound('binding', 'shared')).spec?.volumeName, 'rwx-8g');
});

test('selectors and pre-binding: a claim takes only labelled volumes, or the one it names', async () => {
  await namespace('choosing');
  await volume('fast-2g', '2Gi', {}, { speed: 'fast' });
  await volume('plain-1g', '1Gi');
  await volume('named-3g', '3Gi');
  await claim('choosing', 'picky', '1Gi', { selector: { matchLabels: { speed: 'fast' } } });
  assert.equal((await bound('choosing', 'picky')).spec?.volumeName, 'fast-2g');
  await claim('choosing', 'named', '1Gi', { volumeName: 'named-3g' });
  const named = await bound('choosing', 'named');
  assert.equal(named.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], undefined, 'the user bound it');
  assert.equal(named.metadata.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
});

test('reclaim: a deleted claim\'s Retain volume is Released, its Delete volume deleted', async () => {
  await namespace('reclaim');
  await volume('kept', '1Gi', { storageClassName: 'keep' });
  await volume('dropped', '1Gi', { storageClassName: 'drop', persistentVolumeReclaimPolicy: 'Delete' });
  await claim('reclaim', 'keep-me', '1Gi', { storageClassName: 'keep' });
  await claim('reclaim', 'drop-me', '1Gi', { storageClassName: 'drop' });
  await bound('reclaim', 'keep-me');
  await bound('reclaim', 'drop-me');
  await client.delete(PVCS, 'keep-me', 'reclaim');
  await client.delete(PVCS, 'drop-me', 'reclaim');
  await eventually('kept Released', async () => (await phaseOf('kept')) === 'Released');
  assert.match((await api.kubectl(['get', 'pv', 'kept'])).stdout, /^kept\s+1Gi\s+RWO\s+Retain\s+Released\s+reclaim\/keep-me\s+keep\s/m);
  await eventually('dropped deleted (its pv-protection finalizer removed once not Bound)', async () => (await client.read(PVS, 'dropped')) === undefined);
  // An administrator frees the Released volume by removing its claimRef: Available again.
  await client.mergePatch(PVS, 'kept', undefined, { spec: { claimRef: null } });
  await eventually('kept Available', async () => (await phaseOf('kept')) === 'Available');
});

test('pvc-protection: a claim a running pod uses stays Terminating until the pod is gone; pv-protection keeps a Bound volume', async () => {
  await namespace('protect');
  await createNode(client, 'protect-node');
  await volume('guarded', '1Gi', { storageClassName: 'guard' });
  await claim('protect', 'in-use', '1Gi', { storageClassName: 'guard' });
  await bound('protect', 'in-use');
  await client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'user', namespace: 'protect' }, spec: { nodeName: 'protect-node', containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'in-use' } }] } });
  await client.delete(PVCS, 'in-use', 'protect');
  await client.delete(PVS, 'guarded');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.ok((await client.get(PVCS, 'in-use', 'protect')).metadata.deletionTimestamp, 'kept while the pod uses it');
  assert.match((await api.kubectl(['get', 'pvc', 'in-use', '-n', 'protect'])).stdout, /^in-use\s+Terminating\s+guarded\s/m);
  assert.equal(await phaseOf('guarded'), 'Bound', 'kept while bound');
  await client.delete(PODS, 'user', 'protect', { gracePeriodSeconds: 0 });
  await eventually('the claim gone', async () => (await client.read(PVCS, 'in-use', 'protect')) === undefined);
  await eventually('the volume gone once Released', async () => (await client.read(PVS, 'guarded')) === undefined);
});

test('WaitForFirstConsumer: the claim waits for the selected node, then binds the volume there; a class with a provisioner is handed to it', async () => {
  await namespace('delayed');
  await createNode(client, 'node-a');
  await createNode(client, 'node-b');
  await client.create(CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' });
  const onNode = (node: string) => ({ storageClassName: 'local', nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } } });
  await volume('local-a', '1Gi', onNode('node-a'));
  await volume('local-b', '1Gi', onNode('node-b'));
  await claim('delayed', 'late', '1Gi', { storageClassName: 'local' });
  await eventually('WaitForFirstConsumer', async () => (await events('delayed', 'late')).includes('Normal WaitForFirstConsumer: waiting for first consumer to be created before binding'));
  assert.equal((await client.get(PVCS, 'late', 'delayed')).status?.phase, 'Pending');
  await client.mergePatch(PVCS, 'late', 'delayed', { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'node-b' } } });
  assert.equal((await bound('delayed', 'late')).spec?.volumeName, 'local-b');

  await client.create(CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'made' }, provisioner: 'example.com/maker' });
  await claim('delayed', 'to-make', '1Gi', { storageClassName: 'made' });
  const handed = await eventually('handed to the provisioner', async () => (await client.get(PVCS, 'to-make', 'delayed')).metadata.annotations?.['volume.kubernetes.io/storage-provisioner']);
  assert.equal(handed, 'example.com/maker');
  await eventually('ExternalProvisioning', async () => (await events('delayed', 'to-make')).some((e: string) => e.startsWith("Normal ExternalProvisioning: Waiting for a volume to be created either by the external provisioner 'example.com/maker'")));
});

test('a claim made while there was no default class gets the default once there is one', async () => {
  await namespace('late');
  await client.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'early', namespace: 'late' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  await client.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'classless', namespace: 'late' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } });
  assert.equal((await client.get(PVCS, 'early', 'late')).spec?.storageClassName, undefined);
  await client.create(CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'late-default', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/late' });
  await eventually('the default given', async () => (await client.get(PVCS, 'early', 'late')).spec?.storageClassName === 'late-default');
  assert.equal((await client.get(PVCS, 'classless', 'late')).spec?.storageClassName, '', '"" asks for no class and keeps it');
  // Only a claim without any class may be given one.
  const changed = await api.request('PATCH', '/api/v1/namespaces/late/persistentvolumeclaims/early', { contentType: 'application/merge-patch+json', body: { spec: { storageClassName: 'other' } } });
  assert.equal(changed.status, 422);
});
