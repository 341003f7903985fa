// The component manager against the embedded API server: it serves metrics (HTTPS, to callers the
// API server authenticates and authorises: 401, 403, 200; its certificate from files, reloaded when
// they change, or self-signed) and health (readiness following informer sync), runs leader runnables only while holding the Lease and servers on
// every replica, stops cleanly on abort (Lease released, listeners closed), stops when a runnable
// fails; and the shared flags validate as documented.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { Counter, Registry } from 'prom-client';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/cluster-objects.js';
import { Controller } from '../../src/kube/controller.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { Manager, type Runnable } from '../../src/kube/manager.js';
import { addManagerFlags, managerOptionsFromFlags } from '../../src/kube/manager-flags.js';
import { resources } from '../../src/kube/resources.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { scrape, withDelegatedAuth, metricsReader } from '../helpers/metrics.js';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ANY_PORT = { host: '127.0.0.1', port: 0 };

async function get(address: string | undefined, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://${address}${path}`);
  return { status: res.status, text: await res.text() };
}

/** A runnable that records whether it is running. */
function probe(name: string, needsLeaderElection?: boolean): Runnable & { running: boolean; starts: number } {
  const r = {
    name,
    needsLeaderElection,
    running: false,
    starts: 0,
    async start(signal: AbortSignal) {
      r.starts++;
      r.running = true;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      r.running = false;
    },
  };
  return r;
}

test('a manager serves metrics and health; readiness follows its informers', async () => {
  const api = await startTestApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const stop = new AbortController();
  try {
    const kubeconfig = loadKubeConfig(api.kubeconfigPath);
    const manager = new Manager({ name: 'test-component', kubeconfig, metricsListen: ANY_PORT, healthListen: ANY_PORT });
    const synced: string[] = [];
    const controller = new Controller({ name: 'manager-test-configmaps', sync: (key) => void synced.push(key) });
    controller.watch(manager.informers.forResource(resources.configMaps, { namespace: 'default' }));
    const own = new Registry();
    new Counter({ name: 'test_component_widgets_total', help: 'Widgets.', registers: [own] }).inc(3);
    manager.add(controller).addMetrics(own);
    await manager.client.create(resources.configMaps, { metadata: { name: 'one', namespace: 'default' } });
    const running = manager.start(stop.signal);
    await manager.ready;
    assert.notEqual(manager.metricsAddress, manager.healthAddress, 'port 0 twice: two listeners');

    await eventually('the controller to sync', async () => synced.includes('default/one'));
    const ready = await get(manager.healthAddress, '/readyz?verbose');
    assert.equal(ready.status, 200);
    assert.match(ready.text, /\[\+\]informer-sync ok/);
    assert.deepEqual(await get(manager.healthAddress, '/healthz'), { status: 200, text: 'ok' });
    assert.deepEqual(await get(manager.healthAddress, '/livez'), { status: 200, text: 'ok' });
    const metrics = await scrape(manager.metricsAddress, { token: api.token, ca: manager.metricsCertificate });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /controller_runtime_reconcile_total\{controller="manager-test-configmaps",result="success"\} [1-9]/);
    assert.match(metrics.text, /^test_component_widgets_total 3$/m);
    assert.equal((await scrape(manager.metricsAddress, { path: '/healthz', ca: manager.metricsCertificate })).status, 404, 'health is not on the metrics listener');
    await assert.rejects(fetch(`http://${manager.metricsAddress}/metrics`), 'no plain HTTP for metrics');

    stop.abort();
    await running;
    await assert.rejects(fetch(`http://${manager.healthAddress ?? 'x'}/healthz`), 'listeners are closed after stop');
  } finally {
    stop.abort();
    stopAuth();
    await api.stop();
  }
});

