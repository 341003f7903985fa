// The event recorder's aggregation window and its times are on its Clock: repeats within the
// window on a FakeClock are one Event with a count and the clock's lastTimestamp; once the clock
// has moved past the window the same event is a new Event. The events it remembers are a bounded
// least-recently-used cache, as client-go's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { KubeClient, type Obj } from '../../src/kube/client.js';
import { FakeClock } from '../../src/kube/clock.js';
import { EventRecorder } from '../../src/kube/events.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';

test('repeats aggregate within the window on the clock, and a repeat after it is a new Event', async () => {
  const api = await startTestApiServer();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', ...(await client.create(resources.configMaps, { metadata: { name: 'subject', namespace: 'default' } })) };
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const recorder = new EventRecorder(client, { component: 'clocked', clock, aggregationWindowMs: 60_000 });
    await recorder.event(cm, 'Warning', 'SyncFailed', 'it broke');
    clock.advance(59_000);
    await recorder.event(cm, 'Warning', 'SyncFailed', 'it broke');
    const list = async () => ((await client.list(resources.events, 'default')).items as Obj[]).filter((e) => e.reason === 'SyncFailed').sort((a, b) => a.firstTimestamp.localeCompare(b.firstTimestamp));
    let events = await list();
    assert.deepEqual(events.map((e) => [e.count, e.firstTimestamp, e.lastTimestamp]), [[2, '2026-01-01T00:00:00Z', '2026-01-01T00:00:59Z']]);
    clock.advance(1_000);
    await recorder.event(cm, 'Warning', 'SyncFailed', 'it broke');
    events = await list();
    assert.deepEqual(events.map((e) => [e.count ?? 1, e.firstTimestamp]), [[2, '2026-01-01T00:00:00Z'], [1, '2026-01-01T00:01:00Z']], 'past the window on the clock: a new Event');
  } finally {
    await api.stop();
  }
});

test('the remembered events are a least-recently-used cache: a repeat of a forgotten one is a new Event', async () => {
  const api = await startTestApiServer();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', ...(await client.create(resources.configMaps, { metadata: { name: 'lru-subject', namespace: 'default' } })) };
    const recorder = new EventRecorder(client, { component: 'lru', cacheSize: 2 });
    for (const reason of ['A', 'B', 'A', 'C', 'B', 'A']) await recorder.event(cm, 'Normal', reason, 'happened');
    const events = ((await client.list(resources.events, 'default')).items as Obj[]).filter((e) => e.involvedObject?.name === 'lru-subject');
    const counts = events.map((e) => `${e.reason}:${e.count}`).sort();
    // A, B, A (A used last), C (B forgotten), B (a new B; C and B remembered, A forgotten), A (a new A).
    assert.deepEqual(counts, ['A:1', 'A:2', 'B:1', 'B:1', 'C:1']);
  } finally {
    await api.stop();
  }
});
