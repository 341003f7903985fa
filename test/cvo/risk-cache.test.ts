// The throttled cache in front of PromQL rules, on a FakeClock (rules of OpenShift's CVO: one real
// query a second across all rules, each rule at most hourly, entries forgotten after 24 h, a new
// rule waiting its turn is "throttled"), and the update poller on top of it: risks unknown while
// throttled are evaluated again every second without asking the update service again, a change
// of spec.desiredUpdate.acceptRisks is applied at once, and a condition keeps its transition time
// while its status stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as api from '../../src/api/index.js';
import { FakeClock } from '../../src/kube/clock.js';
import { ConditionCache, ThrottledError, ruleKey } from '../../src/cvo/updates/condition-cache.js';
import { UpdatePoller } from '../../src/cvo/available-updates.js';
import type { MatchingRule } from '../../src/cincinnati/graph-api.js';

const HOUR = 3_600_000;
const rule = (promql: string): MatchingRule => ({ type: 'PromQL', promql: { promql } });

/** A matcher whose answers the test sets, recording when each query was really made. */
function recorder(clock: FakeClock) {
  const calls: { at: number; query: string }[] = [];
  const answers = new Map<string, boolean | Error>();
  const match = async (r: MatchingRule) => {
    calls.push({ at: clock.now(), query: r.promql!.promql });
    const a = answers.get(r.promql!.promql) ?? false;
    if (a instanceof Error) throw a;
    return a;
  };
  return { calls, answers, match };
}

test('the cache key is the rule as JSON, whatever order its fields were written in', () => {
  assert.equal(ruleKey({ promql: { promql: 'x' }, type: 'PromQL' } as MatchingRule), '{"type":"PromQL","promql":{"promql":"x"}}');
});

test('throttling: one real query per second across all rules; a new rule waiting its turn is throttled', async () => {
  const clock = new FakeClock();
  const r = recorder(clock);
  r.answers.set('a', true);
  const cache = new ConditionCache(r.match, clock);
  assert.equal(await cache.match(rule('a')), true);
  await assert.rejects(cache.match(rule('b')), (e: Error) => e instanceof ThrottledError && /evaluation is throttled until 00:00:01Z/.test(e.message));
  assert.equal(await cache.match(rule('a')), true, 'a cached answer within the second');
  assert.equal(r.calls.length, 1);
  // Ten rules asked every 100 ms for 20 s: never two queries within a second, and every rule gets its turn.
  const rules = Array.from({ length: 10 }, (_, i) => rule(`q${i}`));
  const answered = new Set<string>();
  for (let t = 0; t < 200; t++) {
    clock.advance(100);
    for (const x of rules) {
      try {
        await cache.match(x);
        answered.add(x.promql!.promql);
      } catch (e) {
        assert.ok(e instanceof ThrottledError, String(e));
      }
    }
  }
  for (let i = 1; i < r.calls.length; i++) assert.ok(r.calls[i].at - r.calls[i - 1].at > 1000 - 1, `queries ${i - 1} and ${i} ${r.calls[i].at - r.calls[i - 1].at} ms apart`);
  assert.equal(answered.size, 10, 'no rule starves');
  assert.ok(r.calls.length >= 11 && r.calls.length <= 21, `${r.calls.length} queries in 20 s`);
  assert.equal(cache.evaluations, r.calls.length);
});

test('each rule is evaluated again at most hourly; failures are cached too', async () => {
  const clock = new FakeClock();
  const r = recorder(clock);
  const cache = new ConditionCache(r.match, clock);
  r.answers.set('a', false);
  assert.equal(await cache.match(rule('a')), false);
  r.answers.set('a', true);
  for (const step of [2_000, 10 * 60_000, 30 * 60_000, 19 * 60_000]) {
    clock.advance(step);
    assert.equal(await cache.match(rule('a')), false, 'the cached answer within the hour');
  }
  assert.equal(r.calls.length, 1);
  clock.advance(60_000);
  assert.equal(await cache.match(rule('a')), true, 'evaluated again after an hour');
  assert.equal(r.calls.length, 2);
  r.answers.set('e', new Error('executing PromQL query: connection refused'));
  clock.advance(2_000);
  await assert.rejects(cache.match(rule('e')), /connection refused/);
  r.answers.set('e', true);
  clock.advance(30 * 60_000);
  await assert.rejects(cache.match(rule('e')), /connection refused/, 'the failure is kept for the hour');
  clock.advance(31 * 60_000);
  assert.equal(await cache.match(rule('e')), true);
});

