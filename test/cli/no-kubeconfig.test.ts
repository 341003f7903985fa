// Every bosun command that talks to a cluster, run where no kubeconfig exists (HOME an empty
// directory, no $KUBECONFIG, not in a pod), says so and how to point at the local cluster, and
// exits non-zero — instead of client-node's fallback to http://localhost:8080 and its riddle
// ("HTTP protocol is not allowed when skipTLSVerify is not set or false"). In a pod (a
// service-account token mounted, $KUBERNETES_SERVICE_HOST set) the same commands still reach the
// cluster as that service account.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBosun } from '../helpers/cli.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';

const home = mkdtempSync(join(tmpdir(), 'bosun-no-kubeconfig-'));
test.after(() => rmSync(home, { recursive: true, force: true }));

/** The environment of a shell with no kubeconfig anywhere: an empty HOME, nothing in the env. */
const bare = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ HOME: home, KUBECONFIG: undefined, KUBERNETES_SERVICE_HOST: undefined, KUBERNETES_SERVICE_PORT: undefined, BOSUN_IN_CLUSTER_ROOT: undefined, ...extra });

const COMMANDS = [
  ['adm', 'upgrade'],
  ['adm', 'upgrade', 'status'],
  ['adm', 'upgrade', '--to', '1.0.1', '--wait'],
  ['adm', 'upgrade', 'channel', 'fast-1.0'],
  ['machine-config-operator', '--release-version', '1.0.0', '--metrics-listen', 'off'],
  ['machine-config-controller', '--metrics-listen', 'off'],
  ['machine-config-server', '--metrics-listen', 'off'],
  ['machine-config-daemon', '--node-name', 'worker-0', '--metrics-listen', 'off'],
  ['cluster-version-operator', '--release-store', home, '--metrics-listen', 'off'],
  ['scheduler', '--metrics-listen', 'off'],
  ['controller-manager', '--metrics-listen', 'off'],
];

for (const args of COMMANDS) {
  test(`bosun ${args.join(' ').replace(home, 'DIR')} with no kubeconfig says so and how to use the local cluster`, { timeout: 60_000 }, async () => {
    const r = await runBosun(args, { env: bare() });
    assert.equal(r.code, 1, `exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /^error: no kubeconfig found: no --kubeconfig, \$KUBECONFIG is not set, .*\.kube\/config does not exist, and this is not a pod/m);
    assert.ok(r.stderr.includes(join(home, '.kube', 'config')), r.stderr);
    assert.match(r.stderr, /export KUBECONFIG=\.bosun\/kubeconfig/);
    assert.doesNotMatch(r.stderr + r.stdout, /skipTLSVerify|localhost:8080/);
  });
}

test('a kubeconfig named by --kubeconfig or $KUBECONFIG that does not exist is named in the error', { timeout: 60_000 }, async () => {
  const flag = await runBosun(['adm', 'upgrade', '--kubeconfig', join(home, 'missing')], { env: bare() });
  assert.equal(flag.code, 1);
  assert.match(flag.stderr, new RegExp(`^error: the kubeconfig ${join(home, 'missing')} does not exist$`, 'm'));
  const env = await runBosun(['adm', 'upgrade', 'status'], { env: bare({ KUBECONFIG: join(home, 'gone') }) });
  assert.equal(env.code, 1);
  assert.match(env.stderr, new RegExp(`^error: \\$KUBECONFIG names ${join(home, 'gone')}, which does not exist$`, 'm'));
  assert.match(env.stderr, /export KUBECONFIG=\.bosun\/kubeconfig/);
});

test('in a pod, with no kubeconfig, a command reaches the cluster as the mounted service account', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  const root = mkdtempSync(join(tmpdir(), 'bosun-pod-root-'));
  try {
    await enableAccessControl(api.server, api.dataDir);
    assert.equal((await api.kubectl(['create', 'serviceaccount', 'updater', '-n', 'default'])).code, 0);
    const dir = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ca.crt'), api.caPem);
    writeFileSync(join(dir, 'namespace'), 'default');
    writeFileSync(join(dir, 'token'), (await api.kubectl(['create', 'token', 'updater', '-n', 'default'])).stdout.trim());
    const r = await runBosun(['adm', 'upgrade'], { env: bare({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(api.port), BOSUN_IN_CLUSTER_ROOT: root }) });
    // The API server answered, and knew who asked: the service account may not read it.
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read ClusterVersion "version": .*system:serviceaccount:default:updater/);
  } finally {
    await api.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
