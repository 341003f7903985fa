// `bosun controller-manager`: runs the workload controllers (ReplicaSet, Deployment, DaemonSet, Job,
// Endpoints, EndpointSlices, pod garbage collection, root CA publisher) against a cluster until
// SIGTERM, as kube-controller-manager runs them.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { runWorkloadControllers, selectControllers, WORKLOAD_CONTROLLERS } from '../cluster/workloads/run.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { serveMetrics } from '../kube/metrics.js';
import { parseHostPort } from './listen.js';

interface Options {
  kubeconfig?: string;
  controllers: string;
  leaderElect: boolean;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  metricsListen: string;
  rootCaFile?: string;
}

export function register(program: Command): void {
  program
    .command('controller-manager')
    .description("run the workload controllers kube-controller-manager runs: ReplicaSet, Deployment, DaemonSet, Job, Endpoints, EndpointSlices, pod GC, root CA publisher")
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)')
    .option('--controllers <list>', `controllers to run: * for all, NAME to enable, -NAME to disable (known: ${Object.keys(WORKLOAD_CONTROLLERS).join(', ')})`, '*')
    .option('--no-leader-elect', 'run without the Lease kube-system/kube-controller-manager (one instance only)')
    .option('--lease-duration <seconds>', 'leader election: how long a Lease not renewed stays taken (kube: 15)', '15')
    .option('--renew-deadline <seconds>', 'leader election: a leader that could not renew for this long stops (kube: 10)', '10')
    .option('--retry-period <seconds>', 'leader election: how often the Lease is renewed or tried (kube: 2)', '2')
    .option('--root-ca-file <file>', 'the CA published to every namespace as ConfigMap kube-root-ca.crt (default: the kubeconfig\'s cluster CA)')
    .option('--metrics-listen <host:port>', 'serve Prometheus metrics (reconcile totals, queue depth) on http://HOST:PORT/metrics; "off" to not serve them', 'off')
    .addHelpText(
      'after',
      `
Example:
  $ bosun controller-manager --kubeconfig .bosun/kubeconfig
  $ kubectl create deployment web --image=bosun.local/echo --replicas=3
  $ kubectl rollout status deployment/web
  deployment "web" successfully rolled out`,
    )
    .action(async (o: Options) => {
      const controllers = selectControllers(o.controllers);
      if (controllers.length === 0) throw new Error(`--controllers "${o.controllers}" leaves no controller to run`);
      const seconds = (text: string, flag: string) => {
        const n = Number(text);
        if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag} must be a positive number of seconds, got "${text}"`);
        return n * 1000;
      };
      const leaderElection = o.leaderElect
        ? { leaseDurationMs: seconds(o.leaseDuration, '--lease-duration'), renewDeadlineMs: seconds(o.renewDeadline, '--renew-deadline'), retryPeriodMs: seconds(o.retryPeriod, '--retry-period') }
        : (false as const);
      if (leaderElection && leaderElection.renewDeadlineMs >= leaderElection.leaseDurationMs) throw new Error('--renew-deadline must be shorter than --lease-duration');
      const metricsListen = o.metricsListen === 'off' ? undefined : parseHostPort(o.metricsListen, '--metrics-listen');
      const kubeconfig = loadKubeConfig(o.kubeconfig);
      const rootCa = o.rootCaFile ? readFileSync(o.rootCaFile, 'utf8') : undefined;
      const stop = new AbortController();
      process.once('SIGTERM', () => stop.abort());
      process.once('SIGINT', () => stop.abort());
      const metrics = metricsListen ? await serveMetrics(metricsListen.port, metricsListen.host) : undefined;
      try {
        await runWorkloadControllers({ kubeconfig, signal: stop.signal, controllers, leaderElection, rootCa });
      } finally {
        metrics?.close();
      }
    });
}
