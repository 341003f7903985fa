// The drain controller's decisions (src/mco/controller/drain.ts), one row per rule: what a node's
// drain annotations ask, which pods a drain evicts, and when a failing drain is tried again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_DRAIN_TIMING, drainRequest, drainRetry, podsToEvict } from '../../src/mco/controller/drain.js';

const D = 'd';
const L = 'l';

test('drainRequest: one row per annotation state', () => {
  const rows: [Record<string, string> | undefined, string, string?][] = [
    [undefined, 'none'],
    [{ d: 'drain-r2', l: 'drain-r2' }, 'none'],
    [{ d: 'drain-r2', l: 'uncordon-r1' }, 'drain', 'drain-r2'],
    [{ d: 'uncordon-r2', l: 'drain-r2' }, 'uncordon', 'uncordon-r2'],
    [{ d: 'drain-r2' }, 'drain', 'drain-r2'],
  ];
  for (const [annotations, action, value] of rows) {
    const r = drainRequest(annotations, D, L);
    assert.equal(r.action, action, JSON.stringify(annotations));
    if (value) assert.equal((r as { value: string }).value, value);
  }
});

test('podsToEvict: DaemonSet, mirror and finished pods stay; terminating ones are waited for', () => {
  const pod = (name: string, extra: Record<string, unknown> = {}, status: Record<string, unknown> = { phase: 'Running' }) => ({ metadata: { name, ...extra }, status });
  const { evict, terminating } = podsToEvict([
    pod('app'),
    pod('ds', { ownerReferences: [{ kind: 'DaemonSet', name: 'mcd', controller: true }] }),
    pod('rs', { ownerReferences: [{ kind: 'ReplicaSet', name: 'web', controller: true }] }),
    pod('mirror', { annotations: { 'kubernetes.io/config.mirror': 'abc' } }),
    pod('done', {}, { phase: 'Succeeded' }),
    pod('failed', {}, { phase: 'Failed' }),
    pod('leaving', { deletionTimestamp: '2026-01-01T00:00:00Z' }),
  ]);
  assert.deepEqual(evict.map((p) => p.metadata.name), ['app', 'rs']);
  assert.deepEqual(terminating.map((p) => p.metadata.name), ['leaving']);
});

test('drainRetry: a minute at first, five once failing for ten, timed out after an hour', () => {
  assert.deepEqual(drainRetry(0, 60_000, DEFAULT_DRAIN_TIMING), { afterMs: 60_000, thresholdExceeded: false, timedOut: false });
  assert.deepEqual(drainRetry(0, 10 * 60_000, DEFAULT_DRAIN_TIMING), { afterMs: 5 * 60_000, thresholdExceeded: true, timedOut: false });
  assert.deepEqual(drainRetry(0, 60 * 60_000, DEFAULT_DRAIN_TIMING), { afterMs: 5 * 60_000, thresholdExceeded: true, timedOut: true });
});
