// Informers, controllers and the event recorder against the embedded API server: the cache stays
// right across watch timeouts, a server restart and a compaction (no missed deletes); a
// controller retries failures with backoff and reports them, does not retry terminal errors,
// requeues after, resyncs, never syncs one key twice at once, and stops cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { rmSync } from 'node:fs';
import { startTestApiServer } from '../helpers/apiserver.js';
import { KubeClient, type ResourceRef } from '../../src/kube/client.js';
import { Informer, InformerFactory } from '../../src/kube/informer.js';
import { Controller, TerminalError } from '../../src/kube/controller.js';
import { EventRecorder } from '../../src/kube/events.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { registry } from '../../src/kube/metrics.js';
import { eventually } from '../helpers/eventually.js';

const CONFIGMAPS: ResourceRef<api.ConfigMap> = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

test('an informer keeps its cache right across watch timeouts, a restart with a missed delete, and a compaction', async () => {
  let api = await startTestApiServer({ compactKeep: 5, compactIntervalMs: 200 });
  const { dataDir, port } = api;
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const factory = new InformerFactory(client);
  const informer = factory.forResource(CONFIGMAPS, { namespace: 'default', watchTimeoutSeconds: 1 });
  const seen: string[] = [];
  informer.on((type, o) => seen.push(`${type} ${o.metadata.name} ${o.data?.v ?? ''}`.trim()));
  const stop = new AbortController();
  try {
    await client.create(CONFIGMAPS, { metadata: { name: 'before', namespace: 'default' }, data: { v: '0' } });
    factory.start(stop.signal);
    await factory.waitForSync();
    assert.deepEqual(seen, ['add before 0']);
    assert.equal(informer.get('before', 'default')?.kind, 'ConfigMap', 'listed items carry their kind');

    await client.create(CONFIGMAPS, { metadata: { name: 'a', namespace: 'default' }, data: { v: '1' } });
    await eventually('add a', () => seen.includes('add a 1'), { timeoutMs: 10_000, intervalMs: 25 });
    await new Promise((r) => setTimeout(r, 1500)); // past a watch timeout
    await client.mergePatch(CONFIGMAPS, 'a', 'default', { data: { v: '2' } });
    await eventually('update after a watch timeout', () => seen.includes('update a 2'), { timeoutMs: 10_000, intervalMs: 25 });

    // The server goes away; while the informer cannot watch, a second server on the same data
    // (on another port, so that the informer cannot reach it) deletes an object, writes more and
    // compacts past the informer's resourceVersion. When the server returns on its port the
    // informer must notice the delete, and can do so only by listing again.
    await api.stop({ keepData: true });
    const second = await startTestApiServer({ dataDir, compactKeep: 5, compactIntervalMs: 100 });
    const secondClient = new KubeClient(loadKubeConfig(second.kubeconfigPath));
    await secondClient.delete(CONFIGMAPS, 'before', 'default');
    for (let i = 0; i < 20; i++) await secondClient.create(CONFIGMAPS, { metadata: { name: `bulk-${i}`, namespace: 'default' } });
    const patched = await secondClient.mergePatch(CONFIGMAPS, 'a', 'default', { data: { v: '3' } });
    const lastWrite = Number(patched.metadata?.resourceVersion);
    await eventually('the second server to compact past the deletion', () => second.server.storage.compactedRevision() >= lastWrite - 5, { timeoutMs: 10_000, intervalMs: 25 });
    await second.stop({ keepData: true });
    api = await startTestApiServer({ dataDir, port, compactKeep: 5, compactIntervalMs: 200 });
    await eventually('the cache to converge', () => seen.includes('delete before 0') && seen.includes('update a 3') && informer.list().length === 21, { timeoutMs: 15_000, intervalMs: 25 });
    assert.deepEqual(informer.list().map((o) => o.metadata.name).sort(), ['a', ...Array.from({ length: 20 }, (_, i) => `bulk-${i}`)].sort());
    assert.ok(informer.lists >= 2, `the informer listed again after falling behind the compaction (lists: ${informer.lists})`);
  } finally {
    stop.abort();
    await factory.stop();
    await api.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a controller retries with backoff and reports, drops terminal errors, requeues after, resyncs, and never runs a key twice at once', async () => {
  const api = await startTestApiServer();
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const factory = new InformerFactory(client);
  const informer = factory.forResource(CONFIGMAPS, { namespace: 'default' });
  const syncs = new Map<string, number>();
  const reported: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const active = new Set<string>();
  let overlap = false;
  const controller = new Controller({
    name: 'test-controller',
    workers: 4,
    resyncPeriodMs: 400,
    queue: { baseDelayMs: 20, maxDelayMs: 200 },
    onError: (key, error, retries, terminal) => reported.push(`${key} ${retries} ${terminal ? 'terminal' : 'retry'} ${error.message}`),
    sync: async (key) => {
      if (active.has(key)) overlap = true;
      active.add(key);
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        const n = (syncs.get(key) ?? 0) + 1;
        syncs.set(key, n);
        await new Promise((r) => setTimeout(r, 20));
        const object = informer.getByKey(key);
        const mode = object?.data?.mode;
        if (mode === 'flaky' && n < 3) throw new Error(`not yet (${n})`);
        if (mode === 'bad') throw new TerminalError('this object is invalid');
        if (mode === 'later' && n === 1) return { requeueAfterMs: 150 };
        return undefined;
      } finally {
        running--;
        active.delete(key);
      }
    },
  }).watch(informer);
  const stop = new AbortController();
  const run = controller.run(stop.signal);
  factory.start(stop.signal);
  try {
    for (const [name, mode] of [['flaky', 'flaky'], ['bad', 'bad'], ['later', 'later'], ['plain', 'plain']]) {
      await client.create(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { mode } });
    }
    await eventually('flaky to succeed on its third try', () => (syncs.get('default/flaky') ?? 0) >= 3 && !controller.lastError('default/flaky'), { timeoutMs: 10_000, intervalMs: 25 });
    assert.deepEqual(reported.filter((r) => r.startsWith('default/flaky')), ['default/flaky 1 retry not yet (1)', 'default/flaky 2 retry not yet (2)']);
    assert.equal(controller.lastError('default/flaky'), undefined, 'success clears the error');
    await eventually('later to be requeued', () => (syncs.get('default/later') ?? 0) >= 2, { timeoutMs: 10_000, intervalMs: 25 });
    assert.deepEqual(reported.filter((r) => r.startsWith('default/bad')), ['default/bad 1 terminal this object is invalid']);
    assert.match(controller.lastError('default/bad')?.message ?? '', /invalid/);

    // Hammer one key with changes while 4 workers run: never two syncs of it at once.
    await Promise.all(Array.from({ length: 15 }, (_, i) => client.mergePatch(CONFIGMAPS, 'plain', 'default', { data: { i: String(i) } })));
    // A resync brings every key back, the terminal one included.
    const before = syncs.get('default/bad')!;
    await eventually('a resync', () => syncs.get('default/bad')! > before, { timeoutMs: 3000, intervalMs: 25 });
    assert.equal(overlap, false, 'a key was synced by two workers at once');
    assert.ok(maxRunning > 1, 'workers ran in parallel');

    const metrics = await registry.metrics();
    assert.match(metrics, /controller_runtime_reconcile_total\{controller="test-controller",result="error"\} [1-9]/);
    assert.match(metrics, /controller_runtime_reconcile_total\{controller="test-controller",result="terminal_error"\} [1-9]/);
    assert.match(metrics, /workqueue_adds_total\{name="test-controller"\} [1-9]/);
  } finally {
    stop.abort();
    await run;
    await factory.stop();
    await api.stop();
  }
});

