// Time in the work queue and the controller is the injected Clock's: on a FakeClock a failed
// sync is retried after exactly its back-off (not a millisecond before), a requeue-after comes
// after exactly its delay, the overall rate limit refills on the clock, and the controller's
// degraded-on-error reporter hears each outcome. No real time passes for any of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kube/clock.js';
import { Controller, type SyncReporter } from '../../src/kube/controller.js';
import { WorkQueue } from '../../src/kube/workqueue.js';
import { eventually } from '../helpers/eventually.js';

/** Lets the controller's promises run (real time, but no clock time). */
const settle = () => new Promise((r) => setTimeout(r, 30));

test('a failing sync is retried after exactly its back-off on the fake clock, not before', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const syncs: number[] = [];
  const outcomes: string[] = [];
  const reporter: SyncReporter = { report: (key, error, retries) => outcomes.push(`${key} ${error ? `failed ${retries}` : 'ok'}`) };
  let failures = 2;
  const controller = new Controller({
    name: 'backoff-on-a-fake-clock',
    clock,
    queue: { baseDelayMs: 1000, maxDelayMs: 60_000 },
    sync: () => {
      syncs.push(clock.now() - start);
      if (failures-- > 0) throw new Error('not yet');
      return syncs.length === 3 ? { requeueAfterMs: 30_000 } : undefined;
    },
  }).reportTo(reporter);
  const stop = new AbortController();
  controller.enqueue('k');
  const run = controller.run(stop.signal);
  try {
    await eventually('the first sync failed and its retry is scheduled', () => syncs.length === 1 && clock.pending === 1, { timeoutMs: 5000, intervalMs: 5 });
    clock.advance(999);
    await settle();
    assert.deepEqual(syncs, [0], 'not retried before the 1 s back-off');
    clock.advance(1);
    await eventually('the first retry', () => syncs.length === 2 && clock.pending === 1, { timeoutMs: 5000, intervalMs: 5 });
    assert.deepEqual(syncs, [0, 1000], 'retried after exactly 1 s');
    clock.advance(1999);
    await settle();
    assert.equal(syncs.length, 2, 'the second back-off is 2 s');
    clock.advance(1);
    await eventually('the second retry', () => syncs.length === 3 && clock.pending === 1, { timeoutMs: 5000, intervalMs: 5 });
    assert.deepEqual(syncs, [0, 1000, 3000]);
    assert.equal(controller.queue.retries('k'), 0, 'a success forgets the failures');
    clock.advance(29_999);
    await settle();
    assert.equal(syncs.length, 3, 'a requeue-after is not early either');
    clock.advance(1);
    await eventually('the requeue after 30 s', () => syncs.length === 4, { timeoutMs: 5000, intervalMs: 5 });
    assert.deepEqual(syncs, [0, 1000, 3000, 33_000]);
    assert.deepEqual(outcomes, ['k failed 1', 'k failed 2', 'k ok', 'k ok']);
  } finally {
    stop.abort();
    await run;
  }
  assert.equal(clock.pending, 0, 'a stopped controller leaves no timer behind');
});

test("the work queue's rate limit refills on its clock", () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ name: 'bucket-on-a-clock', clock, baseDelayMs: 1, ratePerSecond: 2, burst: 1 });
  assert.equal(q.addRateLimited('a'), 1, 'the burst grants the first at once (its own back-off only)');
  assert.equal(q.addRateLimited('b'), 500, 'then one every 500 ms');
  clock.advance(10_000);
  assert.equal(q.addRateLimited('c'), 1, 'a refilled bucket on the clock');
  q.shutDown();
});

test("a controller's own keys are reconciled each time it runs (every leadership term), with no object to map from", async () => {
  const synced: string[] = [];
  const controller = new Controller({ name: 'own-keys', keys: ['cluster'], sync: (key) => void synced.push(key) });
  for (const term of [1, 2]) {
    const stop = new AbortController();
    const run = controller.run(stop.signal);
    await eventually(`term ${term}'s sync`, () => synced.length === term, { timeoutMs: 5000, intervalMs: 5 });
    stop.abort();
    await run;
  }
  assert.deepEqual(synced, ['cluster', 'cluster']);
});

test('a start-up step runs each time the controller runs, before any key is reconciled; its failure does not stop the controller', async () => {
  const seen: string[] = [];
  let term = 0;
  const controller = new Controller({
    name: 'start-up-step',
    keys: ['cluster'],
    onStarted: () => {
      seen.push(`started ${++term}`);
      if (term === 2) throw new Error('the cloud is not answering');
    },
    sync: (key) => void seen.push(`sync ${key}`),
  });
  for (const n of [1, 2]) {
    const stop = new AbortController();
    const run = controller.run(stop.signal);
    await eventually(`term ${n}'s sync`, () => seen.length === 2 * n, { timeoutMs: 5000, intervalMs: 5 });
    stop.abort();
    await run;
  }
  assert.deepEqual(seen, ['started 1', 'sync cluster', 'started 2', 'sync cluster']);
});
