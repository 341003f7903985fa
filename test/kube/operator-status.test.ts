// The operator-status library: conditions whose lastTransitionTime moves only with their status
// (on the operator's clock), versions reported only once done, degraded-on-error per controller
// (after N failures, at once for terminal or chosen errors, cleared by a success, several
// controllers unioned), the release version from the operator's Deployment or its environment,
// and the ClusterOperator written against the embedded API server only when it changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { KubeClient } from '../../src/kube/client.js';
import { FakeClock } from '../../src/kube/clock.js';
import { findCondition } from '../../src/kube/conditions.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { ClusterOperatorStatus, type Failure, releaseVersion, releaseVersionFromEnvironment, requireReleaseVersion } from '../../src/kube/operator-status.js';
import { Manager } from '../../src/kube/manager.js';
import { resources } from '../../src/kube/resources.js';

const CO_CRD = fileURLToPath(new URL('../../manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml', import.meta.url));
const related = [{ group: '', resource: 'namespaces', name: 'openshift-example' }];

/** A status over a ClusterOperator held in memory (no API calls are made by these rules). */
function offline(current?: api.ClusterOperator, clock = new FakeClock()) {
  const changes: Array<Failure | undefined> = [];
  const status = new ClusterOperatorStatus({
    client: undefined as unknown as KubeClient,
    name: 'example',
    relatedObjects: related,
    clock,
    informer: { get: () => current },
    onFailureChange: (failure) => changes.push(failure),
  });
  return { status, changes, clock };
}

