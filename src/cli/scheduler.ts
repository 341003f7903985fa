// `bosun scheduler`: runs the scheduler (src/cluster/scheduler) against a cluster until SIGTERM,
// leading through the Lease kube-system/kube-scheduler as kube-scheduler does, so that one
// scheduler per master can run and only one binds at a time.
// TODO(h-manager): declare this on the component manager (src/kube/manager.ts) once it lands; it
// then owns kubeconfig, client, informers, events, lease, metrics and signals, and this file
// shrinks to the scheduler's own flags.
import type { Command } from 'commander';
import { setMaxListeners } from 'node:events';
import { DEFAULT_SCHEDULER_NAME } from '../cluster/scheduler/types.js';
import { parseHostPort } from './listen.js';

interface Options {
  kubeconfig?: string;
  schedulerName: string;
  metricsListen?: string;
  leaderElect: boolean;
}

export function register(program: Command): void {
  program
    .command('scheduler')
    .description('run the scheduler: bind pending pods to nodes as kube-scheduler does (filters, spreading, least allocated)')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)')
    .option('--scheduler-name <name>', 'schedule the pods whose spec.schedulerName is this (or unset, for the default)', DEFAULT_SCHEDULER_NAME)
    .option('--metrics-listen <host:port>', 'serve Prometheus metrics on HOST:PORT/metrics (e.g. 127.0.0.1:10259)')
    .option('--no-leader-elect', 'run without the Lease kube-system/kube-scheduler (one instance only)')
    .addHelpText('after', `
What it does, per kube-scheduler's default profile:
  filters   NodeUnschedulable, NodeName, TaintToleration (NoSchedule/NoExecute), NodeAffinity
            (nodeSelector, required terms), NodePorts, NodeResourcesFit (cpu, memory, ephemeral
            storage, extended resources, pod count), PodTopologySpread (DoNotSchedule),
            InterPodAffinity (required affinity and anti-affinity)
  scoring   PodTopologySpread (ScheduleAnyway; hostname and zone by default) x2, TaintToleration
            (PreferNoSchedule) x3, NodeAffinity (preferred terms) x2, NodeResourcesFit
            LeastAllocated x1; ties go to the node whose name sorts first
  binding   POST pods/<name>/binding; a pod that fits nowhere stays Pending with a FailedScheduling
            Event and PodScheduled=False (Unschedulable), and is retried when nodes or pods change

Example (three tainted masters, two workers with 2 cpus each):
  $ bosun scheduler --kubeconfig .bosun/kubeconfig &
  $ kubectl apply -f big.yaml          # a pod requesting 3 cpus
  $ kubectl describe pod big | tail -1
    Warning  FailedScheduling  2s    default-scheduler  0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {node-role.kubernetes.io/master: }.`)
    .action(async (o: Options) => {
      const metricsAddress = o.metricsListen === undefined ? undefined : parseHostPort(o.metricsListen, '--metrics-listen');
      // The machinery loads only when the command runs (not for `bosun --help`).
      const [{ Scheduler }, { KubeClient }, { EventRecorder }, { InformerFactory }, { loadKubeConfig }, { LeaderElector }, { serveMetrics }] = await Promise.all([
        import('../cluster/scheduler/scheduler.js'), import('../kube/client.js'), import('../kube/events.js'), import('../kube/informer.js'),
        import('../kube/kubeconfig.js'), import('../kube/leader-election.js'), import('../kube/metrics.js'),
      ]);
      const kubeconfig = loadKubeConfig(o.kubeconfig);
      const stop = new AbortController();
      setMaxListeners(64, stop.signal);
      process.once('SIGTERM', () => stop.abort());
      process.once('SIGINT', () => stop.abort());
      const metrics = metricsAddress ? await serveMetrics(metricsAddress.port, metricsAddress.host) : undefined;
      const schedule = async (signal: AbortSignal) => {
        const client = new KubeClient(kubeconfig);
        const scheduler = new Scheduler({
          client,
          informers: new InformerFactory(client),
          events: new EventRecorder(client, { component: o.schedulerName }),
          schedulerName: o.schedulerName,
        });
        await scheduler.run(signal);
      };
      try {
        if (!o.leaderElect) await schedule(stop.signal);
        else {
          // kube-scheduler's lease timings (15 s / 10 s / 2 s).
          await new LeaderElector({
            kubeconfig, namespace: 'kube-system', name: 'kube-scheduler', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000,
            signal: stop.signal, onStartedLeading: schedule,
          }).run();
        }
      } finally {
        metrics?.close();
      }
    });
}
