// test: shared-addresses (starts a local cloud)
// Cluster API's capi_* metrics (src/capi/metrics.ts), named and labelled as kube-state-metrics'
// Cluster API configuration has them, as Prometheus reads them from the controllers' manager: a
// Machine's phase as it provisions and runs, its info and node reference; the Cluster's
// conditions as StateSets; a MachineDeployment's and its MachineSet's replicas as their status
// says, following a scale-up; a MachineHealthCheck's counts. Plus a table of how values are read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTERS, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_HEALTH_CHECKS, MACHINE_SETS } from '../../src/capi/api.js';
import { sampleValue } from '../../src/capi/metrics.js';
import type * as api from '../../src/api/index.js';
import { eventually } from '../helpers/eventually.js';
import { samplesUntil, scrapeSamples, series, valueOf, type Sample } from '../helpers/metrics.js';
import { CLUSTER, NS, type CapiCluster, createClusterObjects, machineDeployment, machineHealthCheck, machinesOf, runKubelets, startCapiCluster, waitForRunning } from './capi-fixture.js';

let c: CapiCluster;
const kubelets = new AbortController();
let kubeletLoop: Promise<void> | undefined;

before(async () => {
  c = await startCapiCluster({ metricsListen: { host: '127.0.0.1', port: 0 } });
  await createClusterObjects(c);
  await c.manager.ready;
});
after(async () => {
  kubelets.abort();
  await kubeletLoop;
  await c?.close();
});

const metrics = () => scrapeSamples(c.manager.metricsAddress!, c.api.server.token);

const until = (what: string, check: (s: Sample[]) => string | undefined, timeoutMs = 30_000) => samplesUntil(metrics, what, check, timeoutMs);

/** The phase a Machine's capi_machine_status_phase says (the one series valued 1), checking the others are 0. */
function phaseOf(s: Sample[], name: string): string | undefined {
  const phases = series(s, 'capi_machine_status_phase', { name, namespace: NS });
  if (phases.length === 0) return undefined;
  assert.deepEqual(phases.map((p) => p.labels.phase).sort(), ['Deleted', 'Deleting', 'Failed', 'Pending', 'Provisioned', 'Provisioning', 'Running', 'Unknown', 'Updating']);
  const on = phases.filter((p) => p.value === 1);
  assert.ok(on.length <= 1, JSON.stringify(on));
  return on[0]?.labels.phase;
}

test('a Machine\'s phase shows in capi_machine_status_phase as it provisions and runs; capi_machine_info and status_noderef describe it', { timeout: 90_000 }, async () => {
  await c.kube.create(MACHINE_DEPLOYMENTS, machineDeployment('metrics', 1));
  const [machine] = await eventually('a machine of the deployment', async () => {
    const ms = await machinesOf(c, 'pool=metrics');
    return ms.length === 1 ? ms : undefined;
  });
  const name = machine.metadata.name as string;
  // No kubelet yet: the instance is up, no Node — Provisioned, as the object says.
  let s = await until('the machine Provisioned', (s) => (phaseOf(s, name) === 'Provisioned' ? undefined : `phase ${phaseOf(s, name)}`));
  assert.equal((await c.kube.get(MACHINES, name, NS)).status?.phase, 'Provisioned');
  assert.equal(series(s, 'capi_machine_status_noderef', { name }).length, 0, 'no node yet');

  kubeletLoop = runKubelets(c, kubelets.signal);
  s = await until('the machine Running', (s) => (phaseOf(s, name) === 'Running' && series(s, 'capi_machine_status_noderef', { name }).length === 1 ? undefined : `phase ${phaseOf(s, name)}`));
  const m = await c.kube.get(MACHINES, name, NS) as api.Machine;
  const info = series(s, 'capi_machine_info', { name });
  assert.equal(info.length, 1);
  assert.equal(info[0].value, 1);
  assert.deepEqual(
    { namespace: info[0].labels.namespace, uid: info[0].labels.uid, cluster_name: info[0].labels.cluster_name, provider_id: info[0].labels.provider_id, version: info[0].labels.version, infrastructure_reference_kind: info[0].labels.infrastructure_reference_kind, infrastructure_reference_name: info[0].labels.infrastructure_reference_name, failure_domain: info[0].labels.failure_domain },
    { namespace: NS, uid: m.metadata.uid, cluster_name: CLUSTER, provider_id: m.spec.providerID, version: 'v1.33.0', infrastructure_reference_kind: 'LocalMachine', infrastructure_reference_name: name, failure_domain: m.spec.failureDomain },
  );
  assert.equal(valueOf(s, 'capi_machine_status_noderef', { name, node_name: m.status!.nodeRef!.name }), 1);
  assert.equal(valueOf(s, 'capi_machine_created', { name }), Date.parse(m.metadata.creationTimestamp!) / 1000);
  // Its conditions, each a StateSet.
  for (const cond of m.status?.conditions ?? []) {
    for (const status of ['True', 'False', 'Unknown']) assert.equal(valueOf(s, 'capi_machine_status_condition', { name, type: cond.type, status }), cond.status === status ? 1 : 0, `${cond.type} ${status}`);
  }
  assert.ok((m.status?.conditions ?? []).length > 0);
});

