// bosun's local-path provisioner with the binder, against the real API server: the payload's
// default class `standard` (WaitForFirstConsumer) makes a claim wait for the scheduler's selected
// node, then a hostPath volume pinned to that node is made and bound (kube's events on the claim);
// an Immediate class or a ReadWriteMany claim is refused; a released volume's directory is deleted
// by a helper pod on its node before the volume goes; the helper deletes only a volume's directory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type * as kube from '../../src/api/index.js';
import { loadKubeConfig, resources, type KubeClient } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { NAMESPACES, PODS } from '../../src/cluster/workloads/resources.js';
import { deleteVolumeDirectory } from '../../src/cluster/storage/local-path-helper.js';
import { eventually } from '../helpers/eventually.js';
import { runBosun } from '../helpers/cli.js';
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
  running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['persistentvolume-binder', 'pvc-protection', 'pv-protection', 'local-path-provisioner'], leaderElection: false });
  // The class the release payload installs.
  const manifest = parse(readFileSync(new URL('../../release-payload/manifests/0000_50_storage_00_standard.storageclass.yaml', import.meta.url), 'utf8')) as kube.StorageClass;
  await client.create(CLASSES, manifest);
  await createNode(client, 'worker-1');
});
after(async () => {
  stop.abort();
  await running;
  await api.stop();
});

const claim = (ns: string, name: string, spec: Partial<NonNullable<kube.PersistentVolumeClaim['spec']>> = {}) =>
  client.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, ...spec } });
const events = async (ns: string, name: string) => (await api.request('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${name}`)).json.items.map((e: kube.Event) => `${e.type} ${e.reason}: ${e.message}`);
const selectNode = (ns: string, name: string, node: string) => client.mergePatch(PVCS, name, ns, { metadata: { annotations: { 'volume.kubernetes.io/selected-node': node } } });

test('a claim of the default class waits for its node, then gets a local-path volume there, bound', async () => {
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
  const created = await claim('apps', 'data');
  assert.equal(created.spec?.storageClassName, 'standard', 'the default class');
  await eventually('WaitForFirstConsumer', async () => (await events('apps', 'data')).includes('Normal WaitForFirstConsumer: waiting for first consumer to be created before binding'));
  assert.deepEqual(await client.list(PVS).then((l) => l.items), [], 'nothing made before a node is chosen');

  await selectNode('apps', 'data', 'worker-1');
  const bound = await eventually('bound', async () => {
    const c = await client.get(PVCS, 'data', 'apps');
    return c.status?.phase === 'Bound' ? c : undefined;
  });
  const name = `pvc-${created.metadata.uid}`;
  assert.equal(bound.spec?.volumeName, name);
  assert.equal(bound.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], 'bosun.io/local-path');
  const pv = await client.get(PVS, name);
  assert.deepEqual(pv.spec?.hostPath, { path: `/opt/local-path-provisioner/${name}_apps_data`, type: 'DirectoryOrCreate' });
  assert.deepEqual(pv.spec?.nodeAffinity, { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['worker-1'] }] }] } });
  assert.deepEqual([pv.spec?.capacity, pv.spec?.accessModes, pv.spec?.persistentVolumeReclaimPolicy, pv.spec?.storageClassName, pv.status?.phase], [{ storage: '2Gi' }, ['ReadWriteOnce'], 'Delete', 'standard', 'Bound']);
  assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'bosun.io/local-path');
  const said = await events('apps', 'data');
  assert.ok(said.includes('Normal Provisioning: External provisioner is provisioning volume for claim "apps/data"'), said.join('\n'));
  assert.ok(said.includes(`Normal ProvisioningSucceeded: Successfully provisioned volume ${name}`), said.join('\n'));
  assert.match((await api.kubectl(['get', 'pvc', 'data', '-n', 'apps'])).stdout, new RegExp(`^data\\s+Bound\\s+${name}\\s+2Gi\\s+RWO\\s+standard\\s+<unset>\\s`, 'm'));
  assert.match((await api.kubectl(['get', 'sc'])).stdout, /^standard \(default\)\s+bosun\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false\s/m);

  // Released under Delete: a helper pod deletes the directory on the node, then the volume goes.
  await client.delete(PVCS, 'data', 'apps');
  const helper = await eventually('the helper pod', () => client.read(PODS, `helper-pod-delete-${name}`, 'kube-system'));
  assert.equal(helper.spec?.nodeName, 'worker-1');
  assert.deepEqual(helper.spec?.containers[0].args, ['local-path-helper', 'delete', '--path', `/data/${name}_apps_data`]);
  assert.deepEqual(helper.spec?.volumes, [{ name: 'data', hostPath: { path: '/opt/local-path-provisioner', type: 'DirectoryOrCreate' } }]);
  assert.ok(await client.read(PVS, name), 'kept until the directory is gone');
  await client.mergePatch(PODS, helper.metadata.name, 'kube-system', { status: { phase: 'Succeeded' } }, 'status');
  await eventually('the volume deleted', async () => (await client.read(PVS, name)) === undefined);
  await eventually('the helper pod deleted', async () => (await client.read(PODS, helper.metadata.name, 'kube-system'))?.metadata.deletionTimestamp !== undefined || (await client.read(PODS, helper.metadata.name, 'kube-system')) === undefined);
});

