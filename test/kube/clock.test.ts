import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, sleepOn } from '../../src/kube/clock.js';

test('FakeClock fires due timers in time order and only when advanced past them', () => {
  const clock = new FakeClock(1_000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push('b@300'), 300);
  clock.setTimeout(() => fired.push('a@100'), 100);
  const cancelled = clock.setTimeout(() => fired.push('never'), 200);
  clock.clearTimeout(cancelled);
  clock.advance(99);
  assert.deepEqual(fired, []);
  clock.advance(250);
  assert.deepEqual(fired, ['a@100', 'b@300']);
  assert.equal(clock.now(), 1_349);
  assert.equal(clock.pending, 0);
});

test('a timer set while advancing fires in the same advance when it falls due', () => {
  const clock = new FakeClock(0);
  const seen: number[] = [];
  clock.setTimeout(() => {
    seen.push(clock.now());
    clock.setTimeout(() => seen.push(clock.now()), 50);
  }, 100);
  clock.advance(1_000);
  assert.deepEqual(seen, [100, 150]);
});

test('sleepOn resolves when the clock passes, or at once on abort', async () => {
  const clock = new FakeClock(0);
  let woke = false;
  const sleeping = sleepOn(clock, 30 * 60_000).then(() => (woke = true));
  clock.advance(29 * 60_000);
  await Promise.resolve();
  assert.equal(woke, false);
  clock.advance(60_000);
  await sleeping;
  assert.equal(woke, true);
  const abort = new AbortController();
  const cut = sleepOn(clock, 1_000, abort.signal);
  abort.abort();
  await cut;
  assert.equal(clock.pending, 0);
});
