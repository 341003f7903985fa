// `bosun kube-scheduler …`: bosun's scheduler (src/cluster/scheduler, as `bosun scheduler` runs it)
// with the flags kubeadm writes into kube-scheduler.yaml; its secure port
// (--bind-address:--secure-port, default 127.0.0.1:10259) serves /livez and /readyz over HTTPS for
// kubeadm's probes. Flags bosun does not need are accepted and named in one log line; unknown
// ones are refused.
import type { Command } from 'commander';
import { machineHost } from '../common/pod-path.js';
import { COMMON_IGNORED_FLAGS, LEADER_ELECTION_FLAGS, filePath, ignoredFlags, leaderElection, parseKubeFlags, registerKubeCommand, securePort, runWithSecureHealth, type KubeFlag } from './kube-flags.js';

export const KUBE_SCHEDULER_FLAGS: KubeFlag[] = [
  { name: 'kubeconfig', help: 'the kubeconfig it works with (kubeadm\'s scheduler.conf)' },
  ...LEADER_ELECTION_FLAGS,
  { name: 'bind-address', help: 'where the secure port serves /livez and /readyz (default 127.0.0.1: the machine\'s own address in a pod)' },
  { name: 'secure-port', help: 'its port (default 10259; 0: none)' },
  { name: 'authentication-kubeconfig', help: '', ignored: true },
  { name: 'authorization-kubeconfig', help: '', ignored: true },
  { name: 'config', help: 'a KubeSchedulerConfiguration (bosun runs the default profile)', ignored: true },
  ...COMMON_IGNORED_FLAGS,
];

export async function runKubeScheduler(argv: string[]): Promise<void> {
  const values = parseKubeFlags('kube-scheduler', argv, KUBE_SCHEDULER_FLAGS);
  const kubeconfig = filePath(values, 'kubeconfig', true)!;
  const secure = securePort(values, 10259, machineHost);
  const ignored = ignoredFlags(values, KUBE_SCHEDULER_FLAGS);
  if (ignored.length) console.error(`bosun kube-scheduler: accepted, not needed by bosun: ${ignored.join(' ')}`);
  const { Manager } = await import('../kube/manager.js');
  const { loadKubeConfig } = await import('../kube/index.js');
  const { addScheduler } = await import('../cluster/scheduler/scheduler.js');
  const { DEFAULT_SCHEDULER_NAME } = await import('../cluster/scheduler/types.js');
  const manager = new Manager({
    name: 'kube-scheduler',
    kubeconfig: loadKubeConfig(kubeconfig),
    leaderElection: leaderElection(values, 'kube-scheduler'),
    eventSource: DEFAULT_SCHEDULER_NAME,
    handleSignals: true,
  });
  addScheduler(manager, { schedulerName: DEFAULT_SCHEDULER_NAME });
  await runWithSecureHealth('kube-scheduler', manager, secure);
}

export function register(program: Command): void {
  registerKubeCommand(program, {
    name: 'kube-scheduler',
    description: "run bosun's scheduler with kube-scheduler's flags (kubeadm's static pod)",
    flags: KUBE_SCHEDULER_FLAGS,
    run: runKubeScheduler,
    help: `
Example (kubeadm's flags):
  $ bosun kube-scheduler --authentication-kubeconfig=/etc/kubernetes/scheduler.conf \\
      --authorization-kubeconfig=/etc/kubernetes/scheduler.conf --bind-address=127.0.0.1 \\
      --kubeconfig=/etc/kubernetes/scheduler.conf --leader-elect=true
  bosun kube-scheduler: accepted, not needed by bosun: --authentication-kubeconfig --authorization-kubeconfig
  bosun kube-scheduler: serving /livez and /readyz on https://127.0.0.1:10259`,
  });
}
