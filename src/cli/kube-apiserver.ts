// `bosun kube-apiserver …`: bosun's API server (as `bosun apiserver` runs it, on etcd) with the
// flags kubeadm writes into kube-apiserver.yaml. The certificates are kubeadm's: the serving
// certificate from --tls-cert-file/--tls-private-key-file, clients verified against
// --client-ca-file, the service-account key from --service-account-signing-key-file, the
// certificate towards kubelets from --kubelet-client-certificate/--kubelet-client-key, etcd's
// client certificate from --etcd-certfile/--etcd-keyfile. CSRs are signed with the cluster CA: the
// ca.key kubeadm keeps beside ca.crt (--client-ca-file). bosun's server keeps them in a data
// directory of its own (copies, refreshed at every start; with its admin token, kubeconfig and
// audit log): --data-dir, by default /var/lib/kube-apiserver in the pod's view. `/version` reports
// the version of the container's image tag (bosun.local/kube-apiserver:v1.33.1), else
// /etc/bosun/kubernetes-version. Flags bosun does not need are accepted and named in one log line;
// unknown ones are refused. On SIGTERM it stops as kube-apiserver does with
// --shutdown-send-retry-after: the requests in flight finish, every new one is answered 503 with
// Retry-After and `Connection: close` for SHUTDOWN_GRACE_MS or until no connection is left, so that
// clients behind the control plane's load balancer ask again on a new connection, to another server.
import type { Command } from 'commander';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import { machineHost, machineUrl, podPath } from '../common/pod-path.js';
import { COMMON_IGNORED_FLAGS, filePath, ignoredFlags, kubeVersion, parseKubeFlags, registerKubeCommand, type KubeFlag } from './kube-flags.js';
import { exitOnSignals } from './signals.js';

/** How long a stopping kube-apiserver lets its open connections bring one more request (answered 503, Retry-After, Connection: close). */
const SHUTDOWN_GRACE_MS = 3_000;

export const KUBE_APISERVER_FLAGS: KubeFlag[] = [
  { name: 'advertise-address', help: 'the address the `kubernetes` Service names (and, with --bind-address 0.0.0.0 or unset, the one served on)' },
  { name: 'bind-address', help: 'the address to serve on (a loopback address; 0.0.0.0 means the advertise address)' },
  { name: 'secure-port', help: 'the HTTPS port (default 6443)' },
  { name: 'etcd-servers', help: 'etcd client URLs, comma-separated (the loopback is the machine\'s own address)' },
  { name: 'etcd-cafile', help: 'CA of the etcd servers' },
  { name: 'etcd-certfile', help: 'client certificate presented to etcd' },
  { name: 'etcd-keyfile', help: 'its key' },
  { name: 'etcd-prefix', help: 'the etcd key prefix (default /registry)' },
  { name: 'client-ca-file', help: 'CA that client certificates are verified against; its ca.key beside it signs CSRs' },
  { name: 'tls-cert-file', help: 'the serving certificate' },
  { name: 'tls-private-key-file', help: 'its key' },
  { name: 'service-account-signing-key-file', help: 'the key service-account tokens are signed with (kubeadm\'s sa.key)' },
  { name: 'service-account-key-file', help: 'the key tokens are verified with (sa.pub; bosun derives it from the signing key)', ignored: true },
  { name: 'service-account-issuer', help: 'tokens\' issuer (bosun\'s own is used)', ignored: true },
  { name: 'service-cluster-ip-range', help: 'the Service network (default 10.96.0.0/12, kubeadm\'s)' },
  { name: 'kubelet-client-certificate', help: 'the certificate presented to kubelets (logs, exec)' },
  { name: 'kubelet-client-key', help: 'its key' },
  { name: 'kubelet-preferred-address-types', help: 'bosun dials a node\'s InternalIP', ignored: true },
  { name: 'proxy-client-cert-file', help: 'front-proxy client certificate (no aggregated APIs in bosun)', ignored: true },
  { name: 'proxy-client-key-file', help: 'its key', ignored: true },
  { name: 'requestheader-client-ca-file', help: 'front-proxy CA', ignored: true },
  { name: 'requestheader-allowed-names', help: '', ignored: true },
  { name: 'requestheader-extra-headers-prefix', help: '', ignored: true },
  { name: 'requestheader-group-headers', help: '', ignored: true },
  { name: 'requestheader-username-headers', help: '', ignored: true },
  { name: 'enable-bootstrap-token-auth', bool: true, help: 'bootstrap tokens are always accepted by bosun', ignored: true },
  { name: 'authorization-mode', help: 'bosun always authorizes with Node,RBAC', ignored: true },
  { name: 'enable-admission-plugins', help: 'bosun\'s admission (NodeRestriction among it) is built in', ignored: true },
  { name: 'allow-privileged', bool: true, help: '', ignored: true },
  { name: 'runtime-config', help: '', ignored: true },
  { name: 'endpoint-reconciler-type', help: '', ignored: true },
  { name: 'audit-log-path', help: 'bosun audits to <data dir>/audit.log', ignored: true },
  { name: 'audit-policy-file', help: '', ignored: true },
  { name: 'audit-log-maxage', help: '', ignored: true },
  { name: 'audit-log-maxbackup', help: '', ignored: true },
  { name: 'audit-log-maxsize', help: '', ignored: true },
  { name: 'anonymous-auth', bool: true, help: 'bosun serves health and /version to anonymous clients only', ignored: true },
  ...COMMON_IGNORED_FLAGS,
  { name: 'data-dir', help: 'bosun: where its own copies, admin token, kubeconfig and audit log live (default /var/lib/kube-apiserver in the pod\'s view, ./kube-apiserver outside a pod)' },
];

