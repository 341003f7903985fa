// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// Killing the machine-config daemon, or rebooting its machine (which kills it too), after every
// step of an update: a new daemon picks the update up from the node's annotations and its disk
// records, and the node ends Done on the new config with exactly the config's files — the new
// contents, the original kept once, no pending record left.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Instance } from '../../src/cloud/types.js';
import { SCHEDULED_SHUTDOWN_FILE } from '../../src/common/scheduled-shutdown.js';
import { resources } from '../../src/kube/index.js';
import type { Step } from '../../src/mco/daemon/state-machine.js';
import { eventually } from '../helpers/eventually.js';
import { startMcoCluster, type McoCluster } from './daemon-fixture.js';

let c: McoCluster;
let worker: Instance;
let version = 0;
/** Daemons running now; each case stops them all before the next. */
let live: { stop(): Promise<void> }[] = [];
const startDaemon = (o?: Parameters<McoCluster['runDaemon']>[2]) => { const d = c.runDaemon(worker.name, worker, o); live.push(d); return d; };
async function stopAll() { await Promise.all(live.map((d) => d.stop())); live = []; }

const describe = (s: Step) => (s.kind === 'set-state' ? `set-state ${s.state}` : s.kind === 'request-drain' ? `request-drain ${s.value.split('-')[0]}` : s.kind);

/** Rolls /etc/bosun-crash.conf to a new content; `fault` runs after the k-th step (1-based) and stops the daemon. */
async function update(k: number | undefined, fault: 'kill' | 'reboot'): Promise<string[]> {
  version++;
  const previous = (await c.kube.get(resources.machineConfigPools, 'worker')).spec.configuration!.name!;
  const steps: string[] = [];
  let hit: Promise<void> | undefined;
  const daemon = startDaemon({
    afterStep(step) {
      steps.push(describe(step));
      if (steps.length === k && !hit) {
        // stop() aborts synchronously: the pass takes no further step.
        const stopped = daemon.stop();
        hit = (async () => {
          // After the reboot step the daemon's own request is rebooting the machine already:
          // asking the cloud too would make it two reboots, racing the next case.
          if (fault === 'reboot' && step.kind !== 'reboot') await c.client.operate('reboot', worker.id);
          await stopped;
        })();
      }
    },
  });
  const mc = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '50-worker-crash', labels: { 'machineconfiguration.openshift.io/role': 'worker' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/bosun-crash.conf', mode: 420, overwrite: true, contents: { source: `data:,v${version}` } }] } } } };
  const existing = await c.kube.read(resources.machineConfigs, '50-worker-crash');
  if (existing) await c.kube.mergePatch(resources.machineConfigs, '50-worker-crash', undefined, { spec: mc.spec });
  else await c.kube.create(resources.machineConfigs, mc);
  const next = await c.renderedWorker([previous]);
  if (k !== undefined) {
    // Up to 90 s: on a loaded 2-core machine a pass reaches its last step (after drain and reboot) slowly.
    await (async () => { for (let i = 0; i < 1800 && !hit; i++) await new Promise((r) => setTimeout(r, 50)); })();
    if (!hit) {
      // Say where the pass stood: the steps it took and what the node's annotations ask for.
      const node = await c.kube.get(resources.nodes, worker.name);
      const a = Object.entries(node.metadata.annotations ?? {}).filter(([key]) => key.startsWith('machineconfiguration.openshift.io/'));
      assert.fail(`step ${k} (${fault}) not reached in 90 s; steps taken: ${steps.join(', ') || 'none'}; node ${a.map(([key, v]) => `${key.split('/')[1]}=${v}`).join(' ')}${node.spec?.unschedulable ? ' cordoned' : ''}; Ready=${node.status?.conditions?.find((x) => x.type === 'Ready')?.status}`);
    }
    await hit;
    assert.equal(steps.length, k, `the first daemon stopped right after step ${k} (${steps.join(', ')})`);
    startDaemon();
  }
  await c.workersDoneOn(next, 60_000);
  const root = c.rootOf(worker);
  assert.equal(readFileSync(join(root, 'etc/bosun-crash.conf'), 'utf8'), `v${version}`);
  assert.equal(readFileSync(join(root, 'etc/machine-config-daemon/orig/etc/bosun-crash.conf.mcdorig'), 'utf8'), 'original\n', 'the original kept once, never overwritten by our own write');
  assert.equal(existsSync(join(root, 'etc/machine-config-daemon/pending-config.json')), false);
  assert.equal(JSON.parse(readFileSync(join(root, 'etc/machine-config-daemon/currentconfig'), 'utf8')).metadata.name, next);
  // The daemon here runs beside the machine, not in it, so it can finish before a reboot the test
  // or it asked for has happened; that boot, coming during the next case, would wipe /run and the
  // next case's reboot request with it. The case ends with the machine up and no reboot asked.
  let seen = '';
  await eventually(`${worker.name} up with no reboot pending (k=${k}, ${fault})`, async () => {
    const i = await c.client.getInstance(worker.id);
    const asked = existsSync(join(root, SCHEDULED_SHUTDOWN_FILE));
    seen = `phase ${i.machine.phase}, state ${i.state}${asked ? ', a reboot asked' : ''}`;
    return i.state === 'running' && i.machine.phase === 'Up' && !asked;
  }, { timeoutMs: 60_000, detail: () => seen });
  return steps;
}

before(async () => {
  c = await startMcoCluster();
  worker = await c.bootWorker('worker-c', { '/etc/bosun-crash.conf': 'original\n' });
  startDaemon();
  await c.workersDoneOn(await c.renderedWorker());
  await stopAll();
}, { timeout: 60_000 });
after(async () => {
  await c?.close();
});

test('killing the daemon or rebooting the machine after every step ends Done with the right files', { timeout: 600_000 }, async () => {
  // A clean update (its daemon then stopped) says which steps there are.
  const steps = await update(undefined, 'kill');
  assert.deepEqual(steps, ['set-state Working', 'request-drain drain', 'write', 'reboot', 'request-drain uncordon', 'complete']);
  await stopAll();
  for (let k = 1; k <= steps.length; k++) {
    for (const fault of ['kill', 'reboot'] as const) {
      await update(k, fault);
      await stopAll();
    }
  }
});
