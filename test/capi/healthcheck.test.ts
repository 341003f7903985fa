// test: shared-addresses (starts a local cloud)
// MachineHealthChecks against the embedded API server and a real local cloud: a Machine whose
// Node has been NotReady for the check's timeout is marked (HealthCheckSucceeded=False/
// UnhealthyNode, OwnerRemediated=False/WaitingForRemediation, Event MachineMarkedUnhealthy) and
// its MachineSet replaces it; a Machine whose Node never appears is remediated after the node
// startup timeout; with more unhealthy machines than remediation.triggerIf allows, nothing is
// remediated and the check says why (RemediationAllowed=False/TooManyUnhealthy and the Warning
// Event RemediationRestricted).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MACHINES, MACHINE_DEPLOYMENTS, MACHINE_HEALTH_CHECKS } from '../../src/capi/api.js';
import type { Obj } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { NS, type CapiCluster, createClusterObjects, machineDeployment, machineHealthCheck, machinesOf, runKubelets, setNodeReady, startCapiCluster, waitForRunning } from './capi-fixture.js';

let c: CapiCluster;
const kubelets = new AbortController();
const held = new Set<string>();
let kubeletLoop: Promise<void>;
before(async () => {
  c = await startCapiCluster();
  await createClusterObjects(c);
  kubeletLoop = runKubelets(c, kubelets.signal, held);
  await c.kube.create(MACHINE_DEPLOYMENTS, machineDeployment('workers', 3));
  await c.kube.create(MACHINE_HEALTH_CHECKS, machineHealthCheck('workers',
    { nodeStartupTimeoutSeconds: 5, unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: 2 }, { type: 'Ready', status: 'Unknown', timeoutSeconds: 2 }] },
    { triggerIf: { unhealthyLessThanOrEqualTo: 1 } }));
});
after(async () => {
  kubelets.abort();
  await kubeletLoop;
  await c?.close();
});

const condition = (m: Obj | undefined, type: string) => m?.status?.conditions?.find((x: Obj) => x.type === type);
const eventReasons = async (name: string) => JSON.parse(await c.kubectlOk(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])).items.map((e: Obj) => `${e.reason}: ${e.message}`);

test('a Machine whose Node stays NotReady past the timeout is marked unhealthy and replaced', async () => {
  const machines = await waitForRunning(c, 'pool=workers', 3);
  const check = await eventually('the check counts 3 healthy', async () => {
    const x = await c.kube.get(MACHINE_HEALTH_CHECKS, 'workers', NS);
    return x.status?.currentHealthy === 3 ? x : undefined;
  });
  assert.deepEqual(check.status!.targets, machines.map((m) => m.metadata.name).sort());
  assert.equal(check.status!.remediationsAllowed, 1);
  assert.match((await c.kubectlOk(['-n', NS, 'get', 'mhc', 'workers'])).split('\n')[1], /^workers\s+local\s+3\s+3\s+/);

  const victim = machines[0].metadata.name;
  held.add(victim);
  const brokeAt = Date.now();
  await setNodeReady(c, victim, 'False', 'kubelet stopped posting');
  const marked = await eventually(`${victim} marked unhealthy`, async () => {
    const m = await c.kube.read(MACHINES, victim, NS);
    return m && condition(m, 'HealthCheckSucceeded')?.status === 'False' ? m : m === undefined ? { gone: true } : undefined;
  }, 15_000);
  // Condition times have whole seconds (RFC 3339), so the 2 s run from up to 1 s before the patch.
  assert.ok(Date.now() - brokeAt >= 1_000, 'not before the 2 s timeout');
  if (!('gone' in marked)) {
    assert.equal(condition(marked, 'HealthCheckSucceeded').reason, 'UnhealthyNode');
    assert.match(condition(marked, 'HealthCheckSucceeded').message, /Condition Ready on Node .* has been False for more than 2s/);
  }
  await eventually(`${victim} deleted by its MachineSet`, async () => !(await c.kube.read(MACHINES, victim, NS)), 20_000);
  const after = await waitForRunning(c, 'pool=workers', 3);
  assert.ok(!after.some((m) => m.metadata.name === victim), 'replaced by a new machine');
  assert.ok((await eventReasons(victim)).some((e: string) => e.startsWith('MachineMarkedUnhealthy:')));
  held.delete(victim);
});

