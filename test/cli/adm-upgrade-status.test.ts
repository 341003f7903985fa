// `bosun adm upgrade status` (src/cli/adm-upgrade-status*.ts) on cluster states written from
// OpenShift's documentation of `oc adm upgrade status`: a control plane update with a node
// draining, worker pools part-way (one node draining, one updated, one pending), a degraded node
// in Update Health, a paused pool, and a cluster that is not updating.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Obj } from '../../src/kube/index.js';
import { assessUpgradeStatus } from '../../src/cli/adm-upgrade-status-assess.js';
import { renderUpgradeStatus } from '../../src/cli/adm-upgrade-status.js';
import { runBosun } from '../helpers/cli.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const M = 'machineconfiguration.openshift.io';

const cv = (state: 'Partial' | 'Completed'): Obj => ({
  metadata: { name: 'version' },
  status: {
    desired: { version: '4.17.1' },
    conditions: [{ type: 'Progressing', status: state === 'Partial' ? 'True' : 'False' }],
    history: [{ state, version: '4.17.1', startedTime: ago(54) }, { state: 'Completed', version: '4.17.0', startedTime: ago(500) }],
  },
});
const co = (name: string, version: string, extra: Obj[] = []): Obj => ({
  metadata: { name }, status: { versions: [{ name: 'operator', version }], conditions: [{ type: 'Available', status: 'True' }, ...extra] },
});
const rendered = (name: string, version: string): Obj => ({ metadata: { name, annotations: { [`${M}/release-image-version`]: version } } });
const pool = (name: string, target: string, paused = false): Obj => ({ metadata: { name }, spec: { paused, configuration: { name: target }, nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${name}`]: '' } } } });
const node = (name: string, role: string, a: Record<string, string>, o: { ready?: boolean; cordoned?: boolean } = {}): Obj => ({
  metadata: { name, labels: { [`node-role.kubernetes.io/${role}`]: '' }, annotations: Object.fromEntries(Object.entries(a).map(([k, v]) => [`${M}/${k}`, v])) },
  spec: o.cordoned ? { unschedulable: true } : {},
  status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});
const pending = (cfg: string) => ({ currentConfig: cfg, desiredConfig: cfg, state: 'Done' });
const draining = (from: string, to: string) => ({ currentConfig: from, desiredConfig: to, state: 'Working', desiredDrain: `drain-${to}`, lastAppliedDrain: `uncordon-${from}` });

function documentedCluster(): Parameters<typeof assessUpgradeStatus>[0] {
  const operators = [...Array.from({ length: 32 }, (_, i) => co(`operator-${String(i).padStart(2, '0')}`, '4.17.1')),
    co('machine-config', '4.17.0', [{ type: 'Progressing', status: 'True', reason: 'PoolsUpdating', message: 'Pools master, worker are rolling out their configuration', lastTransitionTime: ago(10) }])];
  return {
    cv: cv('Partial'), operators, now: NOW,
    machineConfigs: [rendered('rendered-master-old', '4.17.0'), rendered('rendered-master-new', '4.17.1'), rendered('rendered-worker-old', '4.17.0'), rendered('rendered-worker-new', '4.17.1'), rendered('rendered-infra-old', '4.17.0'), rendered('rendered-infra-new', '4.17.1')],
    pools: [pool('master', 'rendered-master-new'), pool('worker', 'rendered-worker-new'), pool('infra', 'rendered-infra-new')],
    nodes: [
      node('ip-10-0-53-40', 'master', draining('rendered-master-old', 'rendered-master-new'), { cordoned: true }),
      node('ip-10-0-30-217', 'master', pending('rendered-master-old')),
      node('ip-10-0-92-180', 'master', pending('rendered-master-old')),
      node('ip-10-0-4-159', 'worker', draining('rendered-worker-old', 'rendered-worker-new'), { cordoned: true }),
      node('ip-10-0-99-40', 'worker', pending('rendered-worker-old')),
      node('ip-10-0-4-159-infra', 'infra', draining('rendered-infra-old', 'rendered-infra-new'), { cordoned: true }),
      node('ip-10-0-20-162', 'infra', pending('rendered-infra-new')),
    ],
  };
}

test('the documented example: control plane, pools, nodes and health as oc prints them', () => {
  const text = renderUpgradeStatus(assessUpgradeStatus(documentedCluster()), 'nodes');
  const lines = text.split('\n');
  assert.deepEqual(lines.slice(0, 7), [
    '= Control Plane =',
    'Assessment:      Progressing',
    'Target Version:  4.17.1 (from 4.17.0)',
    'Updating:        machine-config',
    'Completion:      96% (32 operators updated, 1 updating, 0 waiting)',
    'Duration:        54m (Est. Time Remaining: 1m41s)',
    'Operator Health: 33 Healthy',
  ]);
  assert.ok(text.includes('Updating Cluster Operators\nNAME             SINCE   REASON          MESSAGE\nmachine-config   10m     PoolsUpdating   Pools master, worker are rolling out their configuration'));
  assert.ok(text.includes([
    'Control Plane Nodes',
    'NAME             ASSESSMENT    PHASE      VERSION   EST   MESSAGE',
    'ip-10-0-30-217   Outdated      Pending    4.17.0    ?',
    'ip-10-0-53-40    Progressing   Draining   4.17.0    ?',
    'ip-10-0-92-180   Outdated      Pending    4.17.0    ?',
  ].join('\n')), text);
  assert.ok(text.includes([
    '= Worker Upgrade =', '',
    'WORKER POOL   ASSESSMENT    COMPLETION   STATUS',
    'infra         Progressing   50% (1/2)    1 Available, 1 Progressing, 1 Draining',
    'worker        Progressing   0% (0/2)     1 Available, 1 Progressing, 1 Draining',
  ].join('\n')), text);
  assert.ok(text.includes('ip-10-0-20-162        Completed     Updated    4.17.1    -'), text);
  assert.ok(text.endsWith('= Update Health =\nSINCE   LEVEL   IMPACT   MESSAGE\n54m     Info    None     Update is proceeding well'), text);
});

test('without --details=nodes completed nodes are left out; a degraded node and a paused pool show as oc shows them', () => {
  const c = documentedCluster();
  c.nodes[4] = node('ip-10-0-99-40', 'worker', { ...pending('rendered-worker-old'), desiredConfig: 'rendered-worker-new', state: 'Degraded', reason: 'unexpected on-disk state validating against rendered-worker-new: content mismatch for file "/etc/a"' });
  c.pools[2] = pool('infra', 'rendered-infra-new', true);
  c.nodes[5] = node('ip-10-0-4-159-infra', 'infra', pending('rendered-infra-old'));
  const text = renderUpgradeStatus(assessUpgradeStatus(c));
  assert.doesNotMatch(text, /ip-10-0-20-162 /, 'completed node hidden by default');
  assert.match(text, /worker +Degraded +0% \(0\/2\) +0 Available, 1 Progressing, 1 Draining, 1 Degraded/);
  assert.match(text, /infra +Excluded +50% \(1\/2\) +2 Available, 0 Progressing, 0 Draining, 1 Excluded/);
  assert.match(text, /ip-10-0-4-159-infra +Excluded +Paused +4\.17\.0/);
  assert.match(text, /ip-10-0-99-40 +Degraded +Updating +4\.17\.0 +\? +unexpected on-disk state/);
  assert.match(text, /- {7}Error {3}Update Stalled {3}Node ip-10-0-99-40 is degraded/);
  const detailed = renderUpgradeStatus(assessUpgradeStatus(c), 'health');
  assert.match(detailed, /Message: Node ip-10-0-99-40 is degraded\n {2}Since: +-\n {2}Level: +Error\n {2}Impact: +Update Stalled\n {2}Resources:\n {4}nodes: ip-10-0-99-40\n {2}Description: unexpected on-disk state/);
});

test('a cluster that is not updating says so', () => {
  const c = documentedCluster();
  c.cv = cv('Completed');
  assert.equal(renderUpgradeStatus(assessUpgradeStatus(c)), 'The cluster is not updating.');
});

test('bosun adm upgrade status: a bad --details fails with a message', async () => {
  const r = await runBosun(['adm', 'upgrade', 'status', '--details', 'everything', '--kubeconfig', '/nonexistent']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--details must be one of none, nodes, operators, health, all, not "everything"/);
});