test('what one node\'s directory cannot serve is refused: an Immediate class, ReadWriteMany', async () => {
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'refused' } });
  await client.create(CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local-now' }, provisioner: 'bosun.io/local-path', volumeBindingMode: 'Immediate' });
  await claim('refused', 'now', { storageClassName: 'local-now' });
  await eventually('ProvisioningFailed', async () => (await events('refused', 'now')).some((e: string) => e.startsWith('Warning ProvisioningFailed: failed to provision volume with StorageClass "local-now": bosun.io/local-path makes a volume on the node of the claim\'s first pod')));
  await claim('refused', 'shared', { accessModes: ['ReadWriteMany'] });
  await selectNode('refused', 'shared', 'worker-1');
  await eventually('ProvisioningFailed', async () => (await events('refused', 'shared')).some((e: string) => e.includes('only ReadWriteOnce and ReadWriteOncePod are supported, not ReadWriteMany')));
  assert.equal((await client.list(PVS)).items.length, 0);
});

test('the helper deletes one volume directory below its mount, and refuses anything else', async () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-local-path-'));
  const previous = process.env.BOSUN_IN_CLUSTER_ROOT;
  try {
    // The pod's view: /data is a link to the machine's provisioner directory, as the node agent mounts hostPath volumes.
    const machineDir = join(root, 'machine/opt/local-path-provisioner');
    mkdirSync(join(machineDir, 'pvc-1_ns_c/sub'), { recursive: true });
    writeFileSync(join(machineDir, 'pvc-1_ns_c/sub/file'), 'x');
    mkdirSync(join(machineDir, 'pvc-2_ns_d'));
    mkdirSync(join(root, 'pod'));
    symlinkSync(machineDir, join(root, 'pod/data'));
    process.env.BOSUN_IN_CLUSTER_ROOT = join(root, 'pod');
    deleteVolumeDirectory('/data/pvc-1_ns_c');
    assert.equal(existsSync(join(machineDir, 'pvc-1_ns_c')), false);
    assert.equal(existsSync(join(machineDir, 'pvc-2_ns_d')), true, 'other volumes kept');
    for (const bad of ['/data', '/data/', '/data/../etc', '/data/a/b', 'data/x', '/elsewhere/x']) assert.throws(() => deleteVolumeDirectory(bad), /refusing to delete/, bad);
    // As a helper pod runs it: the bosun command.
    const env = { BOSUN_IN_CLUSTER_ROOT: join(root, 'pod') };
    const ran = await runBosun(['local-path-helper', 'delete', '--path', '/data/pvc-2_ns_d'], { env });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(existsSync(join(machineDir, 'pvc-2_ns_d')), false);
    const refused = await runBosun(['local-path-helper', 'delete', '--path', '/data'], { env });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /refusing to delete "\/data": a volume's directory is one level below \/data/);
    assert.equal(existsSync(machineDir), true);
  } finally {
    if (previous === undefined) delete process.env.BOSUN_IN_CLUSTER_ROOT;
    else process.env.BOSUN_IN_CLUSTER_ROOT = previous;
    rmSync(root, { recursive: true, force: true });
  }
});
