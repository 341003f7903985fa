// A workload cluster made by machines that boot from the kubeadm bootstrap provider's real Ignition
// (bootstrapIgnition: init for the first, join-control-plane for two more, join-worker for one),
// applied by the local cloud's firmware (Ignition on first boot) and run by the node agent's
// runtime, which also runs the data's kubeadm.service: /etc/kubeadm.sh → `bosun kubeadm init|join`.
// Nothing is prepared by the test but the CAs (what the bootstrap controller puts in the data) and
// the bootstrap token (what it creates in the workload cluster): the leaf certificates, the
// kubeconfigs, the static pod manifests and the etcd membership are made on the machines. The first
// comes up alone (etcd `new`, one member); the second and third join etcd one at a time (MemberAdd,
// `--initial-cluster-state=existing`); every API server serves; the worker joins with the token, its
// CSR approved by the workload cluster's kube-controller-manager, registers in the workload API and
// runs the pod the workload scheduler gives it; a Service gets its address from the cluster's range and
// carries traffic to it; the
// real kubectl works with the admin kubeconfig. Addresses are picked free under 127.0.151.x.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { logger } from '../../src/common/log.js';
import { Firmware, createMachineDisk, machineDir, type MachineDir } from '../../src/cloud/firmware.js';
import type { Instance } from '../../src/cloud/types.js';
import { NodeAgentRuntime } from '../../src/cluster/node-agent/runtime.js';
import { bootstrapIgnition, BOOTSTRAP_KUBELET_KUBECONFIG_PATH, type BootstrapRole } from '../../src/capi/kubeadm/bootstrap-ignition.js';
import { bootstrapTokenSecret } from '../../src/capi/kubeadm/bootstrap-controller.js';
import { adminKubeconfig, generateCertificate, kubeconfigYaml, type ClusterCertificates } from '../../src/capi/kubeadm/certificates.js';
import { findKubernetesVersion } from '../../src/capi/kubeadm/versions.js';
import { runKubectl } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { freeMachineAddresses, machineLogs, pidsUnder } from '../helpers/machine-roots.js';
import { skipWithoutEtcd } from '../helpers/etcd.js';

const exec = promisify(execFile);
const VERSION = 'v1.33.1';
const CLUSTER = 'wl';
const NETWORK = { serviceCidr: '127.190.0.0/16', podCidr: '127.126.0.0/16', serviceDomain: 'cluster.local' };

interface Node { name: string; ip: string; role: BootstrapRole; dir: MachineDir; instance: Instance }

