// `bosun scheduler`: the scheduler (src/cluster/scheduler) on the component manager, until
// SIGTERM — leading through the Lease kube-system/kube-scheduler with kube-scheduler's lease
// timings, so one scheduler per master can run and only one binds at a time.
import type { Command } from 'commander';
import { registerComponent } from '../kube/manager-flags.js';
import { DEFAULT_SCHEDULER_NAME } from '../cluster/scheduler/types.js';

export function register(program: Command): void {
  registerComponent<{ schedulerName: string }>(program, {
    name: 'scheduler',
    lease: { namespace: 'kube-system', name: 'kube-scheduler' },
    eventSource: DEFAULT_SCHEDULER_NAME,
    description: 'run the scheduler: bind pending pods to nodes as kube-scheduler does (filters, spreading, least allocated)',
    // kube-scheduler's leader-election defaults (15 s / 10 s / 2 s).
    defaults: { leaseDuration: 15, renewDeadline: 10, retryPeriod: 2 },
    flags: (command) => command.option('--scheduler-name <name>', 'schedule the pods whose spec.schedulerName is this (or unset, for the default)', DEFAULT_SCHEDULER_NAME),
    help: `
Leader election: the Lease kube-system/kube-scheduler.

What it does, per kube-scheduler's default profile:
  queue     one pod at a time, higher spec.priority (its PriorityClass's) first
  filters   NodeUnschedulable, NodeName, TaintToleration (NoSchedule/NoExecute), NodeAffinity
            (nodeSelector, required terms), NodePorts, NodeResourcesFit (cpu, memory, ephemeral
            storage, extended resources, pod count), PodTopologySpread (DoNotSchedule),
            InterPodAffinity (required affinity and anti-affinity)
  scoring   PodTopologySpread (ScheduleAnyway; hostname and zone by default) x2, TaintToleration
            (PreferNoSchedule) x3, NodeAffinity (preferred terms) x2, InterPodAffinity (preferred
            terms, both ways) x2, NodeResourcesFit LeastAllocated x1, BalancedAllocation x1;
            ties go to the node whose name sorts first
  binding   POST pods/<name>/binding; a pod that fits nowhere stays Pending with a FailedScheduling
            Event and PodScheduled=False (Unschedulable), and is retried when nodes or pods change
  preemption DefaultPreemption: pods of lower priority deleted where that makes room (fewest
            PodDisruptionBudget violations first), the pod nominated there (status.nominatedNodeName);
            not for preemptionPolicy Never

Example (three tainted masters, two workers with 2 cpus each):
  $ bosun scheduler --kubeconfig .bosun/kubeconfig --metrics-listen 127.0.0.1:10259 &
  $ kubectl apply -f big.yaml          # a pod requesting 3 cpus
  $ kubectl describe pod big | tail -1
    Warning  FailedScheduling  2s    default-scheduler  0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {node-role.kubernetes.io/master: }. preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.`,
    async setup(manager, o) {
      // The scheduler's code loads only when the command runs (not for `bosun --help`).
      const { addScheduler } = await import('../cluster/scheduler/scheduler.js');
      addScheduler(manager, { schedulerName: o.schedulerName });
    },
  });
}
