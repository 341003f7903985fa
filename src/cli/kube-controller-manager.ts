// `bosun kube-controller-manager …`: bosun's controller-manager (the workload controllers of
// `bosun controller-manager`) with the flags kubeadm writes into kube-controller-manager.yaml,
// plus csrapproving — kubelet client certificates of bootstrap-token users and node renewals
// approved, as a cluster without a machine approver needs (the API server signs them with the
// cluster CA, kubeadm's ca.crt/ca.key, the same --cluster-signing-* names). Its secure port
// (--bind-address:--secure-port, default 127.0.0.1:10257) serves /healthz over HTTPS for kubeadm's
// probe. Flags bosun does not need are accepted and named in one log line; unknown ones refused.
import type { Command } from 'commander';
import { machineHost } from '../common/pod-path.js';
import { COMMON_IGNORED_FLAGS, LEADER_ELECTION_FLAGS, filePath, ignoredFlags, leaderElection, parseKubeFlags, registerKubeCommand, securePort, runWithSecureHealth, type KubeFlag } from './kube-flags.js';
import { parseDuration } from '../cluster/node-agent/kubelet-files.js';

export const KUBE_CONTROLLER_MANAGER_FLAGS: KubeFlag[] = [
  { name: 'kubeconfig', help: 'the kubeconfig it works with (kubeadm\'s controller-manager.conf)' },
  { name: 'controllers', help: 'controllers: * for all, NAME, -NAME (bosun runs its workload controllers and csrapproving; others are named in a log line)' },
  ...LEADER_ELECTION_FLAGS,
  { name: 'bind-address', help: 'where the secure port serves /healthz (default 127.0.0.1: the machine\'s own address in a pod)' },
  { name: 'secure-port', help: 'its port (default 10257; 0: none)' },
  { name: 'root-ca-file', help: 'the CA published to every namespace as kube-root-ca.crt' },
  { name: 'cluster-signing-cert-file', help: 'the CA kubelet certificates are signed with (checked; the API server signs with it)' },
  { name: 'cluster-signing-key-file', help: 'its key (checked)' },
  { name: 'node-monitor-grace-period', help: 'a silent node goes NotReady after this (default 40s)' },
  { name: 'authentication-kubeconfig', help: '', ignored: true },
  { name: 'authorization-kubeconfig', help: '', ignored: true },
  { name: 'client-ca-file', help: '', ignored: true },
  { name: 'requestheader-client-ca-file', help: '', ignored: true },
  { name: 'allocate-node-cidrs', bool: true, help: 'nodes pick their pod CIDR on a local machine', ignored: true },
  { name: 'cluster-cidr', help: 'nodes pick their pod CIDR on a local machine', ignored: true },
  { name: 'node-cidr-mask-size', help: '', ignored: true },
  { name: 'cluster-name', help: '', ignored: true },
  { name: 'service-cluster-ip-range', help: 'the API server allocates cluster IPs', ignored: true },
  { name: 'service-account-private-key-file', help: 'the API server signs tokens', ignored: true },
  { name: 'use-service-account-credentials', bool: true, help: '', ignored: true },
  { name: 'cluster-signing-duration', help: '', ignored: true },
  ...COMMON_IGNORED_FLAGS,
];

/** kube's --controllers list read against bosun's controllers: what runs, and the names bosun has no controller for. Pure. */
export function chooseControllers(spec: string, known: Record<string, string>): { run: string[]; unknown: string[] } {
  // `known`: bosun's name → kube's long name (replicaset → replicaset-controller).
  const byAnyName = new Map<string, string>();
  for (const [name, long] of Object.entries(known)) byAnyName.set(name, name).set(long, name);
  const chosen = new Set<string>();
  const unknown: string[] = [];
  const items = spec.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.includes('*')) for (const name of Object.keys(known)) chosen.add(name);
  for (const item of items) {
    if (item === '*') continue;
    const name = byAnyName.get(item.replace(/^-/, ''));
    if (!name) {
      unknown.push(item);
      continue;
    }
    if (item.startsWith('-')) chosen.delete(name);
    else chosen.add(name);
  }
  return { run: Object.keys(known).filter((n) => chosen.has(n)), unknown };
}

