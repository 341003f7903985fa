// sleep(): many waits on one AbortSignal cost one listener, and an abort ends them all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { sleep } from '../../src/common/sleep.js';

test('thousands of sleeps on one signal share one abort listener, and an abort wakes them all', async () => {
  const stopper = new AbortController();
  let woken = 0;
  const sleeps = Array.from({ length: 5000 }, () => sleep(60_000, stopper.signal).then(() => woken++));
  assert.equal(getEventListeners(stopper.signal, 'abort').length, 1);
  stopper.abort();
  await Promise.all(sleeps);
  assert.equal(woken, 5000);
  // A sleep on a signal already aborted returns at once (else this test would time out).
  await sleep(60_000, stopper.signal);
});

test('a sleep that ran out is forgotten by its signal, and the others still wake on abort', async () => {
  const stopper = new AbortController();
  for (let i = 0; i < 100; i++) await sleep(0, stopper.signal);
  let woken = false;
  const long = sleep(60_000, stopper.signal).then(() => (woken = true));
  assert.equal(getEventListeners(stopper.signal, 'abort').length, 1);
  stopper.abort();
  await long;
  assert.equal(woken, true);
});
