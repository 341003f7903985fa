// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The machine-config daemon as the operator deploys it — a DaemonSet pod on every worker, the
// machine root mounted at /rootfs — rolling MachineConfigs out through the machine-config
// controller on the local cloud: a new file reaches every worker one node at a time (never two
// workers unavailable with maxUnavailable 1), each cordoned, drained and rebooted (a new boot ID);
// on a cluster installed without an ssh key (as `bosun start` installs), a MachineConfig giving the
// image's `core` user ssh keys is written without a reboot; deleting the MachineConfig restores the
// file that was there before and removes the one that was not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Instance } from '../../src/cloud/types.js';
import { resources, type Obj } from '../../src/kube/index.js';
import { daemonDaemonSet } from '../../src/mco/operator/operator.js';
import { eventually } from '../helpers/eventually.js';
import { A, MCO_NS, startMcoCluster, type McoCluster } from './daemon-fixture.js';

let c: McoCluster;
let workers: Instance[];
let r0: string;
const NEW_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRolloutKey admin@example.com';

const fileMc = (name: string, files: Record<string, string>) => ({
  apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
  metadata: { name, labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
  spec: { config: { ignition: { version: '3.2.0' }, storage: { files: Object.entries(files).map(([path, text]) => ({ path, mode: 0o644, overwrite: true, contents: { source: `data:,${encodeURIComponent(text)}` } })) } } },
});

const bootIds = async () => Promise.all(workers.map(async (w) => (await c.client.getInstance(w.id)).bootId));

/** Polls the workers while `until` runs: the most workers unavailable at once, which were cordoned, and which Degraded (with the reason). */
async function watchRollout<T>(until: () => Promise<T>): Promise<{ result: T; maxUnavailable: number; cordoned: Set<string>; degraded: Set<string> }> {
  let maxUnavailable = 0;
  const cordoned = new Set<string>();
  const degraded = new Set<string>();
  let done = false;
  const poll = (async () => {
    while (!done) {
      const nodes = ((await c.kube.list(resources.nodes)).items as Obj[]).filter((n) => 'node-role.kubernetes.io/worker' in n.metadata.labels);
      const down = nodes.filter((n) => {
        const a = n.metadata.annotations ?? {};
        return n.spec?.unschedulable || a[A.state] !== 'Done' || a[A.current] !== a[A.desired];
      });
      for (const n of nodes) if (n.spec?.unschedulable) cordoned.add(n.metadata.name);
      for (const n of nodes) if (n.metadata.annotations?.[A.state] === 'Degraded') degraded.add(`${n.metadata.name}: ${n.metadata.annotations[A.reason]}`);
      maxUnavailable = Math.max(maxUnavailable, down.length);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    const result = await until();
    return { result, maxUnavailable, cordoned, degraded };
  } finally {
    done = true;
    await poll;
  }
}

before(async () => {
  c = await startMcoCluster({ workerMaxUnavailable: 1 });
  workers = [];
  for (const name of ['worker-a', 'worker-b']) workers.push(await c.bootWorker(name, { '/etc/bosun-original.conf': 'original\n' }));
  r0 = await c.renderedWorker();
  await c.kube.create(resources.daemonSets, daemonDaemonSet('bosun.local/machine-config-operator', [{ name: 'RELEASE_VERSION', value: 'test' }]));
  await eventually('a running daemon pod on each worker', async () => {
    const pods = ((await c.kube.list(resources.pods, MCO_NS)).items as Obj[]).filter((p) => p.metadata.name.startsWith('machine-config-daemon-'));
    return pods.length === 2 && pods.every((p) => p.status?.containerStatuses?.[0]?.state?.running);
  }, 30_000);
  await c.workersDoneOn(r0);
}, { timeout: 60_000 });
after(async () => {
  await c?.close();
});

test('a new file reaches every worker one node at a time, each drained and rebooted', { timeout: 120_000 }, async () => {
  const before = await bootIds();
  await c.kube.create(resources.machineConfigs, fileMc('50-worker-file', { '/etc/bosun-original.conf': 'managed\n', '/etc/bosun-new.conf': 'new\n' }));
  const r1 = await c.renderedWorker([r0]);
  const { maxUnavailable, cordoned } = await watchRollout(() => c.workersDoneOn(r1, 90_000));
  assert.equal(maxUnavailable, 1, 'never more than one worker unavailable (and one at a time)');
  assert.deepEqual([...cordoned].sort(), ['worker-a', 'worker-b'], 'each worker cordoned for its drain');
  const afterIds = await bootIds();
  afterIds.forEach((id, i) => assert.notEqual(id, before[i], `${workers[i].name} rebooted`));
  for (const w of workers) {
    assert.equal(readFileSync(join(c.rootOf(w), 'etc/bosun-original.conf'), 'utf8'), 'managed\n');
    assert.equal(readFileSync(join(c.rootOf(w), 'etc/bosun-new.conf'), 'utf8'), 'new\n');
    assert.equal(readFileSync(join(c.rootOf(w), 'etc/machine-config-daemon/orig/etc/bosun-original.conf.mcdorig'), 'utf8'), 'original\n');
    assert.ok(existsSync(join(c.rootOf(w), 'etc/machine-config-daemon/noorig/etc/bosun-new.conf.mcdnoorig')));
  }
});

test('on a cluster installed without an ssh key, a MachineConfig giving core ssh keys is written without a reboot, no node Degraded', { timeout: 60_000 }, async () => {
  const before = await bootIds();
  const previous = (await c.kube.get(resources.machineConfigPools, 'worker')).spec.configuration!.name!;
  const previousConfig = (await c.kube.get(resources.machineConfigs, previous)).spec?.config as { passwd?: { users?: unknown[] } } | undefined;
  assert.deepEqual(previousConfig?.passwd?.users ?? [], [], 'the install gave core no keys');
  await c.kube.create(resources.machineConfigs, {
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
    metadata: { name: '99-worker-ssh-extra', labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
    spec: { config: { ignition: { version: '3.2.0' }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: [NEW_KEY] }] } } },
  });
  const r2 = await c.renderedWorker([previous]);
  const { degraded } = await watchRollout(() => c.workersDoneOn(r2));
  assert.deepEqual([...degraded], [], 'no worker Degraded on the way');
  assert.deepEqual(await bootIds(), before, 'no worker rebooted');
  for (const w of workers) {
    const keys = join(c.rootOf(w), 'home/core/.ssh/authorized_keys.d/ignition');
    assert.equal(readFileSync(keys, 'utf8'), `${NEW_KEY}\n`);
    assert.equal(statSync(keys).mode & 0o777, 0o600);
    assert.equal(statSync(join(c.rootOf(w), 'home/core/.ssh')).mode & 0o777, 0o700);
    assert.equal(realpathSync(keys), join(realpathSync(c.rootOf(w)), 'var/home/core/.ssh/authorized_keys.d/ignition'), 'in core\'s home as /etc/passwd names it');
    assert.deepEqual([statSync(keys).uid, statSync(keys).gid], process.getuid?.() === 0 ? [1000, 1000] : [process.getuid!(), process.getgid!()]);
  }
});

test('deleting the MachineConfig restores the original file and removes the new one', { timeout: 60_000 }, async () => {
  const previous = (await c.kube.get(resources.machineConfigPools, 'worker')).spec.configuration!.name!;
  await c.kube.delete(resources.machineConfigs, '50-worker-file');
  const r3 = await c.renderedWorker([previous]);
  await c.workersDoneOn(r3);
  for (const w of workers) {
    assert.equal(readFileSync(join(c.rootOf(w), 'etc/bosun-original.conf'), 'utf8'), 'original\n');
    assert.equal(existsSync(join(c.rootOf(w), 'etc/bosun-new.conf')), false);
    assert.equal(existsSync(join(c.rootOf(w), 'etc/machine-config-daemon/orig/etc/bosun-original.conf.mcdorig')), false);
  }
});
