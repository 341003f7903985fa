// The machine-config daemon's metrics (src/mco/daemon/metrics.ts) as Prometheus reads them from the
// component manager's /metrics, while a real daemon runs against the embedded API server and a
// machine root in a temporary directory; the test plays the drain controller and the reboot. Each
// metric follows what the daemon does: Done on its config, drift found and repaired, the kubelet's
// Ready condition lost and back, a write that fails (mcd_pivot_errors_total) and is rolled back,
// a reboot the host refuses (mcd_reboots_failed_total), a reboot the host takes and does not carry
// out within --reboot-timeout (counted too, and asked for again), then the update completing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { KubeClient, Manager, loadKubeConfig, resources } from '../../src/kube/index.js';
import { MachineConfigDaemon } from '../../src/mco/daemon/daemon.js';
import { RootMountHost } from '../../src/mco/daemon/host.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { samplesUntil, scrapeSamples, withDelegatedAuth, series, valueOf, type Sample } from '../helpers/metrics.js';
import { startMcoApiServer } from './controller-fixtures.js';

const NODE = 'mcd-metrics';
const FILE = '/etc/bosun-metrics.conf';
const BLOCKED = '/etc/bosun-blocked/app.conf';
const A = 'machineconfiguration.openshift.io/';

let api: TestApiServer;
let kube: KubeClient;
let root: string;
let manager: Manager;
let running: Promise<void>;
const stopDrains = new AbortController();

const inRoot = (path: string) => join(root, path);
const put = (path: string, text: string) => {
  mkdirSync(dirname(inRoot(path)), { recursive: true });
  writeFileSync(inRoot(path), text);
  chmodSync(inRoot(path), 0o644);
};
const rendered = (name: string, files: Record<string, string>) => ({
  apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name },
  spec: { config: { ignition: { version: '3.2.0' }, storage: { files: Object.entries(files).map(([path, text]) => ({ path, mode: 0o644, overwrite: true, contents: { source: `data:,${encodeURIComponent(text)}` } })) } } },
});
const metrics = () => scrapeSamples(manager.metricsAddress!, api.token);
const annotations = async () => (await kube.get(resources.nodes, NODE)).metadata.annotations ?? {};

async function setReady(status: 'True' | 'False', bootID = 'boot-1'): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await kube.mergePatch(resources.nodes, NODE, undefined, { status: { nodeInfo: { bootID }, conditions: [{ type: 'Ready', status, reason: 'KubeletReady', message: '', lastHeartbeatTime: now, lastTransitionTime: now }] } }, 'status');
}

/** Waits until the scraped metrics satisfy `check` (which returns a reason when they do not). */
const until = (what: string, check: (s: Sample[]) => string | undefined, timeoutMs = 15_000) => samplesUntil(metrics, what, check, timeoutMs);

/** Plays the drain controller: answers every drain or uncordon request at once. */
async function answerDrains(signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const a = await annotations();
      const desired = a[`${A}desiredDrain`];
      if (desired && a[`${A}lastAppliedDrain`] !== desired) await kube.mergePatch(resources.nodes, NODE, undefined, { metadata: { annotations: { [`${A}lastAppliedDrain`]: desired } } });
    } catch (e) {
      if (!signal.aborted) throw e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  api = await startMcoApiServer();
  await withDelegatedAuth(api);
  kube = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  root = mkdtempSync(join(tmpdir(), 'bosun-mcd-metrics-'));
  put('/proc/sys/kernel/random/boot_id', 'boot-1\n');
  put(FILE, 'one\n');
  await kube.create(resources.machineConfigs, rendered('rendered-worker-1', { [FILE]: 'one\n' }));
  await kube.create(resources.machineConfigs, rendered('rendered-worker-2', { [FILE]: 'two\n', [BLOCKED]: 'x\n' }));
  await kube.create(resources.nodes, {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name: NODE, annotations: { [`${A}currentConfig`]: 'rendered-worker-1', [`${A}desiredConfig`]: 'rendered-worker-1', [`${A}state`]: 'Done' } },
  });
  await setReady('True');
  manager = new Manager({ name: 'machine-config-daemon', kubeconfig: loadKubeConfig(api.kubeconfigPath), metricsListen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn' });
  manager.add(new MachineConfigDaemon(manager, { nodeName: NODE, host: new RootMountHost(root), driftCheckIntervalMs: 200, rebootTimeoutMs: 2000 }));
  running = manager.start();
  await manager.ready;
  void answerDrains(stopDrains.signal);
});

