// `bosun kubeadm init|join` on a machine root, through the real command: what it refuses (a
// missing configuration, missing CAs, a CA that does not match the discovery pin, an unknown
// version, a foreign apiVersion), what a worker's join does once the node agent has its
// credentials, its --help; the static pods it writes (kubeadm's flags with the node's name and
// address, kubeadm's annotations, etcd's initial cluster for init and for a join); and the
// bootstrap unit's parsing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { bootstrapIgnition, type BootstrapRole } from '../../src/capi/kubeadm/bootstrap-ignition.js';
import { generateCertificate, type ClusterCertificates } from '../../src/capi/kubeadm/certificates.js';
import { apiServerPod, controllerManagerPod, etcdPod, type ControlPlaneInput } from '../../src/capi/kubeadm/static-pods.js';
import { findKubernetesVersion } from '../../src/capi/kubeadm/versions.js';
import { KubeadmError, parseKubeadmConfig, publicKeyPin } from '../../src/cluster/kubeadm/kubeadm.js';
import { parseOneshotUnit } from '../../src/cluster/node-agent/boot-units.js';
import { runBosun } from '../helpers/cli.js';

const version = findKubernetesVersion('v1.33.1')!;
const network = { serviceCidr: '127.190.0.0/16', podCidr: '127.126.0.0/16', serviceDomain: 'cluster.local' };

async function cas(): Promise<ClusterCertificates> {
  return { ca: await generateCertificate('ca'), etcd: await generateCertificate('etcd'), proxy: await generateCertificate('proxy'), sa: await generateCertificate('sa') };
}

/** A machine root with the files of its bootstrap data (the Ignition config's files, written as Ignition would). */
function root(dir: string, role: BootstrapRole, certificates: ClusterCertificates, nodeName = 'm-1'): string {
  const r = join(dir, role);
  const ignition = bootstrapIgnition({ clusterName: 'wl', controlPlaneEndpoint: '127.0.200.9:6443', nodeName, token: role === 'init' ? undefined : 'abcdef.0123456789abcdef', network, role, version, spec: {}, certificates, kubeconfigs: {} });
  for (const f of ignition.storage?.files ?? []) {
    const file = join(r, f.path);
    mkdirSync(dirname(file), { recursive: true });
    const source = f.contents?.source ?? '';
    const comma = source.indexOf(',');
    const data = source.slice(0, comma).endsWith(';base64') ? Buffer.from(source.slice(comma + 1), 'base64') : Buffer.from(decodeURIComponent(source.slice(comma + 1)));
    writeFileSync(file, data, { mode: f.mode ?? 0o644 });
  }
  return r;
}

