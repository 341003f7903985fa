// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// Storage end to end on a booted node: the scheduler, the binder, the local-path provisioner and
// the node agent together. A pod whose claim names no class (the payload's `standard`,
// WaitForFirstConsumer) is placed, its claim given the node and provisioned there, the pod bound
// once the claim is, and its process writes into the volume — a directory of the machine root;
// once pod and claim are deleted, the helper pod (the real `bosun local-path-helper`) deletes the
// directory and the volume goes. A pod whose claim does not exist waits with kube's message, and
// is placed once the claim exists and is bound to a volume pinned to the node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse } from 'yaml';
import type * as api from '../../src/api/index.js';
import type { Instance } from '../../src/cloud/types.js';
import { bosunCommand } from '../../src/cluster/node-agent/runtime.js';
import { Scheduler } from '../../src/cluster/scheduler/scheduler.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { EventRecorder, InformerFactory, resources } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { bootstrapUserData, bootWorker, startNodeCluster, type NodeCluster } from './node-agent-fixture.js';

const COMPONENT = fileURLToPath(new URL('./node-agent-component.mjs', import.meta.url));
const PODS = resources.pods;
const PVS = resources.persistentVolumes;
const PVCS = resources.persistentVolumeClaims;

let c: NodeCluster;
let machine: Instance;
let root: string;
let controllers: Promise<void>;
let scheduling: Promise<void>;

before(async () => {
  c = await startNodeCluster({
    // The helper pods run the real bosun command; anything else the test component.
    agent: { componentCommand: (argv) => (argv[0] === 'local-path-helper' ? bosunCommand(argv) : [process.execPath, COMPONENT, ...argv]) },
  });
  controllers = runWorkloadControllers({ kubeconfig: c.kube.kubeconfig, signal: c.signal, leaderElection: false, controllers: ['persistentvolume-binder', 'pvc-protection', 'pv-protection', 'local-path-provisioner'] });
  const scheduler = new Scheduler({ client: c.kube, informers: new InformerFactory(c.kube), events: new EventRecorder(c.kube, { component: 'default-scheduler' }), initialBackoffMs: 200, maxBackoffMs: 1000 });
  scheduling = scheduler.start(c.signal);
  const standard = parse(readFileSync(new URL('../../release-payload/manifests/0000_50_storage_00_standard.storageclass.yaml', import.meta.url), 'utf8')) as api.StorageClass;
  await c.kube.create(resources.storageClasses, standard);
  machine = await bootWorker(c, 'worker-v', await bootstrapUserData(c));
  root = join(c.dataDir, 'machines', machine.id, 'root');
  await eventually('node registered', () => c.kube.read(resources.nodes, 'worker-v'));
});
after(async () => {
  await c?.close();
  await controllers;
  await scheduling;
});

const writer = (name: string, claimName: string): api.Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: {
    terminationGracePeriodSeconds: 5,
    // No cloud controller manager here: the node keeps its uninitialized taint.
    tolerations: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', operator: 'Exists' }],
    containers: [{
      name: 'main', image: 'bosun.local/test-component:v1', args: ['serve'],
      env: [{ name: 'WRITE_PATH', value: '/data/written' }, { name: 'MY_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'MY_NAMESPACE', value: 'default' }],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
  },
});
const claim = (name: string, spec: Partial<NonNullable<api.PersistentVolumeClaim['spec']>> = {}): api.PersistentVolumeClaim => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const running = (name: string) => eventually(`${name} Running`, async () => {
  const p = await c.kube.read(PODS, name, 'default');
  return p?.status?.phase === 'Running' ? p : undefined;
}, 45_000);

test('a pod with a claim of the default class: placed, provisioned on its node, mounted; deleted, its directory removed by a helper pod', { timeout: 120_000 }, async () => {
  const created = await c.kube.create(PVCS, claim('data'));
  await c.kube.create(PODS, writer('writer', 'data'));
  const pod = await running('writer');
  assert.equal(pod.spec?.nodeName, 'worker-v');
  const bound = await c.kube.get(PVCS, 'data', 'default');
  assert.deepEqual([bound.status?.phase, bound.spec?.storageClassName, bound.metadata.annotations?.['volume.kubernetes.io/selected-node']], ['Bound', 'standard', 'worker-v']);
  const pv = `pvc-${created.metadata.uid}`;
  assert.equal(bound.spec?.volumeName, pv);
  const dir = join(root, 'opt/local-path-provisioner', `${pv}_default_data`);
  await eventually('the process wrote into the volume', () => existsSync(join(dir, 'written')), 30_000);
  assert.equal(readFileSync(join(dir, 'written'), 'utf8'), 'written by writer\n', 'the volume is the machine root\'s directory');

  await c.kube.delete(PVCS, 'data', 'default');
  assert.ok((await c.kube.read(PVCS, 'data', 'default'))?.metadata.deletionTimestamp, 'kept while the pod uses it');
  await c.kube.delete(PODS, 'writer', 'default', { gracePeriodSeconds: 0 });
  await eventually('the claim gone', async () => (await c.kube.read(PVCS, 'data', 'default')) === undefined, 30_000);
  await eventually('the volume deleted after its directory', async () => (await c.kube.read(PVS, pv)) === undefined, 60_000);
  assert.equal(existsSync(dir), false, 'the helper pod deleted the directory');
  assert.equal(existsSync(join(root, 'opt/local-path-provisioner')), true, 'and only it');
});

test('a pod whose claim does not exist waits with kube\'s message; placed once the claim is bound to a volume on the node', { timeout: 120_000 }, async () => {
  await c.kube.create(PODS, writer('waiting', 'later'));
  const message = '0/1 nodes are available: persistentvolumeclaim "later" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
  await eventually('FailedScheduling', async () => {
    const p = await c.kube.read(PODS, 'waiting', 'default');
    return p?.status?.conditions?.some((x) => x.type === 'PodScheduled' && x.status === 'False' && x.message === message);
  });
  await c.kube.create(PVS, {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'manual-v' },
    spec: {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', hostPath: { path: '/srv/manual-v' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['worker-v'] }] }] } },
    },
  });
  await c.kube.create(PVCS, claim('later', { storageClassName: '' }));
  const pod = await running('waiting');
  assert.equal(pod.spec?.nodeName, 'worker-v');
  await eventually('the process wrote into the manual volume', () => existsSync(join(root, 'srv/manual-v/written')), 30_000);
  await c.kube.delete(PODS, 'waiting', 'default', { gracePeriodSeconds: 0 });
});