after(async () => {
  stopDrains.abort();
  manager?.stop();
  await running?.catch(() => undefined);
  await api?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

test('a node Done on its config: mcd_update_state names it, mcd_state is Done, no errors', async () => {
  const s = await until('mcd_update_state for rendered-worker-1', (s) => (valueOf(s, 'mcd_update_state', { config: 'rendered-worker-1', err: '' }) ? undefined : JSON.stringify(series(s, 'mcd_update_state'))));
  assert.equal(series(s, 'mcd_update_state').length, 1, 'one series: the last outcome');
  assert.ok(valueOf(s, 'mcd_state', { state: 'Done', reason: '' })! > 0, 'mcd_state Done, valued at a time');
  assert.equal(series(s, 'mcd_state').length, 1);
  for (const name of ['mcd_reboots_failed_total', 'mcd_pivot_errors_total', 'mcd_kubelet_state', 'mcd_config_drift']) assert.equal(valueOf(s, name), 0, name);
});

test('drift: mcd_config_drift holds the time it was found and mcd_state says Degraded, until the file is restored', async () => {
  put(FILE, 'edited by hand\n');
  // (Drift is counted as it is found, the Degraded state once written: a scrape may fall between.)
  const s = await until('mcd_config_drift set and mcd_state Degraded', (s) => (valueOf(s, 'mcd_config_drift')! > 0 && series(s, 'mcd_state', { state: 'Degraded' }).length ? undefined : `drift ${valueOf(s, 'mcd_config_drift')}, ${JSON.stringify(series(s, 'mcd_state'))}`));
  const degraded = series(s, 'mcd_state', { state: 'Degraded' });
  assert.equal(degraded.length, 1);
  assert.match(degraded[0].labels.reason, /unexpected on-disk state validating against rendered-worker-1: content mismatch for file "\/etc\/bosun-metrics\.conf"/);
  put(FILE, 'one\n');
  await until('mcd_config_drift back to 0 and Done', (s) => (valueOf(s, 'mcd_config_drift') === 0 && valueOf(s, 'mcd_state', { state: 'Done', reason: '' }) ? undefined : JSON.stringify(series(s, 'mcd_state'))));
});

test('mcd_kubelet_state counts failed kubelet health checks in a row, and is 0 once Ready again', async () => {
  await setReady('False');
  await until('kubelet failures counted', (s) => (valueOf(s, 'mcd_kubelet_state')! >= 2 ? undefined : `mcd_kubelet_state ${valueOf(s, 'mcd_kubelet_state')}`));
  await setReady('True');
  await until('kubelet healthy', (s) => (valueOf(s, 'mcd_kubelet_state') === 0 ? undefined : `mcd_kubelet_state ${valueOf(s, 'mcd_kubelet_state')}`));
});

test('a failed write counts in mcd_pivot_errors_total, a refused reboot in mcd_reboots_failed_total; the update then completes', { timeout: 180_000 }, async () => {
  // Faults on the host: a file where the new config needs a directory, and where the reboot
  // request (/run/systemd/shutdown/scheduled) needs one.
  put('/etc/bosun-blocked', 'not a directory\n');
  put('/run/systemd', 'not a directory\n');
  await kube.mergePatch(resources.nodes, NODE, undefined, { metadata: { annotations: { [`${A}desiredConfig`]: 'rendered-worker-2' } } });

  // The counter and mcd_update_state are set one after the other: wait for both (a scrape between
  // them still showed the last Done config on a loaded machine).
  let s = await until('a pivot error', (s) => (valueOf(s, 'mcd_pivot_errors_total')! >= 1 && series(s, 'mcd_update_state')[0]?.labels.err ? undefined : 'no pivot error yet'), 20_000);
  // (mcd_state went Degraded with the reason, and back to Working as each retry starts.)
  assert.equal(series(s, 'mcd_update_state').length, 1);
  assert.equal(series(s, 'mcd_update_state')[0].labels.config, '');
  assert.match(series(s, 'mcd_update_state')[0].labels.err, /writing "\/etc\/bosun-blocked\/app\.conf"/);
  assert.equal(valueOf(s, 'mcd_reboots_failed_total'), 0);

  // The write can succeed now; the reboot request still cannot be made.
  rmSync(inRoot('/etc/bosun-blocked'));
  s = await until('a failed reboot', (s) => (valueOf(s, 'mcd_reboots_failed_total')! >= 1 ? undefined : 'no failed reboot yet'), 20_000);
  assert.equal(valueOf(s, 'mcd_pivot_errors_total'), 0, 'a write that succeeded resets the pivot errors');
  assert.match(series(s, 'mcd_update_state')[0].labels.err, /reboot command failed/);
  const failedReboots = valueOf(s, 'mcd_reboots_failed_total')!;

  // The host takes the request and does not reboot: after --reboot-timeout it counts as failed,
  // with an Event, and the daemon asks again.
  rmSync(inRoot('/run/systemd'));
  // The daemon retries a failed pass with a backoff that doubles from 1 s up to 60 s: on a loaded
  // machine the failures above can add up to the cap before it tries again.
  const taken = (ms: number) => eventually('the reboot requested', async () => {
    try { rmSync(inRoot('/run/systemd/shutdown/scheduled')); return true; } catch { return false; }
  }, ms);
  await taken(75_000);
  s = await until('a reboot that did not happen counted', (s) => (valueOf(s, 'mcd_reboots_failed_total')! > failedReboots ? undefined : `mcd_reboots_failed_total ${valueOf(s, 'mcd_reboots_failed_total')}`), 20_000);
  await eventually('an Event RebootFailed saying the reboot did not happen', async () =>
    (await kube.list(resources.events)).items.some((e) => e.reason === 'RebootFailed' && /requested \d+ seconds? ago has not happened \(still boot boot-1\); asking again/.test(e.message ?? '')), 10_000);
  const counted = valueOf(s, 'mcd_reboots_failed_total')!;

  // Asked again (a requeue, not a retry: no backoff); this time the test reboots the machine (a new
  // boot ID) and the daemon completes.
  await taken(30_000);
  put('/proc/sys/kernel/random/boot_id', 'boot-2\n');
  await setReady('True', 'boot-2');
  s = await until('Done on rendered-worker-2', (s) => (valueOf(s, 'mcd_update_state', { config: 'rendered-worker-2', err: '' }) && valueOf(s, 'mcd_state', { state: 'Done', reason: '' }) ? undefined : JSON.stringify([...series(s, 'mcd_update_state'), ...series(s, 'mcd_state')])), 20_000);
  assert.ok(valueOf(s, 'mcd_reboots_failed_total')! >= counted, 'a counter: not reset');
  assert.equal((await annotations())[`${A}currentConfig`], 'rendered-worker-2');
});