test('readiness fails while an informer cannot list; metrics and health may share a listener', async () => {
  const api = await startTestApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const stop = new AbortController();
  try {
    const shared = { host: '127.0.0.1', port: await freePort() };
    const manager = new Manager({ name: 'test-unready', kubeconfig: loadKubeConfig(api.kubeconfigPath), metricsListen: shared, healthListen: shared });
    // A resource the server does not serve: the informer retries its list and never syncs.
    manager.informers.forResource({ group: 'example.com', version: 'v1', resource: 'widgets', namespaced: false });
    const running = manager.start(stop.signal);
    await manager.ready;
    assert.equal(manager.metricsAddress, manager.healthAddress);
    // The shared listener is the metrics one: HTTPS; health on it needs no token.
    const ca = manager.metricsCertificate;
    const ready = await scrape(manager.healthAddress, { path: '/readyz', ca });
    assert.equal(ready.status, 500);
    assert.match(ready.text, /\[-\]informer-sync failed: not synced: widgets\.example\.com\/v1/);
    assert.match(ready.text, /readyz check failed/);
    assert.equal((await scrape(manager.healthAddress, { path: '/healthz', ca })).status, 200, 'not ready is still alive');
    assert.equal((await scrape(manager.metricsAddress, { token: api.token, ca })).status, 200);
    assert.equal((await scrape(manager.metricsAddress, { ca })).status, 401);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    stopAuth();
    await api.stop();
  }
});

