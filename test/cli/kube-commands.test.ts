// The kubeadm-facing commands' command lines: kube's flag syntax, unknown flags refused, what
// `bosun etcd` hands etcd on a local machine (paths in the pod's view, the loopback as the
// machine's address), kube-apiserver's plan and its refusals, kube-controller-manager's
// --controllers against bosun's, csrapproving's decisions, and `bosun etcd` without etcd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ignoredFlags, kubeVersion, parseKubeFlags, type KubeFlag } from '../../src/cli/kube-flags.js';
import { mapEtcdFlag, splitEtcdFlags } from '../../src/cli/etcd.js';
import { planKubeApiServer } from '../../src/cli/kube-apiserver.js';
import { chooseControllers } from '../../src/cli/kube-controller-manager.js';
import { kubeletClientApproval } from '../../src/cluster/csr-approver.js';
import { createCertificateRequest } from '../../src/common/pki.js';
import { runBosun } from '../helpers/cli.js';

const FLAGS: KubeFlag[] = [
  { name: 'kubeconfig', help: '' },
  { name: 'leader-elect', bool: true, help: '' },
  { name: 'profiling', bool: true, help: '', ignored: true },
];

/** Runs `fn` with the environment a node agent gives a hostNetwork component. */
function inPod<T>(env: Record<string, string>, fn: () => T): T {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return fn();
  } finally {
    for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

test("kube's flag syntax: --a=b, --a b, --bool, --bool=false; unknown flags and stray words refused", () => {
  const v = parseKubeFlags('x', ['--kubeconfig', '/k', '--leader-elect', '--profiling=false'], FLAGS);
  assert.equal(v.get('kubeconfig'), '/k');
  assert.equal(v.get('leader-elect'), 'true');
  assert.equal(v.get('profiling'), 'false');
  assert.deepEqual(ignoredFlags(v, FLAGS), ['--profiling']);
  assert.equal(parseKubeFlags('x', ['--kubeconfig=/a=b'], FLAGS).get('kubeconfig'), '/a=b');
  assert.throws(() => parseKubeFlags('x', ['--insecure-port=8080'], FLAGS), /x: unknown flag --insecure-port \(bosun x --help lists the flags it takes\)/);
  assert.throws(() => parseKubeFlags('x', ['--kubeconfig'], FLAGS), /--kubeconfig needs a value/);
  assert.throws(() => parseKubeFlags('x', ['--leader-elect=maybe'], FLAGS), /--leader-elect is true or false/);
  assert.throws(() => parseKubeFlags('x', ['stray'], FLAGS), /unexpected argument "stray"/);
});

test("etcd's flags on a local machine: files in the pod's view, loopback URLs on the machine's address, deduplicated", () => {
  assert.deepEqual(splitEtcdFlags(['--name=m1', '--data-dir', '/var/lib/etcd', '--client-cert-auth']), [['name', 'm1'], ['data-dir', '/var/lib/etcd'], ['client-cert-auth', undefined]]);
  inPod({ BOSUN_IN_CLUSTER_ROOT: '/m/rootfs', BOSUN_HOST_IP: '127.0.150.7' }, () => {
    assert.equal(mapEtcdFlag('data-dir', '/var/lib/etcd'), '/m/rootfs/var/lib/etcd');
    assert.equal(mapEtcdFlag('peer-trusted-ca-file', '/etc/kubernetes/pki/etcd/ca.crt'), '/m/rootfs/etc/kubernetes/pki/etcd/ca.crt');
    assert.equal(mapEtcdFlag('listen-client-urls', 'https://127.0.0.1:2379,https://127.0.150.7:2379'), 'https://127.0.150.7:2379');
    assert.equal(mapEtcdFlag('listen-metrics-urls', 'http://127.0.0.1:2381'), 'http://127.0.150.7:2381');
    assert.equal(mapEtcdFlag('initial-cluster', 'a=https://127.0.150.7:2380,b=https://127.0.150.8:2380'), 'a=https://127.0.150.7:2380,b=https://127.0.150.8:2380');
    assert.equal(mapEtcdFlag('name', 'a'), 'a');
  });
  // Outside a pod nothing is mapped.
  assert.equal(mapEtcdFlag('listen-client-urls', 'https://127.0.0.1:2379'), 'https://127.0.0.1:2379');
});

test("kube-apiserver's plan from kubeadm's flags, and its refusals", () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-kas-'));
  try {
    const p = join(root, 'rootfs', 'etc/kubernetes/pki');
    mkdirSync(join(p, 'etcd'), { recursive: true });
    for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'sa.key', 'sa.pub', 'etcd/ca.crt', 'apiserver-etcd-client.crt', 'apiserver-etcd-client.key']) writeFileSync(join(p, f), f);
    const k = '/etc/kubernetes/pki';
    const argv = [
      '--advertise-address=127.0.150.7', '--secure-port=6443', '--etcd-servers=https://127.0.0.1:2379', `--etcd-cafile=${k}/etcd/ca.crt`,
      `--etcd-certfile=${k}/apiserver-etcd-client.crt`, `--etcd-keyfile=${k}/apiserver-etcd-client.key`, `--client-ca-file=${k}/ca.crt`,
      `--tls-cert-file=${k}/apiserver.crt`, `--tls-private-key-file=${k}/apiserver.key`, `--service-account-key-file=${k}/sa.pub`,
      `--service-account-signing-key-file=${k}/sa.key`, '--authorization-mode=Node,RBAC', '--enable-bootstrap-token-auth=true',
    ];
    inPod({ BOSUN_IN_CLUSTER_ROOT: join(root, 'rootfs'), BOSUN_HOST_IP: '127.0.150.7', BOSUN_IMAGE: 'bosun.local/kube-apiserver:v1.33.1' }, () => {
      const plan = planKubeApiServer(argv);
      assert.equal(plan.host, '127.0.150.7');
      assert.deepEqual(plan.advertise, { address: '127.0.150.7', port: 6443 });
      assert.deepEqual(plan.etcd.endpoints, ['https://127.0.150.7:2379']);
      assert.equal(plan.etcd.certFile, join(p, 'apiserver-etcd-client.crt'));
      assert.equal(plan.kubernetesVersion, 'v1.33.1');
      assert.equal(plan.serviceClusterIPRange, '10.96.0.0/12');
      assert.equal(plan.dataDir, join(root, 'rootfs', 'var/lib/kube-apiserver'));
      assert.deepEqual(plan.copies.map(([, to]) => to), ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'sa.key']);
      assert.deepEqual(plan.ignored, ['--service-account-key-file', '--enable-bootstrap-token-auth', '--authorization-mode']);
      assert.throws(() => planKubeApiServer(argv.filter((a) => !a.startsWith('--etcd-servers'))), /--etcd-servers is required/);
      assert.throws(() => planKubeApiServer([...argv, '--bind-address=10.0.0.1']), /loopback addresses only/);
      assert.throws(() => planKubeApiServer(argv.map((a) => a.replace('sa.key', 'nope.key'))), /--service-account-signing-key-file: \/etc\/kubernetes\/pki\/nope.key does not exist/);
    });
    assert.equal(kubeVersion({ BOSUN_IMAGE: 'bosun.local/kube-apiserver:v1.32.4' }), 'v1.32.4');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("kube-controller-manager's --controllers read against bosun's controllers", () => {
  const known = { replicaset: 'replicaset-controller', podgc: 'pod-garbage-collector', csrapproving: 'certificatesigningrequest-approving-controller' };
  assert.deepEqual(chooseControllers('*,bootstrapsigner,tokencleaner', known), { run: ['replicaset', 'podgc', 'csrapproving'], unknown: ['bootstrapsigner', 'tokencleaner'] });
  assert.deepEqual(chooseControllers('*,-pod-garbage-collector', known).run, ['replicaset', 'csrapproving']);
  assert.deepEqual(chooseControllers('csrapproving', known).run, ['csrapproving']);
});