test('a Machine whose Node never appears is remediated after the node startup timeout', async () => {
  // The next machine made gets no kubelet: hold every name that appears from now on.
  const known = new Set((await machinesOf(c, 'pool=workers')).map((m) => m.metadata.name));
  const current = (await waitForRunning(c, 'pool=workers', 3))[0].metadata.name;
  const holding = setInterval(async () => {
    for (const m of await machinesOf(c, 'pool=workers').catch(() => [])) if (!known.has(m.metadata.name)) held.add(m.metadata.name);
  }, 20);
  try {
    await c.kube.delete(MACHINES, current, NS);
    const stuck = await eventually('a replacement that never gets a Node is marked NodeStartupTimeout', async () => {
      const m = (await machinesOf(c, 'pool=workers')).find((x) => !known.has(x.metadata.name) && condition(x, 'HealthCheckSucceeded')?.reason === 'NodeStartupTimeout');
      return m;
    }, 20_000);
    // (Remediation may already be deleting it.)
    assert.ok(['Provisioning', 'Provisioned', 'Deleting'].includes(stuck.status.phase) && !stuck.status.nodeRef, `no Node: ${stuck.status.phase}`);
    await eventually(`${stuck.metadata.name} deleted`, async () => !(await c.kube.read(MACHINES, stuck.metadata.name, NS)), 20_000);
  } finally {
    clearInterval(holding);
    held.clear();
  }
  await waitForRunning(c, 'pool=workers', 3, 30_000);
});

test('more unhealthy machines than the limit: remediation stops and the check says why', async () => {
  const machines = await waitForRunning(c, 'pool=workers', 3);
  const broken = machines.slice(0, 2).map((m) => m.metadata.name);
  for (const name of broken) {
    held.add(name);
    await setNodeReady(c, name, 'Unknown', 'Kubelet stopped posting node status.');
  }
  const check = await eventually('RemediationAllowed=False', async () => {
    const x = await c.kube.get(MACHINE_HEALTH_CHECKS, 'workers', NS);
    return condition(x, 'RemediationAllowed')?.status === 'False' ? x : undefined;
  }, 30_000);
  assert.equal(condition(check, 'RemediationAllowed').reason, 'TooManyUnhealthy');
  assert.equal(condition(check, 'RemediationAllowed').message, 'Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 1)');
  assert.equal(check.status!.remediationsAllowed, 0);
  assert.equal(check.status!.currentHealthy, 1);
  assert.ok((await eventReasons('workers')).some((e: string) => e.startsWith('RemediationRestricted: Remediation is not allowed')));
  await new Promise((r) => setTimeout(r, 2_000));
  for (const name of broken) {
    const m = await c.kube.get(MACHINES, name, NS);
    assert.equal(m.metadata.deletionTimestamp, undefined, `${name} is not remediated`);
    assert.equal(condition(m, 'HealthCheckSucceeded')?.status, 'False', 'but it is known to be unhealthy');
    assert.equal(condition(m, 'OwnerRemediated'), undefined, 'and not handed to its owner');
  }
  // One recovers: within the limit again, the other is remediated.
  await setNodeReady(c, broken[0], 'True', 'kubelet is posting ready status');
  await eventually(`${broken[1]} remediated`, async () => {
    const m = await c.kube.read(MACHINES, broken[1], NS);
    return !m || Boolean(m.metadata.deletionTimestamp);
  }, 20_000);
  const allowed = await c.kube.get(MACHINE_HEALTH_CHECKS, 'workers', NS);
  assert.equal(condition(allowed, 'RemediationAllowed').status, 'True');
  held.clear();
  await waitForRunning(c, 'pool=workers', 3, 30_000);
});
