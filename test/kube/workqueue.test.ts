// The work queue's guarantees: dedupe, never one key to two workers, per-key backoff with a cap,
// the overall retry rate limit, requeue-after, shutdown, being told when it is idle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from '../../src/kube/workqueue.js';

test('a key waiting is held once however often it is added', async () => {
  const q = new WorkQueue({ name: 'dedupe' });
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
});

test('a key being processed is not handed out again until done, and comes back once if added meanwhile', async () => {
  const q = new WorkQueue({ name: 'exclusive' });
  q.add('a');
  const first = await q.get();
  q.add('a');
  q.add('a');
  assert.equal(q.length, 0, 'held back while processing');
  let second: string | undefined;
  void q.get().then((k) => (second = k));
  await new Promise((r) => setImmediate(r));
  assert.equal(second, undefined, 'no second worker gets it');
  q.done(first!);
  await new Promise((r) => setImmediate(r));
  assert.equal(second, 'a');
  q.done('a');
  assert.equal(q.length, 0, 'only once');
});

test('failures back off exponentially per key up to the cap, and forget resets', () => {
  const q = new WorkQueue({ name: 'backoff', baseDelayMs: 10, maxDelayMs: 100, ratePerSecond: 1000, burst: 1000 });
  const delays = Array.from({ length: 6 }, () => q.addRateLimited('a'));
  assert.deepEqual(delays, [10, 20, 40, 80, 100, 100]);
  assert.equal(q.addRateLimited('b'), 10, 'other keys have their own backoff');
  q.forget('a');
  assert.equal(q.addRateLimited('a'), 10);
  q.shutDown();
});

test('the overall rate limit spaces retries once the burst is spent', () => {
  const q = new WorkQueue({ name: 'rate', baseDelayMs: 1, ratePerSecond: 10, burst: 2 });
  const delays = ['a', 'b', 'c', 'd'].map((k) => q.addRateLimited(k));
  assert.deepEqual(delays.slice(0, 2), [1, 1]);
  assert.ok(delays[2] >= 90 && delays[2] <= 100, `third waits ~100 ms, got ${delays[2]}`);
  assert.ok(delays[3] >= 190 && delays[3] <= 200, `fourth waits ~200 ms, got ${delays[3]}`);
  q.shutDown();
});

test('addAfter delivers later, and the earlier of two delayed adds wins', async () => {
  const q = new WorkQueue({ name: 'after' });
  const started = Date.now();
  q.addAfter('a', 300);
  q.addAfter('a', 50);
  assert.equal(await q.get(), 'a');
  const waited = Date.now() - started;
  assert.ok(waited >= 45 && waited < 250, `waited ${waited} ms`);
  q.done('a');
  q.shutDown();
});

test('shutdown releases waiting workers and refuses new keys', async () => {
  const q = new WorkQueue({ name: 'shutdown' });
  const pending = q.get();
  q.shutDown();
  assert.equal(await pending, undefined);
  q.add('a');
  assert.equal(await q.get(), undefined);
});

test('whenIdle calls back at once on an idle queue, else once nothing waits and the last key in hand is done', async () => {
  const q = new WorkQueue({ name: 'idle' });
  let calls = 0;
  q.whenIdle(() => calls++);
  assert.equal(calls, 1, 'idle: at once');
  assert.equal(q.idle, true);
  q.add('a');
  q.add('b');
  q.whenIdle(() => calls++);
  const a = await q.get();
  q.done(a!);
  assert.equal(calls, 1, 'b still waits');
  const b = await q.get();
  q.addAfter('later', 60_000);
  q.done(b!);
  assert.equal(calls, 2, 'nothing waits, nothing in hand (a key due later does not count)');
  assert.equal(q.idle, true);
  q.shutDown();
});

test('with priorityOf, the highest key waiting is handed out first, the earliest among equals', async () => {
  const priorities: Record<string, number> = { low1: 0, high1: 10, low2: 0, high2: 10, mid: 5 };
  const q = new WorkQueue({ name: 'priority', priorityOf: (key) => priorities[key] });
  for (const key of ['low1', 'high1', 'low2', 'high2', 'mid']) q.add(key);
  const order: string[] = [];
  for (let i = 0; i < 5; i++) {
    const key = (await q.get())!;
    order.push(key);
    q.done(key);
  }
  assert.deepEqual(order, ['high1', 'high2', 'mid', 'low1', 'low2']);
});