test('entries expire 24 h after their evaluation', async () => {
  for (const [age, expired] of [[23 * HOUR, false], [25 * HOUR, true]] as const) {
    const clock = new FakeClock();
    const r = recorder(clock);
    r.answers.set('a', true);
    const cache = new ConditionCache(r.match, clock);
    assert.equal(await cache.match(rule('a')), true);
    clock.advance(age);
    // b takes this second's query; a, asked in the same second, answers from the cache if it is still there.
    assert.equal(await cache.match(rule('b')), false);
    if (expired) await assert.rejects(cache.match(rule('a')), ThrottledError, `after ${age / HOUR} h`);
    else assert.equal(await cache.match(rule('a')), true, `after ${age / HOUR} h`);
  }
});

test('the update poller: throttled risks are Unknown and evaluated again each second without refetching; acceptRisks applies at once', async () => {
  const IMAGE = (v: string) => `bosun.local/release@sha256:${v.replace(/\D/g, '').padEnd(64, '0')}`;
  const node = (version: string) => ({ version, payload: IMAGE(version), metadata: {} });
  const risk = (name: string, promql: string) => ({ name, url: `https://issues.example/${name}`, message: `${name} may hurt`, matchingRules: [{ type: 'PromQL', promql: { promql } }] });
  let fetches = 0;
  const server = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        nodes: [node('1.0.0'), node('1.0.1'), node('1.0.2')],
        edges: [],
        conditionalEdges: [
          { edges: [{ from: '1.0.0', to: '1.0.1' }], risks: [risk('Applies', 'applies')] },
          { edges: [{ from: '1.0.0', to: '1.0.2' }], risks: [risk('DoesNotApply', 'not')] },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graph`;
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const r = recorder(clock);
  r.answers.set('applies', true);
  r.answers.set('not', false);
  const cache = new ConditionCache(r.match, clock);
  const poller = new UpdatePoller({ clock, intervalMs: 300_000, promql: (x) => cache.match(x) });
  let status: Partial<api.ClusterVersionStatus> = { history: [{ state: 'Completed', startedTime: '2026-01-01T00:00:00Z', completionTime: '2026-01-01T00:01:00Z', version: '1.0.0', image: IMAGE('1.0.0'), verified: false }] };
  let acceptRisks: { name: string }[] | undefined;
  const cv = () => ({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: 'c', upstream, channel: 'stable', desiredUpdate: acceptRisks && { acceptRisks } }, status }) as unknown as api.ClusterVersion;
  const poll = async () => {
    const change = await poller.poll(cv());
    if (change) status = change(status);
    return change !== undefined;
  };
  const recommended = () => Object.fromEntries((status.conditionalUpdates ?? []).map((u) => [u.release.version, (({ status: s, reason, lastTransitionTime }) => ({ s, reason, lastTransitionTime }))(u.conditions!.find((c) => c.type === 'Recommended')!)]));
  try {
    assert.ok(await poll());
    // 1.0.2 (the higher version) is evaluated first; 1.0.1's risk waits its turn.
    assert.deepEqual(recommended(), {
      '1.0.2': { s: 'True', reason: 'NotExposedToRisks', lastTransitionTime: '2026-01-01T00:00:00Z' },
      '1.0.1': { s: 'Unknown', reason: 'EvaluationFailed', lastTransitionTime: '2026-01-01T00:00:00Z' },
    });
    assert.match(status.conditionalUpdates!.find((u) => u.release.version === '1.0.1')!.conditions![0].message!, /Could not evaluate exposure to update risk Applies \(evaluation is throttled until 00:00:01Z\)/);
    assert.deepEqual(status.availableUpdates?.map((u) => u.version), ['1.0.2'], 'a recommended conditional update is offered');
    clock.advance(500);
    assert.equal(await poll(), false, 'not again within the second');
    clock.advance(600);
    assert.ok(await poll());
    assert.equal(fetches, 1, 'the update service was asked once');
    assert.deepEqual(recommended(), {
      '1.0.2': { s: 'True', reason: 'NotExposedToRisks', lastTransitionTime: '2026-01-01T00:00:00Z' },
      '1.0.1': { s: 'False', reason: 'Applies', lastTransitionTime: '2026-01-01T00:00:01Z' },
    });
    assert.deepEqual(poller.riskConditions(), [
      { risk: 'DoesNotApply', status: 'False', reason: 'NotMatch' },
      { risk: 'Applies', status: 'True', reason: 'Match' },
    ]);
    clock.advance(5_000);
    assert.equal(await poll(), false, 'nothing unknown, nothing changed: nothing to do');
    acceptRisks = [{ name: 'Applies' }];
    assert.ok(await poll(), 'accepting a risk is applied at once');
    assert.deepEqual(recommended()['1.0.1'], { s: 'True', reason: 'AllExposedRisksAccepted', lastTransitionTime: '2026-01-01T00:00:06Z' });
    assert.deepEqual(status.availableUpdates?.map((u) => u.version), ['1.0.2', '1.0.1'], 'newest first');
    assert.equal(r.calls.length, 2, 'the accepted risk came from the cache');
    assert.equal(fetches, 1);
  } finally {
    server.close();
  }
});
