// The disruption monitor's parts (test/helpers/disruption): the outage arithmetic and the seeded
// fault plan as tables; then the observer process against a real API server that is stopped for a
// span the test measures itself — the monitor must report about that much disruption on new and
// reused connections — and the acknowledged-writes check, which must find a write that went missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';
import { outages, merge, seconds, type Sample } from '../helpers/disruption/intervals.js';
import { FAULT_KINDS, planFaults } from '../helpers/disruption/faults.js';
import { disruptionOf, lostWrites, startObserver, summarize } from '../helpers/disruption/monitor.js';
import { KubeClient, isConflict } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';

const ok = (start: number): Sample => ({ start, end: start + 10, ok: true });
const bad = (start: number, error = 'ECONNREFUSED'): Sample => ({ start, end: start + 10, ok: false, error });

test('outages: from the first failure to the next success; a run still failing at the end ends with its last failure', () => {
  const cases: Array<[string, Sample[], Array<{ from: number; to: number; error: string }>]> = [
    ['none', [ok(0), ok(500), ok(1000)], []],
    ['one failure', [ok(0), bad(500), ok(1000)], [{ from: 500, to: 1000, error: 'ECONNREFUSED' }]],
    ['a run, out of order', [bad(1000, 'timeout'), ok(0), bad(500), ok(1500)], [{ from: 500, to: 1500, error: 'ECONNREFUSED' }]],
    ['two runs', [bad(0, 'HTTP 503'), ok(500), bad(1000), bad(1500), ok(2000)], [{ from: 0, to: 500, error: 'HTTP 503' }, { from: 1000, to: 2000, error: 'ECONNREFUSED' }]],
    ['down at the end', [ok(0), bad(500), bad(1000)], [{ from: 500, to: 1010, error: 'ECONNREFUSED' }]],
  ];
  for (const [name, samples, want] of cases) assert.deepEqual(outages(samples), want, name);
});

test('merge and seconds count overlapping spans once', () => {
  assert.deepEqual(merge([{ from: 2000, to: 3000 }, { from: 0, to: 1000 }, { from: 500, to: 1500 }, { from: 1500, to: 1600 }]), [{ from: 0, to: 1600 }, { from: 2000, to: 3000 }]);
  assert.equal(seconds([{ from: 0, to: 1000 }, { from: 500, to: 1500 }, { from: 4000, to: 4250 }]), 1.75);
  assert.equal(seconds([]), 0);
});

test('planFaults: the same seed gives the same plan; each kind at most once, within the window, bounded in count', () => {
  const a = planFaults({ seed: 7, kinds: FAULT_KINDS, windowMs: 60_000 });
  assert.deepEqual(planFaults({ seed: 7, kinds: FAULT_KINDS, windowMs: 60_000 }), a);
  assert.deepEqual(a.map((f) => f.kind).sort(), [...FAULT_KINDS].sort());
  assert.ok(a.every((f, i) => f.atMs >= 0 && f.atMs < 60_000 && (i === 0 || a[i - 1].atMs <= f.atMs)), JSON.stringify(a));
  assert.notDeepEqual(planFaults({ seed: 8, kinds: FAULT_KINDS, windowMs: 60_000 }), a);
  assert.equal(planFaults({ seed: 7, kinds: FAULT_KINDS, windowMs: 60_000, maxCount: 2 }).length, 2);
});

test('the observer reports the span an API server was stopped for, on new and reused connections, and every acknowledged write is found — a missing one is counted lost', { timeout: 120_000 }, async (t) => {
  let server = await startTestApiServer();
  const { dataDir, port } = server;
  const kube = new KubeClient(loadKubeConfig(server.kubeconfigPath));
  await kube.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'writes' } });
  await kube.create(resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counter', namespace: 'writes' }, data: { value: '0' } });
  const observer = await startObserver({
    backends: [{ name: 'kube-api', url: server.url, path: '/api/v1/namespaces/default', ca: server.caPem, token: server.token }],
    intervalMs: 200, timeoutMs: 2_000,
    writer: { url: server.url, ca: server.caPem, token: server.token, namespace: 'writes', counter: 'counter', intervalMs: 100 },
  });
  try {
    await new Promise((r) => setTimeout(r, 2_000));
    await server.stop({ keepData: true });
    const down = Date.now();
    await new Promise((r) => setTimeout(r, 3_000));
    server = await startTestApiServer({ dataDir, port });
    const downMs = Date.now() - down;
    await new Promise((r) => setTimeout(r, 2_000));
    const report = await observer.stop();
    const d = summarize(report);
    t.diagnostic(`down ${downMs} ms; measured: ${d.map((x) => `${x.mode} ${x.seconds.toFixed(2)} s (${x.failures}/${x.samples} failed)`).join(', ')}`);
    for (const mode of ['new', 'reused'] as const) {
      const x = disruptionOf(d, 'kube-api', mode);
      assert.equal(x.outages.length, 1, `${mode}: one outage: ${JSON.stringify(x.outages)}`);
      // Not less than the server was down (less one poll interval for when the first failure came),
      // nor more than that plus what a loaded machine adds to the server's start and the next poll.
      assert.ok(x.seconds >= downMs / 1000 - 0.5, `${mode}: ${x.seconds} s measured, down ${downMs} ms`);
      assert.ok(x.seconds <= downMs / 1000 + 4, `${mode}: ${x.seconds} s measured, down ${downMs} ms`);
    }
    const writes = report.writes!;
    assert.ok(writes.created.length > 5 && writes.updated.length > 5, JSON.stringify({ created: writes.created.length, updated: writes.updated.length }));
    assert.ok(writes.unacknowledged > 0, 'writes while the server was down were not acknowledged');
    const client = new KubeClient(loadKubeConfig(server.kubeconfigPath));
    assert.deepEqual(await lostWrites(client, 'writes', 'counter', writes).then((w) => [w.lost, w.missing]), [0, []]);
    // What makes the counter's check exact: an update on a stale resourceVersion is refused, so a
    // late write cannot overwrite a newer acknowledged one.
    await assert.rejects(client.mergePatch(resources.configMaps, 'counter', 'writes', { metadata: { resourceVersion: '1' }, data: { value: '0' } }), (e) => isConflict(e));
    // The check must be able to fail: an acknowledged ConfigMap gone, and the counter set back.
    await client.delete(resources.configMaps, writes.created[2], 'writes');
    await client.mergePatch(resources.configMaps, 'counter', 'writes', { data: { value: String(writes.updated[writes.updated.length - 3]) } });
    const lost = await lostWrites(client, 'writes', 'counter', writes);
    assert.deepEqual(lost.missing, [writes.created[2]]);
    assert.equal(lost.lost, 1 + 2);
  } finally {
    await observer.stop().catch(() => undefined);
    await server.stop();
  }
});