test('machines booted from the kubeadm bootstrap Ignition form a workload cluster: init, two control-plane joins one at a time, a worker', { skip: skipWithoutEtcd, timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeadm-boot-'));
  chmodSync(dir, 0o755);
  const ips = await freeMachineAddresses('127.0.151', 4);
  const endpoint = `${ips[0]}:6443`;
  const certificates: ClusterCertificates = { ca: await generateCertificate('ca'), etcd: await generateCertificate('etcd'), proxy: await generateCertificate('proxy'), sa: await generateCertificate('sa') };
  const version = findKubernetesVersion(VERSION)!;
  // What a KubeadmControlPlane's kubeadmConfigSpec may carry: etcd's elections fast enough for a loaded machine.
  const spec = { clusterConfiguration: { etcd: { local: { extraArgs: [{ name: 'heartbeat-interval', value: '250' }, { name: 'election-timeout', value: '2500' }] } } } };
  const adminFile = join(dir, 'admin.conf');
  writeFileSync(adminFile, await adminKubeconfig(CLUSTER, `https://${endpoint}`, certificates.ca));
  const kubectl = (args: string[], input?: string) => runKubectl(adminFile, ['--request-timeout=15s', ...args], input ? { input } : {});
  const token = `${randomBytes(3).toString('hex')}.${randomBytes(8).toString('hex')}`;

  const runtime = new NodeAgentRuntime({
    log: logger('node-agent'), leaseRenewIntervalMs: 2000, nodeStatusUpdateMs: 2000, restartDelayMs: 1000, csrPollMs: 300, staticPodCheckMs: 2000,
    crashBackoffBaseMs: 1000, crashBackoffMaxMs: 5000, apiWaitPollMs: 500, certificateRotationJitter: () => 0.5,
  });
  const firmware = new Firmware({ ignition: 'auto' });
  const nodes: Node[] = [['cp-1', 'init'], ['cp-2', 'join-control-plane'], ['cp-3', 'join-control-plane'], ['worker-1', 'join-worker']].map(([name, role], i) => ({
    name, ip: ips[i], role: role as BootstrapRole, dir: machineDir(dir, `i-${name}`),
    instance: { id: `i-${name}`, name, type: 'local.small', zone: 'local-a', region: 'local', privateIp: ips[i], state: 'running', launchTime: new Date().toISOString(), createdAt: new Date().toISOString(), machine: { phase: 'Up', bootCount: 1 } },
  }));
  const booted: Node[] = [];
  const stop = new AbortController();

  /** Creates the machine's disk with its bootstrap data as user data, boots it (Ignition) and starts its runtime. */
  async function boot(n: Node): Promise<void> {
    const kubeconfigs: Record<string, string> = n.role === 'init' ? {} : { [BOOTSTRAP_KUBELET_KUBECONFIG_PATH]: kubeconfigYaml({ cluster: CLUSTER, server: `https://${endpoint}`, caPem: certificates.ca.certPem, user: 'tls-bootstrap-token-user', token }) };
    const ignition = bootstrapIgnition({ clusterName: CLUSTER, controlPlaneEndpoint: endpoint, nodeName: n.name, token: n.role === 'init' ? undefined : token, network: NETWORK, role: n.role, version, spec, certificates, kubeconfigs });
    createMachineDisk(n.dir, JSON.stringify(ignition));
    const { bootId, firstBoot } = await firmware.boot(n.dir, stop.signal, () => undefined);
    booted.push(n);
    await runtime.onBoot({ instance: { ...n.instance, bootId }, root: n.dir.root, bootId, firstBoot });
  }
  const bootLog = (n: Node) => (existsSync(join(n.dir.root, 'var/log/boot.log')) ? readFileSync(join(n.dir.root, 'var/log/boot.log'), 'utf8') : '');
  const succeeded = (n: Node) => eventually(`${n.name}'s kubeadm.service to succeed`, () => {
    const log = bootLog(n);
    if (/kubeadm\.service: Failed/.test(log)) throw new Error(log);
    return log.includes('kubeadm.service: Succeeded.');
  }, { timeoutMs: 240_000, intervalMs: 1000, detail: () => bootLog(n) });
  const etcdctl = (n: Node, args: string[]) => exec('/usr/bin/etcdctl', [
    `--endpoints=https://${n.ip}:2379`, `--cacert=${join(n.dir.root, 'etc/kubernetes/pki/etcd/ca.crt')}`,
    `--cert=${join(n.dir.root, 'etc/kubernetes/pki/etcd/healthcheck-client.crt')}`, `--key=${join(n.dir.root, 'etc/kubernetes/pki/etcd/healthcheck-client.key')}`,
    '--dial-timeout=3s', '--command-timeout=5s', '-w', 'json', ...args,
  ], { env: { ...process.env, ETCDCTL_API: '3' } });
  const members = async (n: Node) => (JSON.parse((await etcdctl(n, ['member', 'list'])).stdout) as { members: Array<{ name?: string; peerURLs: string[]; clientURLs?: string[] }> }).members;
  const etcdArgs = (n: Node) => (YAML.parse(readFileSync(join(n.dir.root, 'etc/kubernetes/manifests/etcd.yaml'), 'utf8')) as { spec: { containers: Array<{ command: string[] }> } }).spec.containers[0].command;

  try {
    // The first machine: kubeadm init, alone.
    const [cp1, cp2, cp3, worker] = nodes;
    await boot(cp1);
    await succeeded(cp1);
    const log1 = bootLog(cp1);
    for (const line of ['[certs] Generating "apiserver" certificate and key', '[kubeconfig] Writing "kubelet.conf"', 'A new etcd cluster of one member', 'Your Kubernetes control-plane has initialized successfully!']) assert.ok(log1.includes(line), `${line} in\n${log1}`);
    assert.ok(!existsSync(join(cp1.dir.root, 'etc/kubeadm.sh')) && existsSync(join(cp1.dir.root, 'tmp/kubeadm.sh')), 'the script moved away once it succeeded');
    assert.ok(existsSync(join(cp1.dir.root, 'run/cluster-api/bootstrap-success.complete')));
    const apiserverCert = new X509Certificate(readFileSync(join(cp1.dir.root, 'etc/kubernetes/pki/apiserver.crt')));
    for (const san of [`IP Address:${cp1.ip}`, 'IP Address:127.190.0.1', 'DNS:kubernetes.default.svc.cluster.local', 'DNS:cp-1']) assert.ok(apiserverCert.subjectAltName?.includes(san), `${san} in ${apiserverCert.subjectAltName}`);
    assert.ok(etcdArgs(cp1).includes(`--initial-cluster=cp-1=https://${cp1.ip}:2380`) && !etcdArgs(cp1).some((a) => a.startsWith('--initial-cluster-state')));
    assert.equal((await members(cp1)).length, 1);
    const v = await kubectl(['version', '-o', 'json']);
    assert.equal(v.code, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).serverVersion.gitVersion, VERSION);
    const kubeadmConfig = await kubectl(['get', 'configmap', '-n', 'kube-system', 'kubeadm-config', '-o', 'jsonpath={.data.ClusterConfiguration}']);
    assert.match(kubeadmConfig.stdout, /controlPlaneEndpoint: 127\.0\.151\.\d+:6443/);

    // The join token, as the bootstrap controller creates it in the workload cluster.
    const secret = await kubectl(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(token, new Date(Date.now() + 3600_000))));
    assert.equal(secret.code, 0, secret.stderr);

    // Two control-plane machines join one at a time: etcd grows 1 → 2 → 3, each member started.
    for (const [n, count] of [[cp2, 2], [cp3, 3]] as const) {
      await boot(n);
      await succeeded(n);
      const args = etcdArgs(n);
      assert.ok(args.includes('--initial-cluster-state=existing'), args.join(' '));
      const listed = args.find((a) => a.startsWith('--initial-cluster='))!.slice('--initial-cluster='.length).split(',').sort();
      assert.deepEqual(listed, nodes.slice(0, count).map((x) => `${x.name}=https://${x.ip}:2380`).sort());
      const list = await eventually(`${count} etcd members, all started`, async () => {
        const l = await members(cp1);
        return l.length === count && l.every((x) => x.name && x.clientURLs?.length) ? l : false;
      }, { timeoutMs: 60_000, intervalMs: 1000 });
      assert.deepEqual(list.map((x) => x.name).sort(), nodes.slice(0, count).map((x) => x.name));
      assert.match(bootLog(n), /\[etcd\] Added cp-\d \(https:\/\/[\d.]+:2380\) to the etcd cluster/);
    }
    for (const n of [cp1, cp2, cp3]) await etcdctl(n, ['endpoint', 'health']);
    for (const n of [cp1, cp2, cp3]) {
      const r = await runKubectl(adminFile, ['--request-timeout=15s', `--server=https://${n.ip}:6443`, 'get', '--raw', '/version']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).gitVersion, VERSION);
    }

    // The worker joins with the token and runs what the workload scheduler gives it.
    await boot(worker);
    await succeeded(worker);
    const ready = await eventually('four Ready nodes in the workload cluster', async () => {
      const r = await kubectl(['get', 'nodes', '-o', 'json']);
      if (r.code !== 0) throw new Error(r.stderr);
      const items = JSON.parse(r.stdout).items as Array<{ metadata: { name: string; labels: Record<string, string> }; status: { nodeInfo: { kubeletVersion: string }; conditions: Array<{ type: string; status: string }> } }>;
      return items.filter((x) => x.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 4 ? items : false;
    }, { timeoutMs: 120_000, intervalMs: 2000 });
    assert.deepEqual(ready.map((x) => x.metadata.name).sort(), ['cp-1', 'cp-2', 'cp-3', 'worker-1']);
    for (const x of ready) {
      assert.equal(x.status.nodeInfo.kubeletVersion, VERSION);
      assert.equal(x.metadata.labels['node-role.kubernetes.io/control-plane'] !== undefined, x.metadata.name.startsWith('cp-'), x.metadata.name);
    }
    const run = await kubectl(['run', 'web', '--image=bosun.local/echo', '--port=8080', '--restart=Never']);
    assert.equal(run.code, 0, run.stderr);
    await eventually('the pod Running on the worker', async () => {
      const r = await kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.spec.nodeName} {.status.phase}']);
      return r.stdout === 'worker-1 Running';
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    // A Service of the workload cluster: its address from the cluster's Service range, served by its node agents.
    const svc = await kubectl(['expose', 'pod', 'web', '--port=80', '--target-port=8080']);
    assert.equal(svc.code, 0, svc.stderr);
    const clusterIP = (await kubectl(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    assert.match(clusterIP, /^127\.190\.\d+\.\d+$/);
    await eventually(`the echo pod answering through ${clusterIP}:80`, async () => {
      const res = await fetch(`http://${clusterIP}:80/hello`, { signal: AbortSignal.timeout(3000) });
      return res.status === 200;
    }, { timeoutMs: 60_000, intervalMs: 1000 });
  } catch (e) {
    console.log(machineLogs(dir, { lines: 15, bootLog: true }));
    throw e;
  } finally {
    stop.abort();
    for (const n of booted.reverse()) await runtime.onShutdown({ instance: n.instance, root: n.dir.root, bootId: '', firstBoot: false });
    for (const pid of pidsUnder(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