export async function runKubeControllerManager(argv: string[]): Promise<void> {
  const values = parseKubeFlags('kube-controller-manager', argv, KUBE_CONTROLLER_MANAGER_FLAGS);
  const kubeconfig = filePath(values, 'kubeconfig', true)!;
  const rootCa = filePath(values, 'root-ca-file');
  filePath(values, 'cluster-signing-cert-file');
  filePath(values, 'cluster-signing-key-file');
  const grace = parseDuration(values.get('node-monitor-grace-period') ?? '40s', NaN);
  if (!(grace > 0)) throw new Error(`--node-monitor-grace-period is a duration such as 40s, got "${values.get('node-monitor-grace-period')}"`);
  const secure = securePort(values, 10257, machineHost);
  const { WORKLOAD_CONTROLLERS, addWorkloadControllers } = await import('../cluster/workloads/run.js');
  type Name = keyof typeof WORKLOAD_CONTROLLERS;
  const known: Record<string, string> = { ...Object.fromEntries(Object.entries(WORKLOAD_CONTROLLERS).map(([n, c]) => [n, c.component])), csrapproving: 'certificatesigningrequest-approving-controller' };
  const { run, unknown } = chooseControllers(values.get('controllers') ?? '*', known);
  const ignored = ignoredFlags(values, KUBE_CONTROLLER_MANAGER_FLAGS);
  if (ignored.length) console.error(`bosun kube-controller-manager: accepted, not needed by bosun: ${ignored.join(' ')}`);
  if (unknown.length) console.error(`bosun kube-controller-manager: bosun has no controller ${unknown.join(', ')}; running ${run.join(', ')}`);
  const { readFileSync } = await import('node:fs');
  const { Manager } = await import('../kube/manager.js');
  const { loadKubeConfig } = await import('../kube/index.js');
  const { csrApprover } = await import('../cluster/csr-approver.js');
  const manager = new Manager({
    name: 'kube-controller-manager',
    kubeconfig: loadKubeConfig(kubeconfig),
    leaderElection: leaderElection(values, 'kube-controller-manager'),
    eventSource: 'kube-controller-manager',
    handleSignals: true,
  });
  const workload = run.filter((n): n is Name => n in WORKLOAD_CONTROLLERS);
  if (workload.length) addWorkloadControllers(manager, { controllers: workload, rootCa: rootCa ? readFileSync(rootCa, 'utf8') : undefined, nodeLifecycle: { gracePeriodMs: grace } });
  if (run.includes('csrapproving')) manager.add(csrApprover({ client: manager.client }));
  await runWithSecureHealth('kube-controller-manager', manager, secure);
}

export function register(program: Command): void {
  registerKubeCommand(program, {
    name: 'kube-controller-manager',
    description: "run bosun's controller-manager with kube-controller-manager's flags (kubeadm's static pod), approving kubelet client certificates",
    flags: KUBE_CONTROLLER_MANAGER_FLAGS,
    run: runKubeControllerManager,
    help: `
Runs bosun's workload controllers (replicaset, deployment, daemonset, job, endpoint, endpointslice,
nodelifecycle, podgc, root-ca-cert-publisher, persistentvolume-binder, pvc-protection,
pv-protection, local-path-provisioner) and csrapproving: a kubelet client certificate
request (system:node:<name>, system:nodes, client auth) from a bootstrap-token user or from the
node itself is approved, and the API server signs it with the cluster CA.

Example (kubeadm's flags):
  $ bosun kube-controller-manager --kubeconfig=/etc/kubernetes/controller-manager.conf \\
      --authentication-kubeconfig=/etc/kubernetes/controller-manager.conf \\
      --authorization-kubeconfig=/etc/kubernetes/controller-manager.conf --bind-address=127.0.0.1 \\
      --client-ca-file=/etc/kubernetes/pki/ca.crt --cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt \\
      --cluster-signing-key-file=/etc/kubernetes/pki/ca.key --controllers=*,bootstrapsigner,tokencleaner \\
      --leader-elect=true --root-ca-file=/etc/kubernetes/pki/ca.crt --use-service-account-credentials=true
  bosun kube-controller-manager: accepted, not needed by bosun: --authentication-kubeconfig --authorization-kubeconfig --client-ca-file --use-service-account-credentials
  bosun kube-controller-manager: bosun has no controller bootstrapsigner, tokencleaner; running replicaset, deployment, daemonset, job, endpoint, endpointslice, nodelifecycle, podgc, root-ca-cert-publisher, csrapproving
  bosun kube-controller-manager: serving /healthz on https://127.0.0.1:10257`,
  });
}