test('csrapproving: kubelet client certificates from bootstrap-token users and from the node itself, nothing else', async () => {
  const { requestPem } = await createCertificateRequest({ commonName: 'system:node:w1', organizations: ['system:nodes'] });
  const csr = (spec: Record<string, unknown>) => ({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'c' }, spec: {
    request: Buffer.from(requestPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], ...spec,
  } });
  assert.equal(kubeletClientApproval(csr({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] })), 'nodeclient');
  assert.equal(kubeletClientApproval(csr({ username: 'system:node:w1', groups: ['system:nodes'] })), 'selfnodeclient');
  assert.equal(kubeletClientApproval(csr({ username: 'system:node:w2', groups: ['system:nodes'] })), undefined);
  assert.equal(kubeletClientApproval(csr({ username: 'alice', groups: ['system:authenticated'] })), undefined);
  assert.equal(kubeletClientApproval(csr({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'], usages: ['digital signature', 'server auth'] })), undefined);
  assert.equal(kubeletClientApproval(csr({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'], signerName: 'kubernetes.io/kubelet-serving' })), undefined);
  const { requestPem: withSans } = await createCertificateRequest({ commonName: 'system:node:w1', organizations: ['system:nodes'] }, ['127.0.0.9']);
  assert.equal(kubeletClientApproval({ ...csr({ username: 'system:node:w1' }), spec: { ...csr({}).spec, username: 'system:node:w1', request: Buffer.from(withSans).toString('base64') } }), undefined);
});

test('bosun etcd without etcd installed says so; unknown kube flags are refused by the commands', { timeout: 60_000 }, async () => {
  const missing = await runBosun(['etcd', '--name=m1'], { env: { BOSUN_ETCD_BINARY: '/nonexistent/etcd' } });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /etcd is not installed: no \/nonexistent\/etcd \(apt-get install etcd-server/);
  const unknown = await runBosun(['kube-scheduler', '--kubeconfig=/x', '--policy-config-file=/p']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /kube-scheduler: unknown flag --policy-config-file/);
});

test('each kubeadm command --help lists the flags it takes, with an example', { timeout: 90_000 }, async () => {
  const wanted: Record<string, string[]> = {
    etcd: ['--data-dir', '--listen-metrics-urls', 'Example'],
    'kube-apiserver': ['--etcd-servers', '--client-ca-file', '--service-account-signing-key-file', '(accepted, ignored)', 'Example'],
    'kube-controller-manager': ['--cluster-signing-cert-file', '--controllers', 'csrapproving', 'Example'],
    'kube-scheduler': ['--kubeconfig', '--bind-address', 'Example'],
  };
  await Promise.all(Object.entries(wanted).map(async ([command, parts]) => {
    const r = await runBosun([command, '--help']);
    assert.equal(r.code, 0, r.stderr);
    for (const part of parts) assert.ok(r.stdout.includes(part), `bosun ${command} --help lacks ${part}:\n${r.stdout}`);
  }));
});

test("kube-controller-manager's and kube-scheduler's secure port answer from the manager's own health and readiness checks", { timeout: 60_000 }, async () => {
  const { Manager } = await import('../../src/kube/manager.js');
  const { loadKubeConfig } = await import('../../src/kube/kubeconfig.js');
  const { startTestApiServer } = await import('../helpers/apiserver.js');
  const { runWithSecureHealth } = await import('../../src/cli/kube-flags.js');
  const { request } = await import('node:https');
  const { createServer } = await import('node:net');
  const api = await startTestApiServer();
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => resolve(p));
    });
  });
  const get = (path: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
  let broken: string | undefined;
  const manager = new Manager({ name: 'kube-scheduler', kubeconfig: loadKubeConfig(api.server.kubeconfigPath), logLevel: 'warn' });
  manager.addHealthCheck('scheduling-loop', () => broken);
  const running = runWithSecureHealth('kube-scheduler', manager, { host: '127.0.0.1', port });
  try {
    const { eventually } = await import('../helpers/eventually.js');
    await eventually('/readyz to answer 200', async () => (await get('/readyz')).status === 200);
    assert.equal((await get('/healthz')).body, 'ok');
    assert.match((await get('/livez?verbose')).body, /\[\+\]scheduling-loop ok\nlivez check passed/);
    broken = 'stuck for 30s';
    const failing = await get('/healthz');
    assert.equal(failing.status, 500);
    assert.match(failing.body, /\[-\]scheduling-loop failed: stuck for 30s\nhealthz check failed/);
    assert.equal((await get('/metrics')).status, 404);
  } finally {
    manager.stop();
    await running;
    await api.stop();
  }
});
