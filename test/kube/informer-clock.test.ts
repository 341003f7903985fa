// The informer's retry back-off runs on its clock: a failing list is retried after exactly
// 200 ms × 2^failures (capped at 30 s) on a FakeClock, and not before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { FakeClock } from '../../src/kube/clock.js';
import { InformerFactory } from '../../src/kube/informer.js';
import { KubeClient } from '../../src/kube/client.js';
import { resources } from '../../src/kube/resources.js';

/** A client whose lists always fail (the API server unreachable), counting them. */
class Unreachable extends KubeClient {
  lists = 0;
  override async list(): Promise<never> {
    this.lists++;
    throw new Error('connect ECONNREFUSED 127.0.0.1:1');
  }
}

/** Lets the informer's promises run (real time, no clock time). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("a failing list is retried after exactly its back-off on the factory's clock", async () => {
  const clock = new FakeClock();
  const client = new Unreachable(new k8s.KubeConfig());
  const factory = new InformerFactory(client, clock);
  const informer = factory.forResource(resources.configMaps);
  const stop = new AbortController();
  factory.start(stop.signal);
  try {
    /** Lets the informer run until it waits on the clock again. */
    const untilWaiting = async () => {
      for (let i = 0; i < 20 && clock.pending === 0; i++) await settle();
    };
    await untilWaiting();
    assert.equal(client.lists, 1, 'the first list at once');
    let expected = 1;
    for (const delay of [400, 800, 1600]) {
      clock.advance(delay - 1);
      for (let i = 0; i < 5; i++) await settle();
      assert.equal(client.lists, expected, `not before ${delay} ms`);
      clock.advance(1);
      await untilWaiting();
      assert.equal(client.lists, ++expected, `retried at exactly ${delay} ms`);
    }
    assert.equal(informer.hasSynced(), false);
  } finally {
    stop.abort();
    await factory.stop();
  }
});