test('the event recorder aggregates repeats into one Event with a count', async () => {
  const api = await startTestApiServer();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    const cm = await client.create(CONFIGMAPS, { metadata: { name: 'subject', namespace: 'default' } });
    const recorder = new EventRecorder(client, { component: 'test-recorder' });
    for (let i = 0; i < 3; i++) await recorder.event({ apiVersion: 'v1', kind: 'ConfigMap', ...cm }, 'Warning', 'SyncFailed', 'it broke');
    await recorder.event({ apiVersion: 'v1', kind: 'ConfigMap', ...cm }, 'Normal', 'Synced', 'fine now');
    const events = (await api.kubectl(['get', 'events', '-n', 'default', '-o', 'json'])).stdout;
    const items = JSON.parse(events).items as any[];
    const failed = items.filter((e) => e.reason === 'SyncFailed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].count, 3);
    assert.equal(failed[0].involvedObject.name, 'subject');
    assert.equal(failed[0].source.component, 'test-recorder');
    assert.equal(items.filter((e) => e.reason === 'Synced').length, 1);
    const described = await api.kubectl(['describe', 'configmap', 'subject', '-n', 'default']);
    assert.match(described.stdout, /Warning\s+SyncFailed.*it broke/);
  } finally {
    await api.stop();
  }
});

test('an informer started with an already-aborted signal stops at once, and waiting on it fails', async () => {
  const api = await startTestApiServer();
  try {
    const informer = new InformerFactory(new KubeClient(loadKubeConfig(api.kubeconfigPath))).forResource({ group: '', version: 'v1', resource: 'configmaps', namespaced: true });
    const aborted = AbortSignal.abort();
    informer.start(aborted);
    await assert.rejects(informer.waitForSync(aborted));
    await informer.stop();
  } finally {
    await api.stop();
  }
});

test('a controller run again for a new leadership term sees what changed while it was stopped: its own informer lists again', async () => {
  const api = await startTestApiServer();
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  // An informer of the controller's own (not a factory's): it stops with the term, as csrapproving's does.
  const informer = new Informer(client, CONFIGMAPS, { namespace: 'default' });
  const synced: string[] = [];
  const controller = new Controller({ name: 'terms', sync: async (key) => void synced.push(key) }).watch(informer);
  try {
    await client.create(CONFIGMAPS, { metadata: { name: 'first-term', namespace: 'default' } });
    const term1 = new AbortController();
    const run1 = controller.start(term1.signal);
    await eventually('the first term syncs its object', () => synced.includes('default/first-term'), { timeoutMs: 10_000, intervalMs: 25 });
    term1.abort();
    await run1;
    await client.create(CONFIGMAPS, { metadata: { name: 'between-terms', namespace: 'default' } });
    const term2 = new AbortController();
    const run2 = controller.start(term2.signal);
    await client.create(CONFIGMAPS, { metadata: { name: 'second-term', namespace: 'default' } });
    await eventually('the second term syncs what came between the terms and during it', () => synced.includes('default/between-terms') && synced.includes('default/second-term'), { timeoutMs: 10_000, intervalMs: 25 });
    assert.ok(informer.get('second-term', 'default'), 'the informer\'s cache follows again');
    term2.abort();
    await run2;
  } finally {
    await informer.stop();
    await api.stop();
  }
});
