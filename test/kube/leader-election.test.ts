// Leader election on a Lease in the embedded API server: one leader at a time, a released
// Lease is taken over at once, an abandoned one after it expires (on the wall clock and on an
// injected one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startTestApiServer } from '../helpers/apiserver.js';
import { LeaderElector } from '../../src/kube/leader-election.js';
import { KubeClient, type ResourceRef } from '../../src/kube/client.js';
import { FakeClock } from '../../src/kube/clock.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';
import { eventually } from '../helpers/eventually.js';

test('two candidates never lead at once, and leadership passes on', async () => {
  const api = await startTestApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  const timings = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 };
  const stops = [new AbortController(), new AbortController()];
  const leading = [false, false];
  const electors = stops.map(
    (stop, i) =>
      new LeaderElector({
        kubeconfig: kc,
        namespace: 'kube-system',
        name: 'test-lock',
        identity: `candidate-${i}`,
        ...timings,
        signal: stop.signal,
        onStartedLeading: async (signal) => {
          leading[i] = true;
          await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
          leading[i] = false;
        },
      }),
  );
  const runs = electors.map((e) => e.run());
  let both = 0;
  const sampler = setInterval(() => {
    if (leading[0] && leading[1]) both++;
  }, 20);
  try {
    const until = (what: string, check: () => boolean, timeoutMs = 5000) => eventually(what, check, { timeoutMs, intervalMs: 20 });
    await until('a leader', () => leading[0] || leading[1]);
    const first = leading[0] ? 0 : 1;
    await new Promise((r) => setTimeout(r, 800));
    assert.ok(leading[first] && !leading[1 - first], 'the leader keeps renewing; the other waits');
    // A clean stop releases the Lease: the other takes over well before it would expire.
    const handover = Date.now();
    stops[first].abort();
    await until('the other candidate to lead', () => leading[1 - first], 3000);
    assert.ok(Date.now() - handover < 1500, 'a released lease is taken at once');
    const lease = await kc.makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({ name: 'test-lock', namespace: 'kube-system' });
    assert.equal(lease.spec?.holderIdentity, `candidate-${1 - first}`);
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.equal(both, 0, 'never two leaders');
  } finally {
    clearInterval(sampler);
    for (const s of stops) s.abort();
    await Promise.all(runs);
    await api.stop();
  }
});

test('an abandoned lease is taken over only after it expires', async () => {
  const api = await startTestApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  try {
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    await coordination.createNamespacedLease({
      namespace: 'kube-system',
      body: { metadata: { name: 'held' }, spec: { holderIdentity: 'crashed-process', leaseDurationSeconds: 2, renewTime: new Date() as never, leaseTransitions: 0 } },
    });
    const stop = new AbortController();
    let leadingSince = 0;
    const elector = new LeaderElector({ kubeconfig: kc, namespace: 'kube-system', name: 'held', identity: 'newcomer', leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100, signal: stop.signal, onStartedLeading: () => void (leadingSince = Date.now()) });
    const started = Date.now();
    const run = elector.run();
    await eventually('the newcomer to take over the expired lease', () => leadingSince > 0, { timeoutMs: 6000, intervalMs: 50 }).finally(() => stop.abort());
    await run;
    assert.ok(leadingSince, 'took over the expired lease');
    assert.ok(leadingSince - started >= 1500, `took over after ${leadingSince - started} ms, before the lease expired`);
  } finally {
    await api.stop();
  }
});