export interface KubeApiServerPlan {
  dataDir: string;
  host: string;
  port: number;
  advertise: { address: string; port: number };
  etcd: { endpoints: string[]; prefix: string; caFile?: string; certFile?: string; keyFile?: string };
  serviceClusterIPRange: string;
  /** Files copied into `<dataDir>/pki` under bosun's names. */
  copies: Array<[from: string, to: string]>;
  kubernetesVersion?: string;
  ignored: string[];
}

/** What a kube-apiserver command line asks for, checked (files must exist). */
export function planKubeApiServer(argv: string[]): KubeApiServerPlan {
  const values = parseKubeFlags('kube-apiserver', argv, KUBE_APISERVER_FLAGS);
  const port = Number(values.get('secure-port') ?? '6443');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--secure-port must be a port number, got "${values.get('secure-port')}"`);
  const advertiseFlag = values.get('advertise-address');
  if (advertiseFlag !== undefined && !isIP(advertiseFlag)) throw new Error(`--advertise-address must be an IP address, got "${advertiseFlag}"`);
  const bind = values.get('bind-address');
  const wanted = machineHost(bind === undefined || bind === '0.0.0.0' || bind === '::' ? advertiseFlag ?? '127.0.0.1' : bind);
  if (!wanted.startsWith('127.')) throw new Error(`bosun serves on loopback addresses only (127.0.0.0/8): --bind-address ${bind ?? '(unset)'} with --advertise-address ${advertiseFlag ?? '(unset)'} asks for ${wanted}`);
  const advertise = { address: machineHost(advertiseFlag ?? wanted), port };
  const etcdServers = values.get('etcd-servers');
  if (!etcdServers) throw new Error('--etcd-servers is required (kube-apiserver keeps its objects in etcd)');
  const endpoints = [...new Set(etcdServers.split(',').map((u) => machineUrl(u.trim())).filter(Boolean))];
  for (const url of endpoints) if (!/^https?:\/\/[^/]+:\d+\/?$/.test(url)) throw new Error(`--etcd-servers takes http(s)://HOST:PORT URLs, comma-separated; got "${url}"`);
  const etcdPrefix = values.get('etcd-prefix') ?? '/registry';
  if (!etcdPrefix.startsWith('/')) throw new Error(`--etcd-prefix must start with "/", got "${etcdPrefix}"`);
  const clientCa = filePath(values, 'client-ca-file', true)!;
  const caKey = join(dirname(clientCa), 'ca.key');
  if (!existsSync(caKey)) throw new Error(`bosun signs CSRs with the cluster CA: the key ${join(dirname(values.get('client-ca-file')!), 'ca.key')} must be beside --client-ca-file, as kubeadm keeps it`);
  const copies: Array<[string, string]> = [
    [clientCa, 'ca.crt'], [caKey, 'ca.key'],
    [filePath(values, 'tls-cert-file', true)!, 'apiserver.crt'], [filePath(values, 'tls-private-key-file', true)!, 'apiserver.key'],
    [filePath(values, 'service-account-signing-key-file', true)!, 'sa.key'],
  ];
  const kubeletCert = filePath(values, 'kubelet-client-certificate');
  const kubeletKey = filePath(values, 'kubelet-client-key');
  if ((kubeletCert === undefined) !== (kubeletKey === undefined)) throw new Error('--kubelet-client-certificate and --kubelet-client-key go together');
  if (kubeletCert && kubeletKey) copies.push([kubeletCert, 'apiserver-kubelet-client.crt'], [kubeletKey, 'apiserver-kubelet-client.key']);
  const etcdCa = filePath(values, 'etcd-cafile');
  const etcdCert = filePath(values, 'etcd-certfile');
  const etcdKey = filePath(values, 'etcd-keyfile');
  if ((etcdCert === undefined) !== (etcdKey === undefined)) throw new Error('--etcd-certfile and --etcd-keyfile go together');
  const version = kubeVersion();
  return {
    dataDir: podPath(values.get('data-dir') ?? (process.env.BOSUN_IN_CLUSTER_ROOT ? '/var/lib/kube-apiserver' : 'kube-apiserver')),
    host: wanted, port, advertise,
    etcd: { endpoints, prefix: etcdPrefix, caFile: etcdCa, certFile: etcdCert, keyFile: etcdKey },
    serviceClusterIPRange: values.get('service-cluster-ip-range') ?? '10.96.0.0/12',
    copies, kubernetesVersion: version,
    ignored: ignoredFlags(values, KUBE_APISERVER_FLAGS),
  };
}