test('conditions are set on the operator clock; lastTransitionTime moves only when the status changes', () => {
  const { status, clock } = offline();
  let conditions = status.conditions([{ type: 'Available', status: 'False', reason: 'Starting', message: 'starting' }]);
  assert.equal(conditions[0].lastTransitionTime, '2026-01-01T00:00:00Z');
  clock.advance(60_000);
  conditions = status.conditions([{ type: 'Available', status: 'False', reason: 'StillStarting', message: 'still' }], conditions);
  assert.equal(conditions[0].lastTransitionTime, '2026-01-01T00:00:00Z', 'a new reason or message alone keeps the time');
  assert.equal(conditions[0].reason, 'StillStarting');
  clock.advance(60_000);
  conditions = status.conditions([{ type: 'Available', status: 'True', reason: 'AsExpected', message: '' }, { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' }], conditions);
  assert.deepEqual(conditions.map((c) => [c.type, c.status, c.lastTransitionTime]), [['Available', 'True', '2026-01-01T00:02:00Z'], ['Degraded', 'False', '2026-01-01T00:02:00Z']]);
});

test('versions: the release once done, until then those already reported, else none', () => {
  assert.equal(offline().status.versions(false, '2.0.0'), undefined);
  assert.deepEqual(offline().status.versions(true, '2.0.0'), [{ name: 'operator', version: '2.0.0' }]);
  const reported = { metadata: { name: 'example' }, spec: {}, status: { versions: [{ name: 'operator', version: '1.0.0' }] } } as api.ClusterOperator;
  assert.deepEqual(offline(reported).status.versions(false, '2.0.0'), [{ name: 'operator', version: '1.0.0' }]);
  assert.deepEqual(offline(reported).status.versions(true, '2.0.0'), [{ name: 'operator', version: '2.0.0' }]);
  assert.equal(offline({ metadata: { name: 'example' }, spec: {}, status: { versions: [] } } as unknown as api.ClusterOperator).status.versions(false, '2.0.0'), undefined);
});

test('degraded-on-error: failing after N consecutive failures of a key, at once for terminal or chosen errors, over once the key syncs', () => {
  const { status, changes } = offline();
  const render = status.degradedOnError('render', { after: 3, reason: 'RenderFailed', immediate: (e) => e.message.startsWith('bad input') });
  render.report('a', new Error('conflict'), 1, false);
  render.report('a', new Error('conflict'), 2, false);
  assert.equal(status.failure(), undefined, 'two failures are not yet a failing controller');
  assert.equal(changes.length, 0);
  render.report('a', new Error('conflict'), 3, false);
  assert.deepEqual(status.failure(), { reason: 'RenderFailed', message: 'conflict' });
  render.report('a', new Error('conflict'), 4, false);
  assert.equal(changes.length, 2, 'each failure while failing is told (a deleted ClusterOperator is written again)');
  render.report('b', new Error('bad input: no pool'), 1, false);
  assert.deepEqual(status.failure(), { reason: 'RenderFailed', message: 'conflict; bad input: no pool' });
  render.report('a', undefined, 0, false);
  assert.deepEqual(status.failure(), { reason: 'RenderFailed', message: 'bad input: no pool' }, 'a key that syncs is no longer failing');
  render.report('b', undefined, 0, false);
  assert.equal(status.failure(), undefined);
  render.report('c', new Error('unrecoverable'), 1, true);
  assert.deepEqual(status.failure(), { reason: 'RenderFailed', message: 'unrecoverable' }, 'a terminal error at once');
  render.report('c', undefined, 0, false);
  render.report('c', undefined, 0, false);
  assert.deepEqual(changes.map((c) => c?.message), ['conflict', 'conflict', 'conflict; bad input: no pool', 'bad input: no pool', undefined, 'unrecoverable', undefined], 'a recovery is told once');
});

test('several failing controllers are one Degraded: reasons <Controller>_<Reason> joined by ::, a message line each', () => {
  const { status } = offline();
  status.degradedOnError('node', { reason: 'DrainFailed' }).report('n1', new Error('pod p will not leave'), 1, false);
  status.degradedOnError('machine', { message: (e) => `machine: ${e.message}` }).report('m1', new Error('no instance'), 1, false);
  assert.deepEqual(status.failure(), { reason: 'machine_SyncFailed::node_DrainFailed', message: 'machine: machine: no instance\nnode: pod p will not leave' });
  assert.deepEqual(status.failure('machine'), { reason: 'DrainFailed', message: 'pod p will not leave' }, 'the writer excludes its own');
  const many = offline().status;
  const machines = many.degradedOnError('machine');
  for (let i = 1; i <= 5; i++) machines.report(`m${i}`, new Error(`machine m${i} has no instance`), 1, false);
  assert.deepEqual(many.failure(), { reason: 'SyncFailed', message: 'machine m1 has no instance; machine m2 has no instance; machine m3 has no instance; and 2 more' }, 'a few failures named, the rest counted');
});

test('the release version: the own Deployment RELEASE_VERSION wins once applied, else the environment', () => {
  const own: { deployment?: api.Deployment } = {};
  const version = releaseVersion({ version: '1.0.0', deployment: { informer: { get: (name: string, ns?: string) => (name === 'op' && ns === 'ns' ? own.deployment : undefined) }, namespace: 'ns', name: 'op' } });
  assert.equal(version(), '1.0.0');
  own.deployment = { metadata: { name: 'op' }, spec: { selector: {}, template: { spec: { containers: [{ name: 'op', env: [{ name: 'POD_NAME', value: 'x' }, { name: 'RELEASE_VERSION', value: '2.0.0' }] }] } } } };
  assert.equal(version(), '2.0.0');
  assert.equal(releaseVersion({ version: () => '3.0.0' })(), '3.0.0');
  assert.equal(releaseVersionFromEnvironment(undefined, { RELEASE_VERSION: '4.0.0' }), '4.0.0');
  assert.equal(releaseVersionFromEnvironment('5.0.0', { RELEASE_VERSION: '4.0.0' }), '5.0.0', 'the flag wins');
  assert.equal(requireReleaseVersion(undefined, { RELEASE_VERSION: '4.0.0' }), '4.0.0');
  assert.throws(() => requireReleaseVersion(undefined, {}), /release version is unknown: pass --release-version or set RELEASE_VERSION/);
});

test('the ClusterOperator is created, written only when it changes, and says Degraded while another controller fails', async () => {
  const api = await startTestApiServer();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath), { component: 'example-operator' });
    await client.create(resources.customResourceDefinitions, parse(readFileSync(CO_CRD, 'utf8')));
    await eventually('ClusterOperators served', async () => (await client.list(resources.clusterOperators).then(() => true, () => false)), 10_000);
    const clock = new FakeClock();
    const status = new ClusterOperatorStatus({ client, name: 'example', relatedObjects: related, clock });
    const ok = status.conditions([{ type: 'Available', status: 'True', reason: 'AsExpected', message: '' }, { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' }], []);
    assert.equal(await status.write({ conditions: ok, versions: [{ name: 'operator', version: '1.0.0' }] }), 'written');
    const first = await client.get(resources.clusterOperators, 'example');
    assert.deepEqual(first.status!.relatedObjects, related);
    assert.deepEqual(first.status!.versions, [{ name: 'operator', version: '1.0.0' }]);
    clock.advance(60_000);
    assert.equal(await status.write({ conditions: status.conditions([{ type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' }], ok) }), 'unchanged');
    assert.equal((await client.get(resources.clusterOperators, 'example')).metadata.resourceVersion, first.metadata.resourceVersion, 'no write when nothing changes');

    status.degradedOnError('machine').report('m1', new Error('no instance'), 1, false);
    assert.equal(await status.write({ conditions: ok }, { from: 'status' }), 'written');
    const degraded = findCondition((await client.get(resources.clusterOperators, 'example')).status!.conditions, 'Degraded');
    assert.deepEqual([degraded?.status, degraded?.reason, degraded?.message, degraded?.lastTransitionTime], ['True', 'SyncFailed', 'no instance', '2026-01-01T00:01:00Z']);
    assert.deepEqual((await client.get(resources.clusterOperators, 'example')).status!.versions, [{ name: 'operator', version: '1.0.0' }], 'versions not given stay');
    assert.equal(await status.write({ conditions: ok }, { from: 'machine' }), 'written', 'the failing controller writing itself: its failure is its own to say');
    assert.equal(findCondition((await client.get(resources.clusterOperators, 'example')).status!.conditions, 'Degraded')?.status, 'False');
  } finally {
    await api.stop();
  }
});

test('the API server sees each component by its User-Agent and field manager', async () => {
  const api = await startTestApiServer();
  const agents: string[] = [];
  api.server.onCompleted((request) => agents.push(request.userAgent));
  try {
    const kc = loadKubeConfig(api.kubeconfigPath);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const operator = new KubeClient(kc, { component: 'example-operator' });
    await operator.create(resources.configMaps, { metadata: { name: 'mine', namespace: 'default' }, data: { a: '1' } });
    const other = new KubeClient(kc);
    await other.mergePatch(resources.configMaps, 'mine', 'default', { data: { b: '2' } });
    await operator.update(resources.configMaps, { ...(await operator.get(resources.configMaps, 'mine', 'default')), data: { a: '1', b: '2', c: '3' } });
    const managers = (await operator.get(resources.configMaps, 'mine', 'default')).metadata.managedFields!.map((m) => `${m.manager} ${m.operation}`);
    assert.deepEqual(managers.sort(), ['bosun Update', 'bosun-example-operator Update']);
    await eventually('the requests recorded', () => agents.length >= 4, 5_000);
    assert.ok(agents.includes(`bosun-example-operator/${version}`), `agents: ${agents.join(', ')}`);
    assert.ok(agents.includes(`bosun/${version}`), `agents: ${agents.join(', ')}`);
    assert.ok(agents.every((a) => a.startsWith('bosun')), 'every request names its component');
    const manager = new Manager({ name: 'machine-config-operator', kubeconfig: kc });
    assert.deepEqual([manager.client.userAgent, manager.client.fieldManager], [`bosun-machine-config-operator/${version}`, 'bosun-machine-config-operator'], "a component's manager names its client");
  } finally {
    await api.stop();
  }
});