test('on an injected clock, an abandoned lease of OpenShift length (137 s) is taken over without waiting for it', async () => {
  const api = await startTestApiServer();
  const clock = new FakeClock();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    const stamp = new Date(clock.now()).toISOString();
    await client.create(resources.leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'openshift-length', namespace: 'kube-system' }, spec: { holderIdentity: 'crashed-process', leaseDurationSeconds: 137, renewTime: stamp, acquireTime: stamp, leaseTransitions: 0 } });
    const stop = new AbortController();
    let leadingAt: number | undefined;
    const elector = new LeaderElector({ client, clock, namespace: 'kube-system', name: 'openshift-length', identity: 'newcomer', signal: stop.signal, onStartedLeading: () => void (leadingAt = clock.now()) });
    const started = Date.now();
    const run = elector.run();
    const start = clock.now();
    while (leadingAt === undefined && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 25)); // let the attempt in flight finish
      clock.advance(5000);
    }
    stop.abort();
    await run;
    assert.ok(leadingAt !== undefined, 'took over the expired lease');
    assert.ok(leadingAt - start >= 137_000, `took over after ${leadingAt - start} ms of clock time, before the lease expired`);
    assert.ok(Date.now() - started < 10_000, 'in well under the real lease duration');
    const lease = await client.get(resources.leases, 'openshift-length', 'kube-system');
    assert.equal(lease.spec?.leaseTransitions, 1);
  } finally {
    await api.stop();
  }
});

test('a candidate stopped while it takes the Lease does not lead, and gives the Lease back at once', { timeout: 10_000 }, async () => {
  const api = await startTestApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  const stop = new AbortController();
  // Fault injection: the stop (a pod told to terminate) arrives while the Lease is being written.
  class StoppedMidWrite extends KubeClient {
    override async create<T>(ref: ResourceRef<T>, object: T, query?: Record<string, string>): Promise<T> {
      const created = await super.create(ref, object, query);
      if (ref === (resources.leases as ResourceRef<unknown>)) stop.abort();
      return created;
    }
  }
  try {
    let led = false;
    const elector = new LeaderElector({ client: new StoppedMidWrite(kc), namespace: 'kube-system', name: 'stopping', identity: 'terminating-pod', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, signal: stop.signal, onStartedLeading: () => void (led = true) });
    const started = Date.now();
    await elector.run();
    assert.ok(Date.now() - started < 2_000, 'it returned at once');
    assert.equal(led, false, 'a stopped candidate does not start leading');
    const lease = await kc.makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({ name: 'stopping', namespace: 'kube-system' });
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'the Lease is free for the next candidate');
  } finally {
    await api.stop();
  }
});

test('a candidate with OpenShift\'s retry period (26 s) takes a released Lease without waiting for its next retry: it watches the Lease', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const kc = loadKubeConfig(api.kubeconfigPath);
  const stops = [new AbortController(), new AbortController()];
  const leading = [false, false];
  const elector = (i: number) => new LeaderElector({
    kubeconfig: kc,
    namespace: 'kube-system',
    name: 'watched-lock',
    identity: `candidate-${i}`,
    // OpenShift's defaults: a waiting candidate polls only every 26 s.
    leaseDurationMs: 137_000, renewDeadlineMs: 107_000, retryPeriodMs: 26_000,
    signal: stops[i].signal,
    onStartedLeading: async (signal) => {
      leading[i] = true;
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      leading[i] = false;
    },
  });
  const first = elector(0).run();
  let second: Promise<void> | undefined;
  try {
    await eventually('candidate-0 leads', () => leading[0], { timeoutMs: 10_000, intervalMs: 20 });
    second = elector(1).run();
    // candidate-1 has tried once, found the Lease held, and waits for its next retry (26 s away).
    await eventually('candidate-1 tried and waits', async () => (await new KubeClient(kc).read(resources.leases, 'watched-lock', 'kube-system'))?.spec?.holderIdentity === 'candidate-0' && !leading[1], { timeoutMs: 5000, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, 500));
    stops[0].abort();
    await first;
    // Well inside the retry period: only the watch can have woken it.
    await eventually('candidate-1 leads after the release', () => leading[1], { timeoutMs: 10_000, intervalMs: 50 });
  } finally {
    for (const s of stops) s.abort();
    await Promise.all([first, second]);
    await api.stop();
  }
});
