// The machine-config controller's metrics (src/mco/controller/metrics.ts) as Prometheus reads them
// from the component manager's /metrics, with the real controller against the API server as a
// cluster runs it (evictions honour PodDisruptionBudgets): the mco_*_machine_count gauges equal
// each pool's status as it changes, mco_state names the pool's latest True condition per node,
// mcc_pool_alert flags a master that a custom pool also selects, and mcc_drain_err is set once a
// drain a budget blocks outlasts the drain timeout, and gone once the drain succeeds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startClusterServer, type ClusterServer } from '../../src/apiserver/cluster-server.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { KubeClient, Manager, loadKubeConfig, resources, rfc3339, type Obj, type ResourceRef } from '../../src/kube/index.js';
import { addMachineConfigController } from '../../src/mco/controller/run.js';
import type { MachineConfigPool } from '../../src/mco/controller/types.js';
import { setLogLevel } from '../../src/common/log.js';
import { eventually } from '../helpers/eventually.js';
import { samplesUntil, scrapeSamples, series, valueOf, type Sample } from '../helpers/metrics.js';
import { builtInPools, controllerConfig, workerNode } from './controller-fixtures.js';

setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'warn');

const PDBS: ResourceRef<Obj> = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespaced: true };
const DESIRED_DRAIN = 'machineconfiguration.openshift.io/desiredDrain';
const LAST_DRAIN = 'machineconfiguration.openshift.io/lastAppliedDrain';
/** The drain timeout here (OpenShift's is an hour). */
const DRAIN_TIMEOUT_MS = 1500;

let dataDir: string;
let api: ClusterServer;
let kube: KubeClient;
let manager: Manager;
let running: Promise<void>;

const metrics = () => scrapeSamples(manager.metricsAddress!, api.server.token);
const pools = async () => (await kube.list(resources.machineConfigPools)).items as MachineConfigPool[];

