// Static pods without any API server: the runner reads a machine root's manifest directory and
// runs what it holds (here the built-in echo server) with no client at all; a changed manifest
// restarts the pod under its new hash, a removed one stops it, a crashed process is started again;
// the pure parts (hash, the pod the node runs, kubeadm-flags.env, the version file) beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { logger } from '../../src/common/log.js';
import { scriptCommand } from '../../src/cluster/node-agent/pod-spec.js';
import { manifestHash, mirrorPod, staticPod, StaticPodRunner, type PodManifest } from '../../src/cluster/node-agent/static-pods.js';
import { parseKubeadmFlags, readKubeletFiles } from '../../src/cluster/node-agent/kubelet-files.js';
import { nodeStatus } from '../../src/cluster/node-agent/node-object.js';
import { eventually } from '../helpers/eventually.js';

const manifest = (port: number, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kube-system
spec:
  containers:
  - name: echo
    image: bosun.local/echo
    ports: [{containerPort: ${port}}]${extra}
`;

/** The pids of echo servers on `port` (their environment says so). */
function echoPids(port: number): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((e) => {
    try {
      return readFileSync(`/proc/${e}/environ`, 'utf8').split('\0').includes(`BOSUN_ECHO_PORT=${port}`);
    } catch {
      return false;
    }
  }).map(Number);
}

function httpGet(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get({ host, port, path: '/', timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

test('a static pod runs from its manifest with no API server; a changed manifest restarts it, a removed one stops it', { timeout: 90_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-static-'));
  const dir = join(root, 'etc/kubernetes/manifests');
  mkdirSync(dir, { recursive: true });
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  writeFileSync(join(dir, 'web.yaml'), manifest(port));
  const runner = new StaticPodRunner({
    root, dir, nodeName: 'node-a', nodeIP: '127.0.152.1', podCIDR: '127.0.152.0/24',
    apiServer: { host: '', port: '', caPem: '' },
    componentCommand: (argv) => argv, echoCommand: scriptCommand('echo'),
    backoff: { baseMs: 200, maxMs: 1000 }, checkIntervalMs: 60_000, log: logger('static-pods-test'),
  });
  try {
    runner.start();
    // From the top of the pod CIDR, so as not to meet the pod manager's addresses.
    assert.equal(await eventually('the echo server answering', () => httpGet('127.0.152.254', port), 30_000), 'web-node-a\n');
    const [first] = runner.pods();
    assert.equal(first.metadata.uid, manifestHash(parseYaml(manifest(port)) as PodManifest));
    assert.equal(runner.pod('kube-system', 'web-node-a'), first);

    // A crash: the process is started again (restartPolicy Always).
    const [pid] = echoPids(port);
    assert.ok(pid, 'the echo process');
    process.kill(pid, 'SIGKILL');
    await eventually('the echo server started again', async () => {
      const again = echoPids(port);
      return again.length === 1 && again[0] !== pid && (await httpGet('127.0.152.254', port)) === 'web-node-a\n';
    }, 30_000);
    assert.equal(runner.pods()[0].metadata.uid, first.metadata.uid);

    // Changed: the old pod stops, the new one (its own hash) serves on the new port.
    writeFileSync(join(dir, 'web.yaml'), manifest(port + 1));
    runner.resync();
    assert.equal(await eventually('the changed pod answering', () => httpGet('127.0.152.254', port + 1), 30_000), 'web-node-a\n');
    assert.notEqual(runner.pods()[0].metadata.uid, first.metadata.uid);
    await assert.rejects(httpGet('127.0.152.254', port));

    // Removed: stopped.
    unlinkSync(join(dir, 'web.yaml'));
    runner.resync();
    await eventually('the pod stopped', async () => runner.pods().length === 0 && (await httpGet('127.0.152.254', port + 1).then(() => false, () => true)), 30_000);
  } finally {
    await runner.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test("a startup probe that keeps failing kills the container (and it is started again); one that succeeds leaves it running", { timeout: 90_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-static-startup-'));
  const dir = join(root, 'etc/kubernetes/manifests');
  mkdirSync(dir, { recursive: true });
  const good = 20_000 + Math.floor(Math.random() * 20_000);
  const bad = good + 1;
  const startup = (port: number, failureThreshold: number) => `
    startupProbe: {tcpSocket: {port: ${port}}, periodSeconds: 1, failureThreshold: ${failureThreshold}}`;
  // The good one's server gets 30 s to listen; the bad one's probe asks a port nobody listens on.
  writeFileSync(join(dir, 'good.yaml'), manifest(good, startup(good, 30)).replace('name: web', 'name: good'));
  writeFileSync(join(dir, 'bad.yaml'), manifest(bad, startup(bad + 1, 2)).replace('name: web', 'name: bad'));
  const runner = new StaticPodRunner({
    root, dir, nodeName: 'node-b', nodeIP: '127.0.152.2', podCIDR: '127.0.153.0/24',
    apiServer: { host: '', port: '', caPem: '' },
    componentCommand: (argv) => argv, echoCommand: scriptCommand('echo'),
    backoff: { baseMs: 200, maxMs: 400 }, checkIntervalMs: 60_000, log: logger('static-pods-test'),
  });
  try {
    runner.start();
    const goodPid = await eventually('the good pod serving', async () => (await httpGet('127.0.153.254', good).catch(() => httpGet('127.0.153.253', good))) && echoPids(good)[0], 30_000);
    const [badPid] = await eventually('the bad pod running', () => echoPids(bad).length === 1 && echoPids(bad), 30_000);
    await eventually('the bad pod killed by its startup probe and started again', () => echoPids(bad).length === 1 && echoPids(bad)[0] !== badPid, 30_000);
    assert.deepEqual(echoPids(good), [goodPid], 'the pod whose startup probe succeeds keeps running');
  } finally {
    await runner.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('the mirror pod and the pod the node runs share name, spec and hash; the node runs it under the hash as UID', () => {
  const m = parseYaml(manifest(8080)) as PodManifest;
  const mirror = mirrorPod(m, { name: 'n1', uid: 'node-uid' });
  const local = staticPod(m, 'n1');
  assert.equal(mirror.metadata.name, 'web-n1');
  assert.equal(local.metadata.name, 'web-n1');
  assert.equal(local.metadata.uid, manifestHash(m));
  assert.equal(mirror.metadata.annotations?.['kubernetes.io/config.mirror'], manifestHash(m));
  assert.deepEqual(mirror.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true }]);
  assert.deepEqual(local.spec, mirror.spec);
  assert.notEqual(manifestHash(parseYaml(manifest(8081)) as PodManifest), manifestHash(m));
});

test("kubeadm-flags.env's labels and taints and /etc/bosun/kubernetes-version reach the node", () => {
  const flags = parseKubeadmFlags('KUBELET_KUBEADM_ARGS="--node-labels=node-role.kubernetes.io/control-plane=,a=b --register-with-taints=node-role.kubernetes.io/control-plane:NoSchedule"\n');
  assert.equal(flags.get('node-labels'), 'node-role.kubernetes.io/control-plane=,a=b');
  const root = mkdtempSync(join(tmpdir(), 'bosun-kubelet-files-'));
  try {
    const put = (path: string, text: string) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    put('etc/systemd/system/kubelet.service', '[Service]\nExecStart=/usr/bin/kubelet --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --node-labels=x=y\n');
    put('var/lib/kubelet/config.yaml', 'kind: KubeletConfiguration\nstaticPodPath: /etc/kubernetes/manifests\n');
    put('var/lib/kubelet/kubeadm-flags.env', 'KUBELET_KUBEADM_ARGS="--node-labels=node-role.kubernetes.io/control-plane= --register-with-taints=node-role.kubernetes.io/control-plane:NoSchedule"\n');
    put('etc/bosun/kubernetes-version', 'v1.33.1\n');
    const files = readKubeletFiles(root);
    assert.deepEqual(files.nodeLabels, { 'node-role.kubernetes.io/control-plane': '' });
    assert.deepEqual(files.registerWithTaints, [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]);
    assert.equal(files.kubernetesVersion, 'v1.33.1');
    assert.equal(files.staticPodPath, '/etc/kubernetes/manifests');
    const status = nodeStatus({
      name: 'n', internalIP: '127.0.150.1', hostname: 'n', instanceType: { name: 't', cpu: 2, memoryMiB: 4096 }, podCIDR: '127.1.1.0/24', bootId: 'b',
      machineId: '0'.repeat(32), kernelVersion: 'k', architecture: 'x64', labels: {}, registerWithTaints: [], externalCloudProvider: false, config: {}, kubeletVersion: files.kubernetesVersion,
    }, undefined, '2026-01-01T00:00:00Z');
    assert.equal(status.nodeInfo?.kubeletVersion, 'v1.33.1');
    assert.equal(status.nodeInfo?.kubeProxyVersion, 'v1.33.1');
    put('etc/bosun/kubernetes-version', 'latest\n');
    assert.throws(() => readKubeletFiles(root), /kubernetes-version holds "latest", not a version such as v1.33.1/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
