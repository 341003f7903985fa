// `bosun kubeadm init|join --config FILE`: what kubeadm does on a machine at its first boot
// (src/cluster/kubeadm/kubeadm.ts), run by the bootstrap data's /etc/kubeadm.sh between
// preKubeadmCommands and postKubeadmCommands. Paths are the machine's; on a local machine the
// machine root is $BOSUN_IN_CLUSTER_ROOT (or --root) and its address $BOSUN_HOST_IP (or --node-ip),
// which the machine's boot sets.
import type { Command } from 'commander';

interface Options { config: string; root?: string; nodeIp?: string; timeout: string }

const HELP = (phase: 'init' | 'join') => `
Paths (--config, /etc/kubernetes/…) are the machine's, resolved in --root (default
$BOSUN_IN_CLUSTER_ROOT, which a local machine's boot sets to its machine root; else /).
${phase === 'init' ? `
kubeadm init's phases: the leaf certificates from the CAs on disk (apiserver with the node's
address, the endpoint's host and the first Service address among its names,
apiserver-kubelet-client, apiserver-etcd-client, front-proxy-client, etcd server/peer/
healthcheck-client), the kubeconfigs (admin, controller-manager, scheduler, kubelet), etcd as a
new cluster of one member, the control-plane static pods, a wait for the API server, the
ClusterConfiguration in kube-system/kubeadm-config, /run/cluster-api/bootstrap-success.complete.

Example (a local machine's /etc/kubeadm.sh, its output in /var/log/boot.log):
  $ bosun kubeadm init --config /run/kubeadm/kubeadm.yaml
  [init] Using Kubernetes version: v1.33.1; node dev-cp-1 at 127.0.1.5
  [certs] Generating "apiserver" certificate and key (DNS:dev-cp-1, DNS:kubernetes, …, IP Address:127.128.0.1, IP Address:127.0.1.5, IP Address:127.0.200.3)
  …
  [etcd] A new etcd cluster of one member: dev-cp-1=https://127.0.1.5:2380
  [wait-control-plane] Waiting for the API server at https://127.0.1.5:6443 to be healthy (up to 240 s)
  [api-check] The API server at https://127.0.1.5:6443 is healthy
  [upload-config] Stored the ClusterConfiguration in the ConfigMap "kubeadm-config" in kube-system
  Your Kubernetes control-plane has initialized successfully!` : `
kubeadm join's phases: the cluster CA checked against discovery.bootstrapToken.caCertHashes; on a
control-plane machine (JoinConfiguration.controlPlane) the leaf certificates and kubeconfigs, the
etcd members found from the etcd mirror pods in kube-system (through the control-plane
endpoint), MemberAdd for this machine as a learner, its etcd static pod with --initial-cluster =
every member and --initial-cluster-state=existing, a wait for its member and its promotion to a
voting member once in sync, the other static pods and a wait for its API server; on every machine a wait for the node agent's TLS bootstrap (kubelet.conf).

Example (a worker):
  $ bosun kubeadm join --config /run/kubeadm/kubeadm.yaml
  [discovery] The cluster CA matches the pin sha256:5c0…; joining through 127.0.200.3:6443 as dev-md-0-x7k2p
  [kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap
  This node has joined the cluster.`}

Exits non-zero saying what failed (a missing CA, an unknown version, a wait that timed out).`;

async function run(phase: 'init' | 'join', o: Options): Promise<void> {
  const timeoutMs = Number(o.timeout) * 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new Error(`--timeout ${o.timeout}: not a number of seconds`);
  const { kubeadmInit, kubeadmJoin } = await import('../cluster/kubeadm/kubeadm.js');
  const options = {
    config: o.config,
    root: o.root ?? process.env.BOSUN_IN_CLUSTER_ROOT ?? '/',
    nodeIP: o.nodeIp ?? process.env.BOSUN_HOST_IP,
    timeoutMs,
    out: (line: string) => console.log(line),
  };
  await (phase === 'init' ? kubeadmInit(options) : kubeadmJoin(options));
  process.exit(0);
}

export function register(program: Command): void {
  const group = program.command('kubeadm').description('what kubeadm init and kubeadm join do on a machine at its first boot (the bootstrap data\'s /etc/kubeadm.sh runs it)');
  for (const phase of ['init', 'join'] as const) {
    group
      .command(phase)
      .description(phase === 'init' ? 'start a cluster on this machine: certificates, kubeconfigs, a new etcd, the control-plane static pods' : 'join this machine to a cluster: as a control-plane member (etcd MemberAdd, static pods) or a worker')
      .requiredOption('--config <file>', 'kubeadm\'s configuration (kubeadm.k8s.io/v1beta4), as the machine names it', '/run/kubeadm/kubeadm.yaml')
      .option('--root <dir>', 'the machine\'s root on this host (default $BOSUN_IN_CLUSTER_ROOT, else /)')
      .option('--node-ip <address>', 'the machine\'s address (default $BOSUN_HOST_IP, else localAPIEndpoint.advertiseAddress)')
      .option('--timeout <seconds>', 'how long each wait may take', '240')
      .addHelpText('after', HELP(phase))
      .action((o: Options) => run(phase, o));
  }
}
