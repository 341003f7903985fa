// `bosun adm upgrade` against a local cluster: status, channel checks, refusing a conditional
// update, and `--to … --wait` following an update to completion.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { bringUp, type LocalCluster } from '../../src/cluster/bring-up.js';
import { localClusterOptions } from '../helpers/local-cluster.js';
import { runBosun } from '../helpers/cli.js';
import type { ClusterVersion } from '../../src/api/index.js';
import { chooseTarget, poolBehind, renderUpgradeStatus } from '../../src/cli/adm-upgrade-cluster.js';
import { progressBar } from '../../src/cli/adm-upgrade-progress.js';
import { eventually } from '../helpers/eventually.js';

let cluster: LocalCluster;
let dataDir: string;

before(async () => {
  const options = localClusterOptions({ upstreamPollMs: 300 });
  dataDir = options.dataDir;
  cluster = await bringUp(options);
});
after(async () => {
  await cluster.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const adm = (...args: string[]) => runBosun(['adm', 'upgrade', ...args, '--kubeconfig', cluster.kubeconfigPath], { timeoutMs: 60_000 });

function untilOutput(args: string[], re: RegExp): Promise<string> {
  let last = '';
  return eventually(`bosun adm upgrade ${args.join(' ')} to print ${re}`, async () => {
    const r = await adm(...args);
    last = r.stdout + r.stderr;
    return re.test(r.stdout) ? r.stdout : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250, detail: () => last });
}

test('status, channel, a refused conditional update, then --to --wait', async () => {
  const status = await untilOutput([], /Recommended updates:/);
  assert.match(status, /^Cluster version is 1\.0\.0$/m);
  assert.match(status, /^Channel: stable-1\.0 \(available channels: .*stable-1\.0/m);
  assert.match(status, /^\s+1\.0\.1\s+bosun\.local\/release@sha256:[0-9a-f]{64}$/m);
  assert.match(status, /--include-not-recommended/);
  const withRisks = await adm('--include-not-recommended');
  assert.match(withRisks.stdout, /Version: 1\.0\.2[\s\S]*Recommended: False[\s\S]*LeaderElectionRestart/);

  const badChannel = await runBosun(['adm', 'upgrade', 'channel', 'nightly-9', '--kubeconfig', cluster.kubeconfigPath]);
  assert.equal(badChannel.code, 1);
  assert.match(badChannel.stderr, /not one of the channels of the current release/);

  const risky = await adm('--to', '1.0.2');
  assert.equal(risky.code, 1);
  assert.match(risky.stderr, /not one of the recommended updates[\s\S]*--allow-not-recommended/);
  const unknown = await adm('--to', '9.9.9');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /not one of the available updates: 1\.0\.1, 1\.0\.2/);
  const tag = await adm('--to-image', 'bosun.local/release:1.0.1');
  assert.equal(tag.code, 1);
  assert.match(tag.stderr, /by digest/);

  const done = await adm('--to', '1.0.1', '--wait', '--timeout', '60');
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /Requested update to 1\.0\.1/);
  assert.match(done.stdout, /Cluster version is 1\.0\.1$/m);
  assert.match((await adm()).stdout, /^Cluster version is 1\.0\.1$/m);
});

test('target choice and rendering are pure', () => {
  const cv = {
    spec: { channel: 'stable-1.0', upstream: 'http://u' },
    status: {
      history: [{ state: 'Completed', version: '1.0.0' }],
      availableUpdates: [{ version: '1.0.1', image: 'img@sha256:' + 'a'.repeat(64) }, { version: '1.0.3', image: 'img@sha256:' + 'b'.repeat(64) }],
      conditionalUpdates: [{ release: { version: '1.0.2', image: 'img@sha256:' + 'c'.repeat(64) }, risks: [{ name: 'R', message: 'm' }], conditions: [{ type: 'Recommended', status: 'False', reason: 'R', message: 'm' }] }],
      conditions: [{ type: 'Upgradeable', status: 'False', reason: 'X', message: 'operator foo says no' }],
    },
  } as ClusterVersion;
  assert.equal(chooseTarget(cv, { toLatest: true }).version, '1.0.3');
  assert.equal(chooseTarget(cv, { to: '1.0.2', allowNotRecommended: true }).version, '1.0.2');
  assert.deepEqual(chooseTarget(cv, { toImage: 'other@sha256:' + 'd'.repeat(64), allowExplicitUpgrade: true }), { image: 'other@sha256:' + 'd'.repeat(64) });
  assert.throws(() => chooseTarget(cv, { to: '1.0.1', toLatest: true }), /exactly one/);
  assert.throws(() => chooseTarget(cv, { toImage: 'other@sha256:' + 'd'.repeat(64) }), /--allow-explicit-upgrade/);
  assert.equal(chooseTarget(cv, { toImage: 'x:tag', force: true }).force, true);
  const text = renderUpgradeStatus(cv, false);
  assert.match(text, /Upgradeable=False\n\n {2}Reason: X\n {2}Message: operator foo says no/);
  assert.ok(text.indexOf('1.0.3') < text.indexOf('1.0.1'), 'newest first');
  assert.equal(progressBar(50, 'Working towards 1.0.1: 6 of 12 done (50% complete)', 10), '[#####.....]  50%  Working towards 1.0.1: 6 of 12 done (50% complete)');
});

test('--wait follows the pools after the ClusterVersion: a pool is behind until all its nodes run its config (paused and empty pools are not waited for)', () => {
  const pool = (spec: Record<string, unknown>, status: Record<string, unknown>, updated = 'True') => ({
    metadata: { name: 'worker' }, spec: { configuration: { name: 'rendered-worker-new' }, ...spec },
    status: { configuration: { name: 'rendered-worker-new' }, machineCount: 2, updatedMachineCount: 2, conditions: [{ type: 'Updated', status: updated }], ...status },
  });
  const cases: Array<[string, ReturnType<typeof pool>, boolean]> = [
    ['every node updated', pool({}, {}), false],
    ['one node to go', pool({}, { updatedMachineCount: 1 }, 'False'), true],
    ['the status still on the old config', pool({}, { configuration: { name: 'rendered-worker-old' } }), true],
    ['counts caught up, Updated not yet True', pool({}, {}, 'False'), true],
    ['paused', pool({ paused: true }, { updatedMachineCount: 0 }, 'False'), false],
    ['no nodes', pool({}, { machineCount: 0, updatedMachineCount: 0 }), false],
  ];
  for (const [name, p, behind] of cases) assert.equal(poolBehind(p), behind, name);
});