test('leader runnables run on one replica at a time; servers on every replica; a stopped leader hands over at once', async () => {
  const api = await startTestApiServer();
  const stops = [new AbortController(), new AbortController()];
  const kubeconfig = loadKubeConfig(api.kubeconfigPath);
  const replicas = stops.map((_, i) => {
    const manager = new Manager({
      name: 'test-elected',
      kubeconfig,
      healthListen: ANY_PORT,
      leaderElection: { namespace: 'kube-system', name: 'test-elected', identity: `replica-${i}`, leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
    });
    const work = probe(`work-${i}`);
    const server = probe(`server-${i}`, false);
    manager.add(work, server);
    return { manager, work, server };
  });
  let both = 0;
  const sampler = setInterval(() => {
    if (replicas[0].work.running && replicas[1].work.running) both++;
  }, 20);
  const runs = replicas.map((r, i) => r.manager.start(stops[i].signal));
  try {
    const first = await eventually('a leader', async () => replicas.findIndex((r) => r.work.running) + 1 || undefined, 5000) - 1;
    const other = 1 - first;
    await eventually('both servers to run', async () => replicas.every((r) => r.server.running));
    await new Promise((r) => setTimeout(r, 600));
    assert.ok(replicas[first].work.running && !replicas[other].work.running, 'the standby does not run leader work');
    assert.equal(replicas[first].manager.isLeader(), true);
    assert.equal(replicas[other].manager.isLeader(), false);
    assert.equal((await get(replicas[other].manager.healthAddress, '/readyz')).status, 200, 'a standby replica is ready');

    const handover = Date.now();
    stops[first].abort();
    await runs[first];
    assert.equal(replicas[first].work.running, false);
    assert.equal(replicas[first].server.running, false);
    await eventually('the standby to take over', async () => replicas[other].work.running, 3000);
    assert.ok(Date.now() - handover < 1500, 'the Lease was released, not left to expire');
    const lease = await replicas[other].manager.client.get(resources.leases, 'test-elected', 'kube-system');
    assert.equal(lease.spec?.holderIdentity, `replica-${other}`);
    assert.equal(both, 0, 'never two leaders');
  } finally {
    clearInterval(sampler);
    for (const s of stops) s.abort();
    await Promise.all(runs);
    await api.stop();
  }
});

test('a failing runnable stops the manager, and start() says which one failed', async () => {
  const manager = new Manager({ name: 'test-failing', kubeconfig: 'unused: never loaded' });
  const healthy = probe('healthy');
  const failing: Runnable = { name: 'broken-loop', start: async () => Promise.reject(new Error('cannot go on')) };
  let stopped = false;
  manager.add(healthy, failing, { name: 'closer', needsLeaderElection: false, start: () => undefined, stop: () => void (stopped = true) });
  await assert.rejects(manager.start(), /broken-loop failed: cannot go on/);
  assert.equal(healthy.running, false, 'the other runnables were stopped');
  assert.equal(stopped, true, 'stop hooks ran');
  await assert.rejects(manager.start(), /starts once/);
});

test('the shared flags: defaults, aliases and validation', () => {
  const parse = (args: string[]) => {
    const command = addManagerFlags(new Command('component').exitOverride(), { metricsListen: '127.0.0.1:9099' }).action(() => undefined);
    command.parse(args, { from: 'user' });
    return managerOptionsFromFlags(command.opts() as never, { name: 'component', lease: { namespace: 'ns', name: 'lock' } });
  };
  const elected = { namespace: 'ns', name: 'lock', leaseDurationMs: 137_000, renewDeadlineMs: 107_000, retryPeriodMs: 26_000 };
  const cases: Array<{ args: string[]; want?: object; error?: RegExp }> = [
    { args: [], want: { metricsListen: { host: '127.0.0.1', port: 9099 }, healthListen: undefined, leaderElection: elected } },
    { args: ['--metrics-listen', 'off', '--health-listen', '[::1]:8080'], want: { metricsListen: undefined, healthListen: { host: '::1', port: 8080 } } },
    { args: ['--no-leader-elect'], want: { leaderElection: undefined } },
    { args: ['--leader-elect=false'], want: { leaderElection: undefined } },
    { args: ['--leader-elect=maybe'], error: /--leader-elect must be true or false, got "maybe"/ },
    { args: ['--lease-duration', '4', '--renew-deadline', '3', '--retry-period', '0.5'], want: { leaderElection: { namespace: 'ns', name: 'lock', leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 } } },
    { args: ['--lease-duration', '10', '--renew-deadline', '10'], error: /--renew-deadline must be shorter than --lease-duration/ },
    { args: ['--renew-deadline', '30', '--retry-period', '26'], error: /--renew-deadline must be longer than 1\.2 × --retry-period/ },
    { args: ['--lease-duration', '-1'], error: /--lease-duration must be a positive number of seconds, got "-1"/ },
    { args: ['--metrics-listen', 'nonsense'], error: /--metrics-listen must be HOST:PORT \(for example 127\.0\.0\.1:6443\), got "nonsense"/ },
    { args: ['--metrics-port', '9100'], want: { metricsListen: { host: '127.0.0.1', port: 9100 } } },
    { args: ['--metrics-port', 'x'], error: /--metrics-port must be a port number, got "x"/ },
    { args: ['--log-level', 'warn', '--kubeconfig', '/tmp/kc'], want: { logLevel: 'warn', kubeconfig: '/tmp/kc' } },
    { args: ['--log-level', 'loud'], error: /Allowed choices are trace, debug, info, warn, error, fatal, silent/ },
    { args: [], want: { metricsTls: undefined } },
    { args: ['--tls-cert-file', '/c', '--tls-private-key-file', '/k'], want: { metricsTls: { certFile: '/c', keyFile: '/k' } } },
    { args: ['--tls-cert-file', '/c'], error: /--tls-cert-file and --tls-private-key-file go together: give both or neither/ },
  ];
  for (const c of cases) {
    if (c.error) assert.throws(() => parse(c.args), c.error, c.args.join(' '));
    else {
      const got = parse(c.args) as unknown as Record<string, unknown>;
      for (const [k, v] of Object.entries(c.want!)) assert.deepEqual(got[k], v, `${c.args.join(' ')}: ${k}`);
    }
  }
});

const METRICS_READER = metricsReader('metrics-reader', 'prometheus');

test('metrics: HTTPS with the given certificate (reloaded when its files change); 401 without a valid token, 403 without the grant, 200 with it', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const access = await enableAccessControl(api.server, api.dataDir);
  const dir = mkdtempSync(join(tmpdir(), 'bosun-metrics-tls-'));
  const stop = new AbortController();
  try {
    // The component's own identity: may create TokenReviews and SubjectAccessReviews, nothing more.
    await api.kubectlOk(['create', 'serviceaccount', 'component', '-n', 'default']);
    await api.kubectlOk(['create', 'clusterrolebinding', 'component-auth-delegator', '--clusterrole=system:auth-delegator', '--serviceaccount=default:component']);
    await api.kubectlOk(['create', 'serviceaccount', 'nobody', '-n', 'default']);
    await api.kubectlOk(['create', 'serviceaccount', 'prometheus', '-n', 'default']);
    await api.kubectlOk(['apply', '-f', '-'], METRICS_READER);
    const token = async (sa: string) => (await api.kubectlOk(['create', 'token', sa, '-n', 'default'])).trim();
    const kubeconfig = loadKubeConfig(api.kubeconfigPath);
    kubeconfig.users[0] = { ...kubeconfig.users[0], token: await token('component') };

    const ca = await createCA('test-service-ca');
    const first = await issueServingCert(ca, 'component.default.svc', ['component.default.svc', '127.0.0.1']);
    writeFileSync(join(dir, 'tls.crt'), first.certPem);
    writeFileSync(join(dir, 'tls.key'), first.keyPem);
    const manager = new Manager({ name: 'test-secure-metrics', kubeconfig, metricsListen: ANY_PORT, metricsTls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), reloadIntervalMs: 100 } });
    const running = manager.start(stop.signal);
    await manager.ready;
    const address = manager.metricsAddress;

    const anonymous = await scrape(address, { ca: ca.certPem });
    assert.equal(anonymous.status, 401);
    assert.equal(JSON.parse(anonymous.text).kind, 'Status');
    assert.equal((await scrape(address, { ca: ca.certPem, token: 'not-a-token' })).status, 401);
    const forbidden = await scrape(address, { ca: ca.certPem, token: await token('nobody') });
    assert.equal(forbidden.status, 403);
    assert.match(JSON.parse(forbidden.text).message, /system:serviceaccount:default:nobody/);
    const allowed = await scrape(address, { ca: ca.certPem, token: await token('prometheus') });
    assert.equal(allowed.status, 200, allowed.text);
    assert.match(allowed.text, /^# HELP /m);
    assert.equal((await scrape(address, { ca: ca.certPem, token: api.token })).status, 200, 'the admin may too');

    // A renewed certificate in the files is served without a restart.
    const second = await issueServingCert(ca, 'component.default.svc', ['component.default.svc', '127.0.0.1']);
    writeFileSync(join(dir, 'tls.key'), second.keyPem);
    writeFileSync(join(dir, 'tls.crt'), second.certPem);
    await eventually('the new certificate served', () => manager.metricsCertificate === second.certPem);
    const peer = await new Promise<string>((resolve, reject) => {
      import('node:tls').then(({ connect }) => {
        const [host, port] = (address ?? '').split(':');
        const socket = connect({ host, port: Number(port), ca: ca.certPem }, () => {
          resolve(socket.getPeerX509Certificate()?.serialNumber ?? '');
          socket.end();
        });
        socket.on('error', reject);
      }, reject);
    });
    assert.equal(peer, new X509Certificate(second.certPem).serialNumber);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    access.stop();
    rmSync(dir, { recursive: true, force: true });
    await api.stop();
  }
});

test('metrics without certificate files: a self-signed certificate, still HTTPS and still authorised', async () => {
  const api = await startTestApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const stop = new AbortController();
  try {
    const manager = new Manager({ name: 'test-self-signed', kubeconfig: loadKubeConfig(api.kubeconfigPath), metricsListen: ANY_PORT });
    const running = manager.start(stop.signal);
    await manager.ready;
    const cert = new X509Certificate(manager.metricsCertificate ?? '');
    assert.ok(cert.checkIP('127.0.0.1'), 'valid for the address it listens on');
    assert.equal((await scrape(manager.metricsAddress, { ca: manager.metricsCertificate })).status, 401);
    assert.equal((await scrape(manager.metricsAddress, { ca: manager.metricsCertificate, token: api.token })).status, 200);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    stopAuth();
    await api.stop();
  }
});