test('capi_cluster_status_condition and its transition times match the Cluster\'s conditions', async () => {
  // The Cluster's conditions move on while its machines come up: compare each scrape with the
  // Cluster as it is now, not as first read.
  const { cluster, s } = await eventually('every condition of the Cluster in the metrics', async () => {
    const cluster = await c.kube.get(CLUSTERS, CLUSTER, NS) as api.Cluster;
    const conditions = cluster.status?.conditions ?? [];
    if (conditions.length === 0) return undefined;
    const s = await metrics();
    const same = conditions.every((cond) => valueOf(s, 'capi_cluster_status_condition', { name: CLUSTER, type: cond.type, status: cond.status }) === 1
      && valueOf(s, 'capi_cluster_status_condition_last_transition_time', { name: CLUSTER, type: cond.type, status: cond.status }) === Date.parse(cond.lastTransitionTime!) / 1000);
    return same ? { cluster, s } : undefined;
  }, 30_000);
  for (const cond of cluster.status?.conditions ?? []) {
    assert.equal(series(s, 'capi_cluster_status_condition', { name: CLUSTER, type: cond.type }).length, 3, cond.type);
  }
  assert.equal(valueOf(s, 'capi_cluster_info', { name: CLUSTER, namespace: NS, infrastructure_reference_kind: 'LocalCluster', infrastructure_reference_name: CLUSTER }), 1);
  assert.equal(valueOf(s, 'capi_cluster_spec_paused', { name: CLUSTER }), 0);
});

test('a MachineDeployment\'s and its MachineSet\'s replica gauges follow their status through a scale-up', { timeout: 90_000 }, async () => {
  kubeletLoop ??= runKubelets(c, kubelets.signal);
  await c.kubectlOk(['-n', NS, 'scale', 'machinedeployment', 'metrics', '--replicas', '2']);
  await waitForRunning(c, 'pool=metrics', 2, 60_000);
  const md = await eventually('the deployment\'s status at 2', async () => {
    const o = await c.kube.get(MACHINE_DEPLOYMENTS, 'metrics', NS) as api.MachineDeployment;
    return o.status?.replicas === 2 && o.status?.availableReplicas === 2 && o.status?.upToDateReplicas === 2 ? o : undefined;
  });
  const s = await until('the deployment\'s gauges at 2', (s) => (valueOf(s, 'capi_machinedeployment_status_replicas_available', { name: 'metrics' }) === 2 ? undefined : 'not yet'));
  const want = (metric: string, v: number | undefined) => assert.equal(valueOf(s, metric, { name: 'metrics', namespace: NS, cluster_name: CLUSTER, uid: md.metadata.uid! }), v, metric);
  want('capi_machinedeployment_spec_replicas', 2);
  want('capi_machinedeployment_status_replicas', md.status!.replicas);
  want('capi_machinedeployment_status_replicas_ready', md.status!.readyReplicas ?? 0);
  want('capi_machinedeployment_status_replicas_uptodate', md.status!.upToDateReplicas);
  if (md.status?.phase) assert.equal(valueOf(s, 'capi_machinedeployment_status_phase', { name: 'metrics', phase: md.status.phase }), 1);

  const [set] = (await c.kube.list(MACHINE_SETS, NS, { labelSelector: 'cluster.x-k8s.io/deployment-name=metrics' })).items as api.MachineSet[];
  assert.equal(valueOf(s, 'capi_machineset_spec_replicas', { name: set.metadata.name! }), 2);
  assert.equal(valueOf(s, 'capi_machineset_status_replicas', { name: set.metadata.name! }), set.status?.replicas ?? 0);
  assert.equal(valueOf(s, 'capi_machineset_info', { name: set.metadata.name!, version: 'v1.33.0', infrastructure_reference_kind: 'LocalMachineTemplate', infrastructure_reference_name: 'small' }), 1);
});

test('a MachineHealthCheck\'s counts are its status', { timeout: 60_000 }, async () => {
  await c.kube.create(MACHINE_HEALTH_CHECKS, machineHealthCheck('metrics', { unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: 300 }] }));
  const mhc = await eventually('the health check counting 2', async () => {
    const o = await c.kube.get(MACHINE_HEALTH_CHECKS, 'metrics', NS) as api.MachineHealthCheck;
    return o.status?.expectedMachines === 2 && o.status?.currentHealthy === 2 ? o : undefined;
  });
  const s = await until('the health check\'s gauges', (s) => (valueOf(s, 'capi_machinehealthcheck_status_expected_machines', { name: 'metrics' }) === 2 ? undefined : 'not yet'));
  assert.equal(valueOf(s, 'capi_machinehealthcheck_status_current_healthy', { name: 'metrics', cluster_name: CLUSTER }), mhc.status!.currentHealthy);
  assert.equal(valueOf(s, 'capi_machinehealthcheck_status_remediations_allowed', { name: 'metrics' }), mhc.status!.remediationsAllowed ?? 0);
});

test('values as kube-state-metrics reads them', () => {
  const rows: [unknown, number | undefined][] = [
    [3, 3], [true, 1], [false, 0], ['25%', 0.25], ['2', 2], ['2026-01-02T03:04:05Z', Date.parse('2026-01-02T03:04:05Z') / 1000],
    ['Running', undefined], [undefined, undefined], [null, undefined], [{}, undefined], ['', undefined],
  ];
  for (const [input, want] of rows) assert.equal(sampleValue(input), want, JSON.stringify(input));
});