test('bosun kubeadm refuses what it cannot do, saying why; a worker\'s join waits for the node agent\'s credentials and leaves the sentinel', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeadm-cmd-'));
  try {
    const certificates = await cas();
    const run = (args: string[], r: string) => runBosun(['kubeadm', ...args, '--config', '/run/kubeadm/kubeadm.yaml', '--root', r, '--node-ip', '127.0.151.250', '--timeout', '2']);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const worker = root(dir, 'join-worker', certificates, 'w-1');
    const init = root(dir, 'init', certificates);
    rmSync(join(init, 'etc/kubernetes/pki/etcd/ca.key'));
    // Independent refusals, at once (each is a bosun process).
    const [none, initOnWorker, noCa, help] = await Promise.all([
      run(['init'], empty),
      // A worker's data has no ClusterConfiguration (nor CA keys): kubeadm init there has nothing to start from.
      runBosun(['kubeadm', 'init', '--root', worker, '--node-ip', '127.0.151.250']),
      run(['init'], init),
      runBosun(['kubeadm', 'join', '--help']),
    ]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /error: \/run\/kubeadm\/kubeadm\.yaml is not on this machine/);
    assert.equal(initOnWorker.code, 1);
    assert.match(initOnWorker.stderr, /holds no ClusterConfiguration: kubeadm init needs one/);
    assert.equal(noCa.code, 1);
    assert.match(noCa.stderr, /\/etc\/kubernetes\/pki\/etcd\/ca\.key not on this machine: a control-plane machine's bootstrap data carries the cluster's CAs/);
    assert.equal(help.code, 0);
    for (const part of ['--config', '--root', '--node-ip', '--timeout', 'MemberAdd', 'Example']) assert.ok(help.stdout.includes(part), part);
    writeFileSync(join(init, 'etc/bosun/kubernetes-version'), 'v1.20.0\n');
    const other = await cas();
    writeFileSync(join(worker, 'etc/kubernetes/pki/ca.crt'), other.ca.certPem);
    const [old, pinned] = await Promise.all([run(['init'], init), run(['join'], worker)]);
    assert.match(old.stderr, /Kubernetes version "v1\.20\.0" cannot be installed by bosun/);
    // The CA on disk is not the one the join's pin names.
    assert.equal(pinned.code, 1);
    assert.match(pinned.stderr, new RegExp(`the cluster CA /etc/kubernetes/pki/ca\\.crt \\(${publicKeyPin(other.ca.certPem)}\\) matches none of discovery\\.bootstrapToken\\.caCertHashes \\(${publicKeyPin(certificates.ca.certPem)}\\)`));
    writeFileSync(join(worker, 'etc/kubernetes/pki/ca.crt'), certificates.ca.certPem);
    // No TLS bootstrap yet: the wait times out, naming it.
    const waiting = await run(['join'], worker);
    assert.equal(waiting.code, 1);
    assert.match(waiting.stderr, /timed out waiting for the node agent's TLS bootstrap \(\/etc\/kubernetes\/kubelet\.conf\)/);
    // Once the agent has written its kubeconfig, the worker has joined.
    writeFileSync(join(worker, 'etc/kubernetes/kubelet.conf'), 'apiVersion: v1\nkind: Config\n');
    const joined = await run(['join'], worker);
    assert.equal(joined.code, 0, joined.stderr);
    assert.match(joined.stdout, /\[discovery\] The cluster CA matches the pin sha256:[0-9a-f]{64}; joining through 127\.0\.200\.9:6443 as w-1\n[\s\S]*This node has joined the cluster\.\n$/);
    assert.equal(readFileSync(join(worker, 'run/cluster-api/bootstrap-success.complete'), 'utf8'), 'success\n');
    assert.ok(!existsSync(join(worker, 'etc/kubernetes/manifests')), 'a worker gets no static pods');
  } finally {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('kubeadm.yaml: its documents by kind; another apiVersion is refused', () => {
  const parsed = parseKubeadmConfig('apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterName: wl\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\nnodeRegistration:\n  name: m\n');
  assert.equal(parsed.cluster?.clusterName, 'wl');
  assert.equal(parsed.join?.nodeRegistration?.name, 'm');
  assert.throws(() => parseKubeadmConfig('apiVersion: kubeadm.k8s.io/v1beta1\nkind: InitConfiguration\n'), (e: unknown) => e instanceof KubeadmError && /apiVersion "kubeadm\.k8s\.io\/v1beta1" of InitConfiguration/.test(e.message));
});

test('the static pods bosun kubeadm writes: kubeadm\'s flags with the node\'s name and address, its annotations, etcd\'s initial cluster', () => {
  const input: ControlPlaneInput = { version, clusterName: 'wl', ...network, nodeName: 'cp-2', advertiseAddress: '127.0.151.7', init: true };
  const etcd = etcdPod(input);
  const command = etcd.spec!.containers[0].command!;
  assert.ok(command.includes('--initial-cluster=cp-2=https://127.0.151.7:2380') && command.includes('--name=cp-2') && !command.some((f) => f.startsWith('--initial-cluster-state')));
  assert.equal(etcd.spec!.containers[0].image, 'bosun.local/etcd:3.5.21-0');
  assert.equal(etcd.metadata.annotations?.['kubeadm.kubernetes.io/etcd.advertise-client-urls'], 'https://127.0.151.7:2379');
  const joining = etcdPod({ ...input, init: false, initialCluster: [{ name: 'cp-1', peerURL: 'https://127.0.151.6:2380' }, { name: 'cp-2', peerURL: 'https://127.0.151.7:2380' }] }).spec!.containers[0].command!;
  assert.ok(joining.includes('--initial-cluster=cp-1=https://127.0.151.6:2380,cp-2=https://127.0.151.7:2380') && joining.includes('--initial-cluster-state=existing'));
  const apiserver = apiServerPod(input);
  const flags = apiserver.spec!.containers[0].command!;
  for (const flag of ['--advertise-address=127.0.151.7', '--service-cluster-ip-range=127.190.0.0/16', '--client-ca-file=/etc/kubernetes/pki/ca.crt', '--tls-cert-file=/etc/kubernetes/pki/apiserver.crt', '--etcd-servers=https://127.0.0.1:2379', '--service-account-key-file=/etc/kubernetes/pki/sa.pub']) assert.ok(flags.includes(flag), flag);
  assert.equal(apiserver.metadata.annotations?.['kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint'], '127.0.151.7:6443');
  assert.equal(apiserver.spec!.containers[0].readinessProbe?.httpGet?.host, '127.0.151.7');
  assert.ok(apiserver.spec!.volumes!.some((v) => v.name === 'k8s-certs' && v.hostPath?.path === '/etc/kubernetes/pki'));
  const cm = controllerManagerPod(input).spec!.containers[0].command!;
  assert.ok(cm.includes('--cluster-cidr=127.126.0.0/16') && cm.includes('--cluster-name=wl'));
  assert.ok(!JSON.stringify(parseYaml(JSON.stringify(etcd))).includes('$('), 'no downward-API placeholders left');
});

test('the bootstrap unit: ExecStart, its run-once condition, oneshot', () => {
  const unit = parseOneshotUnit('[Unit]\nConditionPathExists=/etc/kubeadm.sh\n[Service]\nType=oneshot\nExecStart=/etc/kubeadm.sh\n');
  assert.deepEqual(unit, { execStart: '/etc/kubeadm.sh', conditionPathExists: '/etc/kubeadm.sh', oneshot: true });
});
