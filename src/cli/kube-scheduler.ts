// `bosun kube-scheduler …`: bosun's scheduler (src/cluster/scheduler, as `bosun scheduler` runs it)
// with the flags kubeadm writes into kube-scheduler.yaml; its secure port
// (--bind-address:--secure-port, default 127.0.0.1:10259) serves /livez and /readyz over HTTPS for
// kubeadm's probes. Flags bosun does not need are accepted and named in one log line; unknown
// ones are refused.
import type { Command } from 'commander';
import { machineHost } from '../common/pod-path.js';
import { parseDuration } from '../cluster/node-agent/kubelet-files.js';
import { boolFlag, filePath, ignoredFlags, parseKubeFlags, registerKubeCommand, securePort, serveSecureHealth, type KubeFlag } from './kube-flags.js';

export const KUBE_SCHEDULER_FLAGS: KubeFlag[] = [
  { name: 'kubeconfig', help: 'the kubeconfig it works with (kubeadm\'s scheduler.conf)' },
  { name: 'leader-elect', bool: true, help: 'bind only while holding the Lease kube-system/kube-scheduler (default true)' },
  { name: 'leader-elect-lease-duration', help: 'default 15s' },
  { name: 'leader-elect-renew-deadline', help: 'default 10s' },
  { name: 'leader-elect-retry-period', help: 'default 2s' },
  { name: 'bind-address', help: 'where the secure port serves /livez and /readyz (default 127.0.0.1: the machine\'s own address in a pod)' },
  { name: 'secure-port', help: 'its port (default 10259; 0: none)' },
  { name: 'authentication-kubeconfig', help: '', ignored: true },
  { name: 'authorization-kubeconfig', help: '', ignored: true },
  { name: 'config', help: 'a KubeSchedulerConfiguration (bosun runs the default profile)', ignored: true },
  { name: 'feature-gates', help: '', ignored: true },
  { name: 'profiling', bool: true, help: '', ignored: true },
  { name: 'v', help: 'log verbosity', ignored: true },
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
  const duration = (flag: string, fallback: number) => parseDuration(values.get(flag), fallback);
  const manager = new Manager({
    name: 'kube-scheduler',
    kubeconfig: loadKubeConfig(kubeconfig),
    leaderElection: boolFlag(values, 'leader-elect', true) ? {
      namespace: 'kube-system', name: 'kube-scheduler',
      leaseDurationMs: duration('leader-elect-lease-duration', 15_000), renewDeadlineMs: duration('leader-elect-renew-deadline', 10_000), retryPeriodMs: duration('leader-elect-retry-period', 2_000),
    } : undefined,
    eventSource: DEFAULT_SCHEDULER_NAME,
    handleSignals: true,
  });
  addScheduler(manager, { schedulerName: DEFAULT_SCHEDULER_NAME });
  const closeHealth = secure ? await serveSecureHealth(secure.host, secure.port, () => true) : undefined;
  if (secure) console.error(`bosun kube-scheduler: serving /livez and /readyz on https://${secure.host}:${secure.port}`);
  try {
    await manager.start();
  } finally {
    closeHealth?.();
  }
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