export async function runKubeApiServer(argv: string[]): Promise<void> {
  const plan = planKubeApiServer(argv);
  const { checkServiceCidr } = await import('../apiserver/kinds/service-allocation.js');
  checkServiceCidr(plan.serviceClusterIPRange);
  if (plan.kubernetesVersion) {
    const { versionParts } = await import('../apiserver/handlers/health.js');
    versionParts(plan.kubernetesVersion);
  }
  // bosun's server reads its certificates from <data dir>/pki under these names: kubeadm's, copied.
  const pki = join(plan.dataDir, 'pki');
  mkdirSync(pki, { recursive: true });
  for (const [from, to] of plan.copies) {
    copyFileSync(from, join(pki, to));
  }
  if (plan.ignored.length) console.error(`bosun kube-apiserver: accepted, not needed by bosun: ${plan.ignored.join(' ')}`);
  const { startClusterServer } = await import('../apiserver/cluster-server.js');
  const { server, stop } = await startClusterServer({
    dataDir: plan.dataDir, host: plan.host, port: plan.port, advertise: plan.advertise, etcd: plan.etcd,
    serviceClusterIPRange: plan.serviceClusterIPRange, kubernetesVersion: plan.kubernetesVersion,
    shutdownGraceMs: SHUTDOWN_GRACE_MS,
  });
  exitOnSignals(async (signal) => {
    console.log(`${signal}: shutting down`);
    await stop();
  });
  console.log(`kube-apiserver (bosun${plan.kubernetesVersion ? `, ${plan.kubernetesVersion}` : ''}) listening on ${server.url} (etcd ${plan.etcd.endpoints.join(',')}, prefix ${plan.etcd.prefix})`);
}

export function register(program: Command): void {
  registerKubeCommand(program, {
    name: 'kube-apiserver',
    description: "run bosun's API server with kube-apiserver's flags (kubeadm's kube-apiserver static pod): kubeadm's certificates, etcd over TLS",
    flags: KUBE_APISERVER_FLAGS,
    run: runKubeApiServer,
    help: `
Certificates are kubeadm's (/etc/kubernetes/pki): clients are verified against --client-ca-file,
and CSRs are signed with the ca.key beside it. /version reports the container image's tag
(bosun.local/kube-apiserver:v1.33.1), else /etc/bosun/kubernetes-version. In a pod, paths are read
in the pod's view of its machine root and the loopback is the machine's address.

Example (kubeadm's flags on a machine whose address is 127.0.150.1):
  $ bosun kube-apiserver --advertise-address=127.0.150.1 --secure-port=6443 \\
      --etcd-servers=https://127.0.0.1:2379 --etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt \\
      --etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt --etcd-keyfile=/etc/kubernetes/pki/apiserver-etcd-client.key \\
      --client-ca-file=/etc/kubernetes/pki/ca.crt \\
      --tls-cert-file=/etc/kubernetes/pki/apiserver.crt --tls-private-key-file=/etc/kubernetes/pki/apiserver.key \\
      --service-account-key-file=/etc/kubernetes/pki/sa.pub --service-account-signing-key-file=/etc/kubernetes/pki/sa.key \\
      --service-account-issuer=https://kubernetes.default.svc.cluster.local --service-cluster-ip-range=10.96.0.0/12 \\
      --authorization-mode=Node,RBAC --enable-bootstrap-token-auth=true --allow-privileged=true
  bosun kube-apiserver: accepted, not needed by bosun: --service-account-key-file --service-account-issuer --enable-bootstrap-token-auth --authorization-mode --allow-privileged
  kube-apiserver (bosun, v1.33.1) listening on https://127.0.150.1:6443 (etcd https://127.0.150.1:2379, prefix /registry)
  $ kubectl --kubeconfig admin.conf version
  Client Version: v1.32.4
  Server Version: v1.33.1`,
  });
}

