// `bosun apiserver`: runs the embedded Kubernetes-compatible API server in the foreground.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { parseHostPort } from '../common/listen.js';
import type { EtcdStorageOptions } from '../apiserver/storage/etcd.js';
import { checkServiceCidr, DEFAULT_SERVICE_CIDR } from '../apiserver/kinds/service-allocation.js';
import { exitOnSignals } from './signals.js';

interface ApiServerFlags {
  dataDir: string;
  listen: string;
  compactKeep: string;
  etcdServers?: string;
  etcdPrefix: string;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  serviceClusterIpRange: string;
  requestMetrics: string;
  advertise?: string;
}

/** The etcd storage the flags ask for, checked; undefined for SQLite. */
export function etcdOptions(opts: Pick<ApiServerFlags, 'etcdServers' | 'etcdPrefix' | 'etcdCafile' | 'etcdCertfile' | 'etcdKeyfile'>): EtcdStorageOptions | undefined {
  const tlsFlags = [opts.etcdCafile, opts.etcdCertfile, opts.etcdKeyfile].some((f) => f !== undefined);
  if (!opts.etcdServers) {
    if (tlsFlags) throw new Error('--etcd-cafile/--etcd-certfile/--etcd-keyfile need --etcd-servers');
    return undefined;
  }
  const endpoints = opts.etcdServers.split(',').map((u) => u.trim()).filter(Boolean);
  for (const url of endpoints) {
    if (!/^https?:\/\/[^/]+:\d+\/?$/.test(url)) throw new Error(`--etcd-servers takes http(s)://HOST:PORT URLs, comma-separated; got "${url}"`);
  }
  if (endpoints.length === 0) throw new Error('--etcd-servers is empty');
  if ((opts.etcdCertfile === undefined) !== (opts.etcdKeyfile === undefined)) throw new Error('--etcd-certfile and --etcd-keyfile go together');
  if (tlsFlags && opts.etcdCafile === undefined) throw new Error('--etcd-certfile/--etcd-keyfile need --etcd-cafile');
  for (const [flag, file] of [['--etcd-cafile', opts.etcdCafile], ['--etcd-certfile', opts.etcdCertfile], ['--etcd-keyfile', opts.etcdKeyfile]] as const) {
    if (file !== undefined && !existsSync(file)) throw new Error(`${flag}: ${file} does not exist`);
  }
  if (!opts.etcdPrefix.startsWith('/')) throw new Error(`--etcd-prefix must start with "/", got "${opts.etcdPrefix}"`);
  return { endpoints, prefix: opts.etcdPrefix, caFile: opts.etcdCafile, certFile: opts.etcdCertfile, keyFile: opts.etcdKeyfile };
}

