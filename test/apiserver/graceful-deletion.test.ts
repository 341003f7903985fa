// Graceful pod deletion as kube-apiserver does it: the step a request takes (table), and against
// the embedded API server with the real kubectl — an unbound pod goes at once; a bound pod is
// marked (deletionTimestamp = now + grace, deletionGracePeriodSeconds) and stays through status
// updates; a later request may only shorten the period; grace 0 (kubectl --force) removes it; a
// finalizer still holds a pod whose grace is over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRef } from '../../src/kube/client.js';
import { gracefulStep } from '../../src/apiserver/registry/graceful-deletion.js';
import { KubeClient, loadKubeConfig, type Obj } from '../../src/kube/index.js';
import { startTestApiServer } from '../helpers/apiserver.js';

const PODS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const NOW = Date.parse('2026-01-01T00:00:00Z');
const podPeriod = (own: number) => (asked: number | undefined) => asked ?? own;

test('the step a deletion request takes', () => {
  const marked = { deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 };
  const cases: Array<[string, Obj, number | undefined, number, ReturnType<typeof gracefulStep>]> = [
    ['first request, the pod\'s own period', {}, undefined, 30, { kind: 'graceful', deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30, first: true }],
    ['first request, a period asked for', {}, 5, 30, { kind: 'graceful', deletionTimestamp: '2026-01-01T00:00:05Z', deletionGracePeriodSeconds: 5, first: true }],
    ['a negative period counts as 1 s', {}, -1, 30, { kind: 'graceful', deletionTimestamp: '2026-01-01T00:00:01Z', deletionGracePeriodSeconds: 1, first: true }],
    ['no period: at once', {}, undefined, 0, { kind: 'immediate' }],
    ['0 asked: at once', {}, 0, 30, { kind: 'immediate' }],
    ['again, nothing asked: pending', marked, undefined, 30, { kind: 'pending' }],
    ['again, a longer period: pending', marked, 60, 30, { kind: 'pending' }],
    ['again, shorter: the timestamp moves back by the difference', marked, 10, 30, { kind: 'graceful', deletionTimestamp: '2026-01-01T00:00:10Z', deletionGracePeriodSeconds: 10, first: false }],
    ['again, 0: finished now', marked, 0, 30, { kind: 'graceful', deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0, first: false }],
    ['marked without a grace period (finalizers)', { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 }, undefined, 30, { kind: 'immediate' }],
  ];
  for (const [name, meta, asked, own, want] of cases) assert.deepEqual(gracefulStep(meta, asked, podPeriod(own), NOW), want, name);
});

test('pods are deleted gracefully through the API and kubectl', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const pod = (name: string, extra: Obj = {}): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ...(extra.metadata ?? {}) }, spec: { containers: [{ name: 'c', image: 'i' }], ...(extra.spec ?? {}) } });
  try {
    await client.create(PODS, pod('unbound'));
    assert.match(await api.kubectlOk(['delete', 'pod', 'unbound']), /pod "unbound" deleted/);
    assert.equal(await client.read(PODS, 'unbound', 'default'), undefined, 'no kubelet runs an unbound pod: gone at once');

    await client.create(PODS, pod('bound', { spec: { nodeName: 'n1' } }));
    const before = Date.now();
    const marked = await client.delete(PODS, 'bound', 'default');
    assert.equal(marked?.metadata.deletionGracePeriodSeconds, 30, 'the default terminationGracePeriodSeconds');
    const ends = Date.parse(marked!.metadata.deletionTimestamp);
    assert.ok(ends >= before + 29_000 && ends <= Date.now() + 31_000, `now + 30 s: ${marked!.metadata.deletionTimestamp}`);
    assert.equal(marked!.metadata.generation, 2, 'the first deletion request bumps the generation');
    // Its kubelet's status writes do not remove it; a second request without a shorter period changes nothing.
    await client.mergePatch(PODS, 'bound', 'default', { status: { phase: 'Running' } }, 'status');
    const again = await client.delete(PODS, 'bound', 'default', { gracePeriodSeconds: 60 });
    assert.equal(again?.metadata.resourceVersion, (await client.get(PODS, 'bound', 'default')).metadata.resourceVersion);
    assert.equal(again?.metadata.deletionTimestamp, marked!.metadata.deletionTimestamp);
    const shorter = await client.request<Obj>('DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=10');
    assert.equal(shorter.metadata.deletionGracePeriodSeconds, 10);
    assert.equal(Date.parse(shorter.metadata.deletionTimestamp), ends - 20_000);
    assert.match(await api.kubectlOk(['get', 'pod', 'bound']), /bound\s+0\/1\s+Terminating/);
    // What the kubelet sends once the containers are stopped.
    await client.delete(PODS, 'bound', 'default', { gracePeriodSeconds: 0, preconditions: { uid: marked!.metadata.uid } });
    assert.equal(await client.read(PODS, 'bound', 'default'), undefined);

    await client.create(PODS, pod('quick', { spec: { nodeName: 'n1', terminationGracePeriodSeconds: 0 } }));
    await client.delete(PODS, 'quick', 'default');
    assert.equal(await client.read(PODS, 'quick', 'default'), undefined, 'a pod with no grace period of its own goes at once');
    await client.create(PODS, pod('done', { spec: { nodeName: 'n1' } }));
    await client.mergePatch(PODS, 'done', 'default', { status: { phase: 'Succeeded' } }, 'status');
    await client.delete(PODS, 'done', 'default');
    assert.equal(await client.read(PODS, 'done', 'default'), undefined, 'a finished pod goes at once');

    await client.create(PODS, pod('forced', { spec: { nodeName: 'n1' } }));
    const forced = await api.kubectl(['delete', 'pod', 'forced', '--grace-period=0', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stderr, /Immediate deletion does not wait for confirmation/);
    assert.equal(await client.read(PODS, 'forced', 'default'), undefined);

    // A finalizer holds a pod whose grace period is cut to 0; removing it then removes the pod.
    await client.create(PODS, pod('held', { spec: { nodeName: 'n1' }, metadata: { finalizers: ['example.com/hold'] } }));
    await client.delete(PODS, 'held', 'default');
    await client.mergePatch(PODS, 'held', 'default', { metadata: { finalizers: null } });
    assert.ok(await client.read(PODS, 'held', 'default'), 'the grace period still runs: the last finalizer going does not remove it');
    await client.delete(PODS, 'held', 'default', { gracePeriodSeconds: 0 });
    assert.equal(await client.read(PODS, 'held', 'default'), undefined, 'no finalizer and no grace left: gone');
    await client.create(PODS, pod('held2', { spec: { nodeName: 'n1' }, metadata: { finalizers: ['example.com/hold'] } }));
    await client.delete(PODS, 'held2', 'default', { gracePeriodSeconds: 0 });
    assert.equal((await client.get(PODS, 'held2', 'default')).metadata.deletionGracePeriodSeconds, 0);
    await client.mergePatch(PODS, 'held2', 'default', { metadata: { finalizers: null } });
    assert.equal(await client.read(PODS, 'held2', 'default'), undefined, 'grace 0 and the last finalizer gone');

    const bad = (await client.request('DELETE', '/api/v1/namespaces/default/pods/x?gracePeriodSeconds=soon').catch((e) => e)) as { code?: number };
    assert.equal(bad.code, 400);
  } finally {
    await api.stop();
  }
});
