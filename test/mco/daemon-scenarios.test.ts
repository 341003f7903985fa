// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The machine-config daemon's other paths on the local cloud, one daemon per worker run in this
// process against the machine's root (the DaemonSet form is daemon-rollout.test.ts): a pull-secret
// change reboots nothing; a PodDisruptionBudget holds a node cordoned, its drain failing with the
// blocking pod named — past the daemon's drain timeout the node and its pool are Degraded, naming
// the node and the pod — until it allows the eviction and the update goes on; an unreconcilable MachineConfig touches no
// node and says why; a managed file edited on a node degrades it (content, then mode) with an
// Event ConfigDriftDetected, and restoring it recovers the node without a reboot; the forcefile
// rewrites a drifted node's files, reboots it and brings it back Done.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRef } from '../../src/kube/client.js';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Instance } from '../../src/cloud/types.js';
import { resources, type Obj } from '../../src/kube/index.js';
import { eventually } from '../helpers/eventually.js';
import { A, startMcoCluster, type McoCluster } from './daemon-fixture.js';

let c: McoCluster;
let workers: Instance[];
/** The daemons' drain timeout (OpenShift's is an hour): short, so the PDB scenario sees it pass. */
const DRAIN_TIMEOUT_MS = 4000;
const PDBS: ResourceRef<Obj> = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespaced: true };

const mc = (name: string, files: Record<string, string>) => ({
  apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
  metadata: { name, labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
  spec: { config: { ignition: { version: '3.2.0' }, storage: { files: Object.entries(files).map(([path, text]) => ({ path, mode: 0o644, overwrite: true, contents: { source: `data:,${encodeURIComponent(text)}` } })) } } },
});
const bootIds = async () => Promise.all(workers.map(async (w) => (await c.client.getInstance(w.id)).bootId));
const target = async () => (await c.kube.get(resources.machineConfigPools, 'worker')).spec.configuration!.name as string;
const events = async (reason: string) => ((await c.kube.list(resources.events, 'default')).items as Obj[]).filter((e) => e.reason === reason);

before(async () => {
  c = await startMcoCluster({ workerMaxUnavailable: 1 });
  workers = [await c.bootWorker('worker-a'), await c.bootWorker('worker-b')];
  for (const w of workers) c.runDaemon(w.name, w, { drainTimeoutMs: DRAIN_TIMEOUT_MS });
  await c.workersDoneOn(await c.renderedWorker());
}, { timeout: 60_000 });
after(async () => {
  await c?.close();
});

test('a pull-secret change is written without a reboot', { timeout: 30_000 }, async () => {
  const before = await bootIds();
  const previous = await target();
  await c.kube.create(resources.machineConfigs, mc('99-worker-pull-secret', { '/var/lib/kubelet/config.json': '{"auths":{"registry.example.com":{"auth":"eDp5"}}}' }));
  const next = await c.renderedWorker([previous]);
  await c.workersDoneOn(next, 25_000);
  assert.deepEqual(await bootIds(), before, 'no worker rebooted');
  for (const w of workers) assert.match(readFileSync(join(c.rootOf(w), 'var/lib/kubelet/config.json'), 'utf8'), /registry\.example\.com/);
});

test('a PodDisruptionBudget holds the drain, naming the pod, the pool Degraded past the drain timeout, until it allows the eviction', { timeout: 60_000 }, async () => {
  // One pod pinned to worker-a, its budget allowing no disruption.
  await c.kube.create(resources.deployments, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'guarded', namespace: 'default' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'guarded' } }, template: { metadata: { labels: { app: 'guarded' } }, spec: { nodeSelector: { 'kubernetes.io/hostname': 'worker-a' }, containers: [{ name: 'app', image: 'registry.example.com/guarded:1' }] } } },
  });
  await c.kube.create(PDBS, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guarded', namespace: 'default' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } });
  await eventually('the guarded pod running on worker-a', async () => {
    const pods = ((await c.kube.list(resources.pods, 'default')).items as Obj[]).filter((p) => p.metadata.labels?.app === 'guarded');
    return pods.some((p) => p.spec.nodeName === 'worker-a' && p.status?.phase === 'Running');
  }, 20_000);
  await eventually('the budget allowing no disruption', async () => (await c.kube.get(PDBS, 'guarded', 'default')).status?.disruptionsAllowed === 0);

  const previous = await target();
  await c.kube.create(resources.machineConfigs, mc('50-worker-pdb', { '/etc/bosun-pdb.conf': 'held\n' }));
  const next = await c.renderedWorker([previous]);
  const failed = await eventually('a DrainFailed event naming the guarded pod', async () => (await events('DrainFailed')).find((e) => /default\/guarded-/.test(e.message)), 20_000);
  assert.match(failed.message, /disruption budget/);
  const node = await c.node(failed.involvedObject.name);
  assert.equal(node.spec.unschedulable, true, 'the node stays cordoned');
  assert.equal(node.metadata.annotations[A.current], previous, 'nothing written yet');
  // Past the drain timeout: the node Degraded, the pool NodeDegraded and Degraded, naming both.
  const held = failed.involvedObject.name;
  const degraded = await eventually('the pool NodeDegraded by the drain', async () => {
    const p = await c.kube.get(resources.machineConfigPools, 'worker');
    return p.status?.conditions?.find((x: Obj) => x.type === 'NodeDegraded' && x.status === 'True') && p;
  }, 20_000);
  const nodeDegraded = degraded.status!.conditions!.find((x: Obj) => x.type === 'NodeDegraded');
  assert.match(nodeDegraded!.message!, new RegExp(`Node ${held} is reporting: "failed to drain node: ${held} after 4 seconds: error when evicting pods: default/guarded-[a-z0-9-]+: .*disruption budget`));
  assert.equal(degraded.status!.conditions!.find((x: Obj) => x.type === 'Degraded')?.status, 'True');
  assert.notEqual(degraded.status!.conditions!.find((x: Obj) => x.type === 'Updated')?.status, 'True');
  const heldNode = await c.node(held);
  assert.equal(heldNode.metadata.annotations[A.state], 'Degraded');
  assert.equal(heldNode.spec.unschedulable, true, 'still cordoned');
  assert.ok((await c.kube.list(resources.events, 'default')).items.some((e: Obj) => e.reason === 'FailedToDrain' && e.involvedObject.name === held), 'an Event FailedToDrain');

  await c.kube.mergePatch(PDBS, 'guarded', 'default', { spec: { minAvailable: 0 } });
  await c.workersDoneOn(next, 30_000);
  const recovered = await c.kube.get(resources.machineConfigPools, 'worker');
  assert.equal(recovered.status!.conditions!.find((x: Obj) => x.type === 'NodeDegraded')?.status, 'False');
  assert.equal((await c.node(held)).metadata.annotations['machineconfiguration.openshift.io/lastDrainError'], undefined, 'the drain error is gone');
  for (const w of workers) assert.equal(readFileSync(join(c.rootOf(w), 'etc/bosun-pdb.conf'), 'utf8'), 'held\n');
});

