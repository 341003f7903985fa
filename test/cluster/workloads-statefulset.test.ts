// The StatefulSet controller against the embedded API server, with the scheduler and kubelet
// stand-ins: pods `<set>-<n>` created one at a time in order, each only once the one before is
// Running and Ready, with their stable identity (hostname, subdomain, pod-name and pod-index
// labels) and revision; scaled down highest ordinal first; rolled from the highest ordinal down,
// one pod at a time, and only above the partition; a failed pod recreated; Parallel pods made at
// once; the status `kubectl rollout status statefulset` reads, `rollout history` and `undo`; and
// the plan for claims and identities as tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { InformerFactory, loadKubeConfig, resources } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { CONTROLLER_REVISIONS, PODS, STATEFUL_SETS } from '../../src/cluster/workloads/resources.js';
import { planStatefulSet, podClaims, statefulPod, type Revision } from '../../src/cluster/workloads/statefulset.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startStandIns, startWorkloadTestServer } from './workloads/stand-ins.js';

const statefulSet = (name: string, spec: Partial<api.StatefulSet['spec']> = {}): api.StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name, namespace: 'default' },
  spec: {
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'db:1' }] } },
    ...spec,
  } as api.StatefulSet['spec'],
});

test('a StatefulSet makes its pods in order, each after the one before is ready, scales down from the top and rolls from the top within the partition', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const held = new Set<string>(['web-0']);
  let failing = '';
  const standIns = startStandIns(client, { readyAfterMs: 50, holdReady: (p) => held.has(p.metadata.name), phase: (p) => (p.metadata.uid === failing ? 'Failed' : 'Running') });
  const factory = new InformerFactory(client);
  try {
    await createNode(client, 'worker-a');
    await createNode(client, 'worker-b');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['statefulset'], leaderElection: false });
    // Every pod event, to see the order things happened in.
    const seen: string[] = [];
    const pods = factory.forResource(PODS);
    const poke = (name: string) => client.mergePatch(PODS, name, 'default', { metadata: { annotations: { poked: String(Date.now()) } } });
    pods.on((type, pod, old) => {
      if (type === 'add') seen.push(`+${pod.metadata.name}`);
      if (type === 'update' && pod.metadata.deletionTimestamp && !old?.metadata.deletionTimestamp) seen.push(`-${pod.metadata.name}`);
    });
    factory.start(stop.signal);
    await factory.waitForSync();
    await client.create(STATEFUL_SETS, statefulSet('web', { replicas: 3 }));

    // OrderedReady: web-1 waits for web-0 to be Running and Ready.
    await eventually('web-0 created', () => pods.get('web-0', 'default'));
    await new Promise((r) => setTimeout(r, 600));
    assert.deepEqual(seen, ['+web-0'], 'nothing after web-0 while it is not ready');
    held.clear();
    await poke('web-0'); // the kubelet stand-in looks at a pod again on its next event
    const settled = (want: number, image: string) =>
      eventually(`web at ${want} × ${image}`, async () => {
        const set = await client.get(STATEFUL_SETS, 'web', 'default');
        const live = pods.list().filter((p) => !p.metadata.deletionTimestamp);
        const s = set.status ?? ({} as NonNullable<api.StatefulSet['status']>);
        return live.length === want && live.every((p) => p.spec!.containers[0].image === image) && s.readyReplicas === want && s.currentRevision === s.updateRevision && s.observedGeneration === set.metadata.generation && set;
      });
    let set = await settled(3, 'db:1');
    assert.deepEqual(seen, ['+web-0', '+web-1', '+web-2']);

    // Identity: the name's ordinal, hostname and subdomain, the labels, the revision's name.
    const web1 = pods.get('web-1', 'default')!;
    assert.equal(web1.spec!.hostname, 'web-1');
    assert.equal(web1.spec!.subdomain, 'web');
    assert.equal(web1.metadata.labels!['statefulset.kubernetes.io/pod-name'], 'web-1');
    assert.equal(web1.metadata.labels!['apps.kubernetes.io/pod-index'], '1');
    assert.equal(web1.metadata.labels!['controller-revision-hash'], set.status!.updateRevision);
    assert.match(set.status!.updateRevision!, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.ok(await client.read(CONTROLLER_REVISIONS, set.status!.updateRevision!, 'default'), 'the revision is a ControllerRevision');
    assert.deepEqual(
      { ...set.status, currentRevision: undefined, updateRevision: undefined },
      { observedGeneration: 1, replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: undefined, updateRevision: undefined, collisionCount: 0 },
    );
    // kube's defaults.
    assert.deepEqual(
      { policy: set.spec!.podManagementPolicy, strategy: set.spec!.updateStrategy, history: set.spec!.revisionHistoryLimit, retention: set.spec!.persistentVolumeClaimRetentionPolicy },
      { policy: 'OrderedReady', strategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, history: 10, retention: { whenDeleted: 'Retain', whenScaled: 'Retain' } },
    );

    // A rolling update: highest ordinal first, one pod at a time; kubectl waits for it.
    seen.length = 0;
    await api.kubectlOk(['set', 'image', 'statefulset/web', 'c=db:2']);
    const rolled = await api.kubectl(['rollout', 'status', 'statefulset/web', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(rolled.code, 0, rolled.stderr);
    set = await settled(3, 'db:2');
    // (kubectl says "partitioned" whenever spec.updateStrategy.rollingUpdate is set, as kube's defaults set it.)
    assert.match(rolled.stdout, /partitioned roll out complete: 3 new pods have been updated\.\.\./);
    assert.deepEqual(seen, ['-web-2', '+web-2', '-web-1', '+web-1', '-web-0', '+web-0']);

    // With a partition, only the pods at or above it roll; the current revision stays.
    const before = set.status!.currentRevision;
    await client.mergePatch(STATEFUL_SETS, 'web', 'default', { spec: { updateStrategy: { rollingUpdate: { partition: 2 } }, template: { spec: { containers: [{ name: 'c', image: 'db:3' }] } } } });
    await eventually('web-2 at db:3', async () => {
      const s = (await client.get(STATEFUL_SETS, 'web', 'default')).status!;
      return pods.get('web-2', 'default')?.spec!.containers[0].image === 'db:3' && s.updatedReplicas === 1 && s.readyReplicas === 3;
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(['web-0', 'web-1'].map((n) => pods.get(n, 'default')!.spec!.containers[0].image), ['db:2', 'db:2'], 'below the partition nothing rolls');
    const partitioned = (await client.get(STATEFUL_SETS, 'web', 'default')).status!;
    assert.equal(partitioned.currentRevision, before);
    assert.notEqual(partitioned.updateRevision, before);
    const waiting = await api.kubectl(['rollout', 'status', 'statefulset/web', '--watch=false']);
    assert.match(waiting.stdout, /partitioned roll out complete: 1 new pods have been updated/);
    await client.mergePatch(STATEFUL_SETS, 'web', 'default', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
    set = await settled(3, 'db:3');

    // A failed pod is deleted and made again.
    seen.length = 0;
    failing = pods.get('web-1', 'default')!.metadata.uid!; // this web-1 fails, not the one made after it
    await poke('web-1');
    await eventually('web-1 failed and replaced', () => seen.includes('+web-1'));
    await settled(3, 'db:3');
    const events = await client.list(resources.events, 'default', { fieldSelector: 'reason=RecreatingFailedPod' });
    assert.match(events.items[0]?.message ?? '', /StatefulSet default\/web is recreating failed Pod web-1/);

    // Scale down: highest ordinal first, one at a time.
    seen.length = 0;
    await api.kubectlOk(['scale', 'statefulset/web', '--replicas=1']);
    await settled(1, 'db:3');
    assert.deepEqual(seen, ['-web-2', '-web-1']);

    // History: one revision per template, and kubectl rolls back through it.
    const history = await api.kubectlOk(['rollout', 'history', 'statefulset/web']);
    assert.deepEqual(history.split('\n').map((l) => l.split(/\s+/)[0]).filter((w) => /^\d+$/.test(w)), ['1', '2', '3']);
    assert.equal((await api.kubectl(['rollout', 'undo', 'statefulset/web', '--to-revision=1'])).code, 0);
    await settled(1, 'db:1');

    // Parallel: every pod made at once, ready or not.
    seen.length = 0;
    for (const n of ['db-0', 'db-1', 'db-2']) held.add(n);
    await client.create(STATEFUL_SETS, statefulSet('db', { replicas: 3, podManagementPolicy: 'Parallel' }));
    await eventually('all three db pods', () => ['db-0', 'db-1', 'db-2'].every((n) => pods.get(n, 'default')));
    held.clear();
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await factory.stop();
    await standIns.stop();
    await api.stop();
  }
});

test('each pod\'s claims are made before it from volumeClaimTemplates, owned as persistentVolumeClaimRetentionPolicy says', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const standIns = startStandIns(client, { readyAfterMs: 20 });
  try {
    await createNode(client, 'worker-a');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['statefulset'], leaderElection: false });
    const claimTemplate = { metadata: { name: 'data', labels: { tier: 'db' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    await client.create(STATEFUL_SETS, statefulSet('db', { replicas: 2, volumeClaimTemplates: [claimTemplate], persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' } }));
    await eventually('db-1 ready', async () => (await client.get(STATEFUL_SETS, 'db', 'default')).status?.readyReplicas === 2);
    const claims = async () => (await client.list(resources.persistentVolumeClaims, 'default')).items.filter((c) => !c.metadata.deletionTimestamp);
    assert.deepEqual((await claims()).map((c) => [c.metadata.name, c.metadata.labels, c.spec!.resources!.requests!.storage, c.metadata.ownerReferences]), [
      ['data-db-0', { tier: 'db', app: 'db' }, '1Gi', undefined],
      ['data-db-1', { tier: 'db', app: 'db' }, '1Gi', undefined],
    ]);
    const pod = await client.get(PODS, 'db-1', 'default');
    assert.deepEqual(pod.spec!.volumes!.find((v) => v.name === 'data'), { name: 'data', persistentVolumeClaim: { claimName: 'data-db-1' } });
    const defaulted = (await client.get(STATEFUL_SETS, 'db', 'default')).spec!.volumeClaimTemplates![0];
    assert.deepEqual([defaulted.apiVersion, defaulted.kind, defaulted.spec!.volumeMode, defaulted.status], ['v1', 'PersistentVolumeClaim', 'Filesystem', { phase: 'Pending' }]);

    // whenScaled: Delete — a condemned pod's claims are given to it (the garbage collector deletes them after it).
    const db1 = pod.metadata.uid;
    await client.mergePatch(STATEFUL_SETS, 'db', 'default', { spec: { replicas: 1 } });
    await eventually('data-db-1 owned by db-1', async () => (await claims()).find((c) => c.metadata.name === 'data-db-1')?.metadata.ownerReferences?.some((r) => r.kind === 'Pod' && r.uid === db1));
    assert.equal((await claims()).find((c) => c.metadata.name === 'data-db-0')!.metadata.ownerReferences, undefined, 'the claims of the pods that stay are left alone');
    const events = (await client.list(resources.events, 'default', { fieldSelector: 'involvedObject.name=db' })).items.map((e) => e.message);
    const [claimMade, podMade] = [events.indexOf('create Claim data-db-0 Pod db-0 in StatefulSet db success'), events.indexOf('create Pod db-0 in StatefulSet db successful')];
    assert.ok(claimMade >= 0 && claimMade < podMade, `the claim before the pod: ${events.join('; ')}`);

    // A claim the API server refuses: an Event says why, and the pod is not made without it.
    await client.create(STATEFUL_SETS, statefulSet('bad', { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] }));
    const refused = await eventually('the claim refused', async () =>
      (await client.list(resources.events, 'default', { fieldSelector: 'involvedObject.name=bad,reason=FailedCreate' })).items[0]?.message);
    assert.match(refused, /^create Claim data-bad-0 for Pod bad-0 in StatefulSet bad failed error: .*spec\.resources\[storage\]: Required value$/);
    assert.equal(await client.read(PODS, 'bad-0', 'default'), undefined);
    const failures = (await client.list(resources.events, 'default', { fieldSelector: 'involvedObject.name=bad,reason=FailedCreate' })).items.map((e) => e.message ?? '');
    assert.ok(failures.every((m) => m.startsWith('create Claim ')), `one Event for the claim, none for the pod not tried: ${failures.join('; ')}`);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
});

test('what one sync of a StatefulSet does, as kube decides it', () => {
  const set = statefulSet('web', { replicas: 3, volumeClaimTemplates: [{ metadata: { name: 'data', labels: { tier: 'db' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] });
  set.metadata.uid = 'u1';
  const current: Revision = { name: 'web-old', template: set.spec!.template };
  const update: Revision = { name: 'web-new', template: { ...set.spec!.template, spec: { containers: [{ name: 'c', image: 'db:2' }] } } };
  const ready = (pod: api.Pod, revision = 'web-new'): api.Pod => ({
    ...pod,
    metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, 'controller-revision-hash': revision } },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const pod = (n: number, revision?: string) => ready(statefulPod(set, update, n), revision);

  // The pod of an ordinal: its claims mount in place of a template volume of the same name.
  const made = statefulPod(set, { name: 'web-new', template: { ...update.template, spec: { ...update.template.spec!, volumes: [{ name: 'data', emptyDir: {} }, { name: 'tmp', emptyDir: {} }] } } }, 2);
  assert.deepEqual(made.spec.volumes, [{ name: 'tmp', emptyDir: {} }, { name: 'data', persistentVolumeClaim: { claimName: 'data-web-2' } }]);
  assert.deepEqual(podClaims(set, 2).map((c) => [c.metadata.name, c.metadata.labels, c.metadata.ownerReferences]), [['data-web-2', { tier: 'db', app: 'web' }, undefined]]);
  const deleting = { ...set, spec: { ...set.spec!, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } } };
  assert.deepEqual(podClaims(deleting, 0)[0].metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['StatefulSet', 'web', false]]);

  const plan = (pods: api.Pod[], s = set) => planStatefulSet(s, pods, current, update, Date.now());
  // Missing ordinals: OrderedReady makes the lowest first, with its claims; Parallel all at once.
  assert.deepEqual(plan([pod(0)]).create.map((c) => [c.pod.metadata.name, c.claims.map((x) => x.metadata.name)]), [['web-1', ['data-web-1']]]);
  assert.deepEqual(plan([]).create.map((c) => c.pod.metadata.name), ['web-0']);
  assert.deepEqual(plan([], { ...set, spec: { ...set.spec!, podManagementPolicy: 'Parallel' } }).create.map((c) => c.pod.metadata.name), ['web-0', 'web-1', 'web-2']);
  // An unready pod holds everything after it.
  const unready = { ...pod(0), status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } } as api.Pod;
  assert.deepEqual(plan([unready]), { delete: [], create: [], relabel: [], waitingFor: 'Pod web-0 to be Running and Ready' });
  // Beyond the replicas: highest first, one at a time.
  assert.deepEqual(plan([0, 1, 2, 3, 4].map((n) => pod(n))).delete.map((d) => [d.pod.metadata.name, d.why]), [['web-4', 'scale-down']]);
  // Rolling: the highest pod not at the update revision; the partition stops it.
  assert.deepEqual(plan([pod(0, 'web-old'), pod(1, 'web-old'), pod(2, 'web-old')]).delete.map((d) => d.pod.metadata.name), ['web-2']);
  assert.deepEqual(plan([pod(0, 'web-old'), pod(1, 'web-old'), pod(2)]).delete.map((d) => d.pod.metadata.name), ['web-1']);
  const partitioned = { ...set, spec: { ...set.spec!, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } } };
  assert.deepEqual(plan([pod(0, 'web-old'), pod(1, 'web-old'), pod(2)], partitioned).delete, []);
  // Below the partition a new pod is made at the current revision.
  assert.equal(plan([], partitioned).create[0].pod.metadata.labels!['controller-revision-hash'], 'web-old');
  // OnDelete: nothing rolls.
  assert.deepEqual(plan([pod(0, 'web-old'), pod(1, 'web-old'), pod(2, 'web-old')], { ...set, spec: { ...set.spec!, updateStrategy: { type: 'OnDelete' } } }).delete, []);
  // A failed pod is deleted to be made again; a lost identity label is put back.
  const failed = { ...pod(1), status: { phase: 'Failed' } } as api.Pod;
  assert.deepEqual(plan([pod(0), failed]).delete.map((d) => [d.pod.metadata.name, d.why]), [['web-1', 'recreate']]);
  const unlabelled = pod(0);
  delete unlabelled.metadata.labels!['apps.kubernetes.io/pod-index'];
  assert.deepEqual(plan([unlabelled, pod(1), pod(2)]).relabel.map((r) => r.labels), [{ 'statefulset.kubernetes.io/pod-name': 'web-0', 'apps.kubernetes.io/pod-index': '0' }]);
  // spec.ordinals.start shifts the names.
  assert.deepEqual(plan([], { ...set, spec: { ...set.spec!, ordinals: { start: 5 }, podManagementPolicy: 'Parallel' } }).create.map((c) => c.pod.metadata.name), ['web-5', 'web-6', 'web-7']);
});