const until = (what: string, check: (s: Sample[]) => Promise<string | undefined> | string | undefined, timeoutMs = 15_000) => samplesUntil(metrics, what, check, timeoutMs);

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'bosun-mcc-metrics-'));
  api = await startClusterServer({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  kube = new KubeClient(loadKubeConfig(api.server.kubeconfigPath));
  const dir = join(repositoryRoot, 'release-payload/manifests');
  for (const file of readdirSync(dir).filter((f) => f.startsWith('0000_80_machine-config_01_') && f.endsWith('.crd.yaml'))) {
    await kube.create(resources.customResourceDefinitions, parseYaml(readFileSync(join(dir, file), 'utf8')));
  }
  await eventually('machine-config CRDs served', () => kube.list(resources.machineConfigPools).then(() => true, () => false));
  await kube.create(resources.controllerConfigs, controllerConfig());
  for (const pool of builtInPools(2)) await kube.create(resources.machineConfigPools, pool);
  await kube.create(resources.machineConfigPools, {
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', metadata: { name: 'infra' },
    spec: { machineConfigSelector: { matchExpressions: [{ key: 'machineconfiguration.openshift.io/role', operator: 'In', values: ['worker', 'infra'] }] }, nodeSelector: { matchLabels: { 'node-role.kubernetes.io/infra': '' } } },
  });
  manager = new Manager({ name: 'machine-config-controller', kubeconfig: loadKubeConfig(api.server.kubeconfigPath), metricsListen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn' });
  addMachineConfigController(manager, { renderDelayMs: 50, controllerVersion: 'test', drainTiming: { retryMs: 200, slowRetryMs: 300, thresholdMs: 400, timeoutMs: DRAIN_TIMEOUT_MS } });
  running = manager.start();
  await manager.ready;
});

after(async () => {
  manager?.stop();
  await running?.catch(() => undefined);
  await api?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('mco_*_machine_count equal each pool\'s status, and mco_state names its latest True condition for each of its nodes', async () => {
  const rendered = await eventually('a rendered worker config', async () => (await kube.get(resources.machineConfigPools, 'worker')).spec?.configuration?.name);
  for (const [i, zone] of ['a', 'b', 'c'].entries()) await kube.create(resources.nodes, workerNode(`worker-${i}`, rendered, zone));
  // A master that the infra pool also selects: it stays in master, without infra's configuration.
  const master = workerNode('master-0', 'rendered-master-none', 'a');
  await kube.create(resources.nodes, { ...master, metadata: { ...master.metadata, labels: { 'node-role.kubernetes.io/master': '', 'node-role.kubernetes.io/infra': '' } } });

  const counts = { mco_machine_count: 'machineCount', mco_updated_machine_count: 'updatedMachineCount', mco_degraded_machine_count: 'degradedMachineCount', mco_unavailable_machine_count: 'unavailableMachineCount' } as const;
  const matches = async (s: Sample[]) => {
    for (const pool of await pools()) {
      for (const [metric, field] of Object.entries(counts)) {
        const want = pool.status?.[field] ?? 0;
        if (valueOf(s, metric, { pool: pool.metadata.name! }) !== want) return `${metric}{pool="${pool.metadata.name}"} ${valueOf(s, metric, { pool: pool.metadata.name! })}, status ${want}`;
      }
    }
    return undefined;
  };
  let s = await until('the worker pool counting 3 updated machines', async (s) => (valueOf(s, 'mco_updated_machine_count', { pool: 'worker' }) === 3 ? matches(s) : `worker updated ${valueOf(s, 'mco_updated_machine_count', { pool: 'worker' })}`));
  assert.equal(valueOf(s, 'mco_machine_count', { pool: 'master' }), 1);
  assert.equal(valueOf(s, 'mco_machine_count', { pool: 'infra' }), 0);

  // A worker degraded: the pool's status and the gauges change together.
  await kube.mergePatch(resources.nodes, 'worker-2', undefined, { metadata: { annotations: { 'machineconfiguration.openshift.io/state': 'Degraded', 'machineconfiguration.openshift.io/reason': 'test' } } });
  s = await until('one degraded worker', async (s) => (valueOf(s, 'mco_degraded_machine_count', { pool: 'worker' }) === 1 ? matches(s) : 'not yet'));

  // mco_state: the worker pool's most recent True condition, for each of its nodes.
  const worker = (await pools()).find((p) => p.metadata.name === 'worker')!;
  const latest = [...(worker.status?.conditions ?? [])].filter((c) => c.status === 'True').sort((a, b) => Date.parse(b.lastTransitionTime ?? '') - Date.parse(a.lastTransitionTime ?? ''))[0];
  for (const node of ['worker-0', 'worker-1', 'worker-2']) {
    const found = series(s, 'mco_state', { node, pool: 'worker' });
    assert.equal(found.length, 1, node);
    assert.equal(found[0].value, Date.parse(latest.lastTransitionTime!) / 1000);
    assert.ok([latest.type, ...(worker.status?.conditions ?? []).filter((c) => c.status === 'True' && c.lastTransitionTime === latest.lastTransitionTime).map((c) => c.type)].includes(found[0].labels.state), found[0].labels.state);
  }
  assert.equal(series(s, 'mco_state', { node: 'master-0', pool: 'master' }).length, 1);
});

test('mcc_pool_alert is 1 for a master a custom pool also selects, 0 for the others', async () => {
  const s = await until('mcc_pool_alert for master-0', (s) => (valueOf(s, 'mcc_pool_alert', { node: 'master-0' }) === 1 ? undefined : JSON.stringify(series(s, 'mcc_pool_alert'))));
  assert.equal(valueOf(s, 'mcc_pool_alert', { node: 'worker-0' }), 0);
  assert.equal(valueOf(s, 'mcc_pool_alert', { node: 'initialize' }), 0, 'upstream\'s initial series');
});

test('mcc_drain_err is set once a drain blocked by a PodDisruptionBudget outlasts the drain timeout, and gone once the drain succeeds', { timeout: 30_000 }, async () => {
  await kube.create(resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'guarded', namespace: 'default', labels: { app: 'guarded' } }, spec: { nodeName: 'worker-0', containers: [{ name: 'app', image: 'registry.example.com/app:1' }] } });
  await kube.mergePatch(resources.pods, 'guarded', 'default', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339() }] } }, 'status');
  await kube.create(PDBS, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guarded', namespace: 'default' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } });
  await eventually('the budget allowing no disruption', async () => (await kube.get(PDBS, 'guarded', 'default')).status?.disruptionsAllowed === 0);

  // The daemon's request (played here): drain worker-0.
  const asked = Date.now();
  await kube.mergePatch(resources.nodes, 'worker-0', undefined, { metadata: { annotations: { [DESIRED_DRAIN]: 'drain-rendered-test' } } });
  const s = await until('mcc_drain_err for worker-0', (s) => (valueOf(s, 'mcc_drain_err', { node: 'worker-0' }) === 1 ? undefined : JSON.stringify(series(s, 'mcc_drain_err'))));
  assert.ok(Date.now() - asked >= DRAIN_TIMEOUT_MS, 'not before the drain timeout');
  assert.equal(valueOf(s, 'mcc_drain_err', { node: 'initialize' }), 0);
  assert.equal((await kube.get(resources.nodes, 'worker-0')).metadata.annotations?.[LAST_DRAIN], undefined, 'not drained');

  // The pod goes (removed by hand, as no kubelet runs here): the drain succeeds, the series is gone.
  await kube.delete(resources.pods, 'guarded', 'default', { gracePeriodSeconds: 0 });
  await until('mcc_drain_err cleared', (s) => (series(s, 'mcc_drain_err', { node: 'worker-0' }).length === 0 ? undefined : JSON.stringify(series(s, 'mcc_drain_err'))));
  assert.equal((await kube.get(resources.nodes, 'worker-0')).metadata.annotations?.[LAST_DRAIN], 'drain-rendered-test');
});