test('an unreconcilable MachineConfig touches no node and says why', { timeout: 20_000 }, async () => {
  const before = await bootIds();
  const current = await target();
  await c.kube.create(resources.machineConfigs, {
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
    metadata: { name: '60-worker-user', labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
    spec: { config: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'alice', sshAuthorizedKeys: ['ssh-ed25519 AAAA alice'] }] } } },
  });
  const degraded = await eventually('RenderDegraded', async () => (await c.kube.get(resources.machineConfigPools, 'worker')).status?.conditions?.find((x: Obj) => x.type === 'RenderDegraded' && x.status === 'True'));
  assert.match(degraded.message!, /60-worker-user/);
  assert.match(degraded.message!, /only the "core" user can be configured on a running node/);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await target(), current);
  for (const w of workers) {
    const n = await c.node(w.name);
    assert.equal(n.metadata.annotations[A.current], current);
    assert.equal(n.metadata.annotations[A.desired], current);
    assert.equal(n.metadata.annotations[A.state], 'Done');
  }
  assert.deepEqual(await bootIds(), before);
  await c.kube.delete(resources.machineConfigs, '60-worker-user');
});

test('a managed file edited on a node degrades it, naming the file; restoring it recovers without a reboot', { timeout: 30_000 }, async () => {
  const [, w] = workers;
  const before = await bootIds();
  const file = join(c.rootOf(w), 'etc/bosun-pdb.conf');
  writeFileSync(file, 'edited by hand\n');
  const reason = await eventually('worker-b Degraded for drift', async () => {
    const a = (await c.node(w.name)).metadata.annotations;
    return a[A.state] === 'Degraded' && a[A.reason];
  }, 10_000);
  assert.match(reason, /content mismatch for file "\/etc\/bosun-pdb\.conf"/);
  await eventually('a ConfigDriftDetected event', async () => (await events('ConfigDriftDetected')).find((e) => e.involvedObject.name === w.name));
  await eventually('the pool NodeDegraded', async () => (await c.kube.get(resources.machineConfigPools, 'worker')).status?.conditions?.find((x: Obj) => x.type === 'NodeDegraded' && x.status === 'True' && /worker-b/.test(x.message)));

  writeFileSync(file, 'held\n');
  chmodSync(file, 0o600);
  const modeReason = await eventually('the mode mismatch', async () => {
    const r = (await c.node(w.name)).metadata.annotations[A.reason];
    return /mode mismatch/.test(r) && r;
  }, 10_000);
  assert.match(modeReason, /mode mismatch for file: "\/etc\/bosun-pdb\.conf"; expected: -rw-r--r--\/420\/0644; received: -rw-------\/384\/0600/);
  chmodSync(file, 0o644);
  await eventually('worker-b Done again', async () => (await c.node(w.name)).metadata.annotations[A.state] === 'Done', 10_000);
  assert.deepEqual(await bootIds(), before, 'recovered without a reboot');
});

test('the forcefile rewrites a drifted node, reboots it and brings it back Done', { timeout: 30_000 }, async () => {
  const [, w] = workers;
  const [, bootBefore] = await bootIds();
  const file = join(c.rootOf(w), 'etc/bosun-pdb.conf');
  writeFileSync(file, 'drifted again\n');
  await eventually('worker-b Degraded', async () => (await c.node(w.name)).metadata.annotations[A.state] === 'Degraded', 10_000);
  writeFileSync(join(c.rootOf(w), 'run/machine-config-daemon-force'), '');
  await eventually('worker-b rebooted and Done', async () => {
    const n = await c.node(w.name);
    return n.metadata.annotations[A.state] === 'Done' && (await bootIds())[1] !== bootBefore;
  }, 25_000);
  assert.equal(readFileSync(file, 'utf8'), 'held\n');
  assert.equal(existsSync(join(c.rootOf(w), 'run/machine-config-daemon-force')), false);
});