export function register(program: Command): void {
  program
    .command('apiserver')
    .description('run the embedded Kubernetes-compatible API server (HTTPS; SQLite storage, or etcd shared by several servers) in the foreground')
    .option('--data-dir <dir>', 'where the database, certificates, token and kubeconfig live', '.bosun')
    .option('--listen <host:port>', 'address to serve on', '127.0.0.1:6443')
    .option('--compact-keep <revisions>', 'revisions kept for watches; older resourceVersions get 410 Expired', '10000')
    .option('--etcd-servers <urls>', 'keep objects in etcd instead of SQLite: client URLs, comma-separated (http(s)://HOST:PORT)')
    .option('--etcd-prefix <prefix>', 'the etcd key prefix objects live under', '/registry')
    .option('--etcd-cafile <file>', 'CA that signed the etcd servers\' certificates (TLS)')
    .option('--etcd-certfile <file>', 'client certificate presented to etcd (TLS)')
    .option('--etcd-keyfile <file>', 'key of the client certificate presented to etcd (TLS)')
    .option('--service-cluster-ip-range <cidr>', "the network Services' cluster IPs come from (/12 to /28); the `kubernetes` Service in default gets its first address", DEFAULT_SERVICE_CIDR)
    .option('--advertise <host:port>', 'the address the `kubernetes` Service names as its endpoint (default: --listen); several servers behind one balancer advertise the balancer')
    .option('--request-metrics <bool>', 'record the request metrics served at /metrics (false only to measure their cost)', 'true')
    .addHelpText(
      'after',
      `
On first start it creates a CA, a serving certificate and an admin token in DIR/pki and writes
DIR/kubeconfig; later starts reuse them. RBAC is enforced (the admin token is system:masters),
ServiceAccount tokens come from \`kubectl create token\`, evictions respect PodDisruptionBudgets,
owner references are garbage-collected, and every change is audited to DIR/audit.log. Use it with the real kubectl:

  $ bosun apiserver --data-dir .bosun
  API server listening on https://127.0.0.1:6443
  kubeconfig: .bosun/kubeconfig
  $ kubectl --kubeconfig .bosun/kubeconfig get namespaces

With --etcd-servers the objects live in etcd (keys PREFIX/<group>/<resource>/<namespace>/<name>,
resourceVersion = etcd's mod revision) and several API servers can share them; each keeps its own
data directory for certificates and the audit log, so copy DIR/pki from the first to the others
(the same CA, serving certificate and admin token behind one address), and with --advertise
have the \`kubernetes\` Service name that address rather than their own:

  $ bosun apiserver --data-dir .bosun-a --listen 127.0.0.1:6443 --etcd-servers http://127.0.0.1:2379
  API server listening on https://127.0.0.1:6443 (etcd http://127.0.0.1:2379, prefix /registry)
  kubeconfig: .bosun-a/kubeconfig

Cluster IPs come from --service-cluster-ip-range (OpenShift's 172.30.0.0/16 unless said); the
\`kubernetes\` Service in default takes its first address and names this server as its endpoint.
\`bosun start\` passes 127.30.0.0/16, a loopback network its node agents can listen on:

  $ bosun apiserver --data-dir .bosun --service-cluster-ip-range 127.30.0.0/16
  API server listening on https://127.0.0.1:6443
  kubeconfig: .bosun/kubeconfig
  $ kubectl --kubeconfig .bosun/kubeconfig get service kubernetes
  NAME         TYPE        CLUSTER-IP    EXTERNAL-IP   PORT(S)   AGE
  kubernetes   ClusterIP   127.30.0.1    <none>        443/TCP   5s
`,
    )
    .action(async (opts: ApiServerFlags) => {
      const { host, port } = parseHostPort(opts.listen, '--listen');
      const compactKeep = Number(opts.compactKeep);
      if (!Number.isInteger(compactKeep) || compactKeep < 1) throw new Error(`--compact-keep must be a positive integer, got "${opts.compactKeep}"`);
      const { startClusterServer } = await import('../apiserver/cluster-server.js');
      const { secureDataDir } = await import('../common/private-files.js');
      // Its state, keys and kubeconfig: private to this user, what others could read tightened or refused.
      secureDataDir(opts.dataDir);
      const etcd = etcdOptions(opts);
      checkServiceCidr(opts.serviceClusterIpRange);
      if (opts.requestMetrics !== 'true' && opts.requestMetrics !== 'false') throw new Error(`--request-metrics is true or false, got "${opts.requestMetrics}"`);
      const requestMetrics = opts.requestMetrics === 'true';
      const advertise = opts.advertise === undefined ? undefined : (({ host: address, port: p }) => ({ address, port: p }))(parseHostPort(opts.advertise, '--advertise'));
      const { server, stop } = await startClusterServer({ dataDir: opts.dataDir, host, port, compactKeep, etcd, serviceClusterIPRange: opts.serviceClusterIpRange, requestMetrics, advertise });
      exitOnSignals(async (signal) => {
        console.log(`${signal}: shutting down`);
        await stop();
      });
      console.log(`API server listening on ${server.url}${etcd ? ` (etcd ${etcd.endpoints.join(',')}, prefix ${etcd.prefix})` : ''}`);
      console.log(`kubeconfig: ${server.kubeconfigPath}`);
    });
}
