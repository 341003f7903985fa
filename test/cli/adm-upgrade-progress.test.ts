// The progress `bosun adm upgrade --wait` shows never goes back: fed the ClusterVersion states of
// an update whose CVO starts a new sync pass that counts from the start again (as a clean update
// of a fresh cluster did: 63 of 64, then 44 of 64 waiting on cluster-api), the bar stays at the
// furthest the update has got and the line says the pass was retried.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePassProgress, progressBar, UpgradeProgressTracker } from '../../src/cli/adm-upgrade-progress.js';

import type { ClusterVersion } from '../../src/api/index.js';

/** A ClusterVersion updating to `version`, with its Progressing message and, optionally, Failing. */
function clusterVersion(version: string, progressing: string, failing?: { reason: string }): ClusterVersion {
  // Only what the tracker reads: a partial ClusterVersion.
  return {
    spec: { desiredUpdate: { version } },
    status: {
      desired: { version },
      conditions: [
        { type: 'Progressing', status: 'True', reason: '', message: progressing },
        { type: 'Failing', status: failing ? 'True' : 'False', reason: failing?.reason ?? '', message: '' },
      ],
    },
  } as ClusterVersion;
}

const percentOf = (line: string): number => Number(/^\[[#.]+\]\s+(\d+)%/.exec(line)?.[1]);
const textOf = (line: string): string => line.replace(/^\[[#.]+\]\s+\d+%\s+/, '');

test('a retried pass does not move the bar back; the line says so and where the pass is', () => {
  const tracker = new UpgradeProgressTracker(10);
  const states: Array<[string, number, string]> = [
    // [Progressing message, percent shown, text shown]
    ['Working towards 1.0.1: 10 of 64 done (15% complete)', 15, 'Working towards 1.0.1: 10 of 64 done (15% complete)'],
    ['Working towards 1.0.1: 63 of 64 done (98% complete), waiting on cluster-api', 98, 'Working towards 1.0.1: 63 of 64 done (98% complete), waiting on cluster-api'],
    ['Working towards 1.0.1: 0 of 64 done (0% complete)', 98, 'Working towards 1.0.1: pass retried; 63 of 64 done at best (this pass: 0 of 64)'],
    ['Working towards 1.0.1: 44 of 64 done (68% complete), waiting on cluster-api', 98, 'Working towards 1.0.1: pass retried; 63 of 64 done at best (this pass: 44 of 64, waiting on cluster-api)'],
    // The new pass catches up: plain progress again.
    ['Working towards 1.0.1: 63 of 64 done (98% complete), waiting on cluster-api', 98, 'Working towards 1.0.1: 63 of 64 done (98% complete), waiting on cluster-api'],
    // A pass that stops with an error keeps the bar where the update got.
    ['Unable to apply 1.0.1: the cluster operator cluster-api is degraded', 98, 'Unable to apply 1.0.1: the cluster operator cluster-api is degraded (63 of 64 done at best)'],
  ];
  for (const [message, percent, text] of states) {
    const line = tracker.observe(clusterVersion('1.0.1', message));
    assert.equal(percentOf(line), percent, `${message} → ${line}`);
    assert.equal(textOf(line), text);
  }
});

test('the furthest point is kept per target version: a new target starts from its own count', () => {
  const tracker = new UpgradeProgressTracker(10);
  assert.equal(percentOf(tracker.observe(clusterVersion('1.0.1', 'Working towards 1.0.1: 50 of 64 done (78% complete)'))), 78);
  // Retargeted to 1.0.2: its first pass is its own, not a retry of 1.0.1's.
  const retargeted = tracker.observe(clusterVersion('1.0.2', 'Working towards 1.0.2: 5 of 64 done (7% complete)'));
  assert.equal(percentOf(retargeted), 7);
  assert.doesNotMatch(retargeted, /retried/);
  assert.equal(percentOf(tracker.observe(clusterVersion('1.0.2', 'Unable to apply 1.0.2: payload failed'))), 7);
  // Passes whose totals differ are compared by the share done.
  assert.match(tracker.observe(clusterVersion('1.0.2', 'Working towards 1.0.2: 5 of 70 done (7% complete)')), /^\[#\.+\] {3}7% {2}.*pass retried; 5 of 64 done at best \(this pass: 5 of 70\)$/);
  assert.equal(tracker.observe(clusterVersion('1.0.2', 'Working towards 1.0.2: 6 of 70 done (8% complete)')), '[#.........]   8%  Working towards 1.0.2: 6 of 70 done (8% complete)');
});

test('the line carries Failing and reads the CVO before it reports', () => {
  const tracker = new UpgradeProgressTracker(10);
  assert.equal(tracker.observe({ status: {} } as ClusterVersion), '[..........]   0%  waiting for the cluster-version operator');
  const failing = tracker.observe(clusterVersion('1.0.1', 'Working towards 1.0.1: 32 of 64 done (50% complete)', { reason: 'ClusterOperatorDegraded' }));
  assert.equal(failing, '[#####.....]  50%  Working towards 1.0.1: 32 of 64 done (50% complete)  (failing: ClusterOperatorDegraded)');
});

test('parsePassProgress reads the CVO progress message; progressBar draws a share', () => {
  assert.deepEqual(parsePassProgress('Working towards 1.0.1: 44 of 64 done (68% complete), waiting on cluster-api, machine-config'), { version: '1.0.1', done: 44, total: 64, percent: 68, rest: ', waiting on cluster-api, machine-config' });
  assert.equal(parsePassProgress('Cluster version is 1.0.1'), undefined);
  assert.equal(progressBar(100, 'done', 4), '[####] 100%  done');
});
