// `bosun cluster-version-operator`: runs the CVO against a cluster until SIGTERM.
import type { Command } from 'commander';
import { runClusterVersionOperator } from '../cvo/operator.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { parseHostPort } from './listen.js';

export function register(program: Command): void {
  program
    .command('cluster-version-operator')
    .description('run the cluster-version operator: apply the release named by ClusterVersion/version and report its status')
    .requiredOption('--release-store <dir>', 'the release store the payloads are read from')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)')
    .option('--reconcile-interval <seconds>', 'how often a completed release is applied again', '180')
    .option('--metrics-url <url>', 'Prometheus-compatible API to evaluate PromQL update risks against (without it they are Recommended=Unknown)')
    .option('--lease-duration <seconds>', 'leader election: how long a Lease not renewed stays taken (OpenShift: 137)', '137')
    .option('--renew-deadline <seconds>', 'leader election: a leader that could not renew for this long stops applying', '107')
    .option('--retry-period <seconds>', 'leader election: how often the Lease is renewed or tried', '26')
    .option('--metrics-listen <host:port>', 'serve Prometheus metrics (cluster_version, cluster_operator_up, …) on http://HOST:PORT/metrics; "off" to not serve them', '127.0.0.1:9099')
    .addHelpText(
      'after',
      `
Example:
  $ bosun cluster-version-operator --kubeconfig .bosun/kubeconfig --release-store .bosun/releases
  $ kubectl get clusterversion
  NAME      VERSION   AVAILABLE   PROGRESSING   SINCE   STATUS
  version   1.0.0     True        False         5s      Cluster version is 1.0.0
  $ curl -s 127.0.0.1:9099/metrics | grep '^cluster_version{'
  cluster_version{type="cluster",version="",image="",from_version=""} 1795420800
  cluster_version{type="completed",version="1.0.0",image="bosun.local/release@sha256:0bb5…",from_version=""} 1795420807
  …`,
    )
    .action(async (opts: { releaseStore: string; kubeconfig?: string; reconcileInterval: string; metricsUrl?: string; metricsListen: string; leaseDuration: string; renewDeadline: string; retryPeriod: string }) => {
      const seconds = (text: string, flag: string) => {
        const n = Number(text);
        if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag} must be a positive number of seconds, got "${text}"`);
        return n * 1000;
      };
      const leaderElection = { leaseDurationMs: seconds(opts.leaseDuration, '--lease-duration'), renewDeadlineMs: seconds(opts.renewDeadline, '--renew-deadline'), retryPeriodMs: seconds(opts.retryPeriod, '--retry-period') };
      if (leaderElection.renewDeadlineMs >= leaderElection.leaseDurationMs) throw new Error('--renew-deadline must be shorter than --lease-duration');
      const interval = Number(opts.reconcileInterval);
      if (!Number.isFinite(interval) || interval <= 0) throw new Error(`--reconcile-interval must be a positive number of seconds, got "${opts.reconcileInterval}"`);
      const metricsListen = opts.metricsListen === 'off' ? undefined : parseHostPort(opts.metricsListen, '--metrics-listen');
      const kc = loadKubeConfig(opts.kubeconfig);
      const controller = new AbortController();
      process.once('SIGTERM', () => controller.abort());
      process.once('SIGINT', () => controller.abort());
      await runClusterVersionOperator({ kubeconfig: kc, releaseStore: opts.releaseStore, reconcileIntervalMs: interval * 1000, metricsUrl: opts.metricsUrl, metricsListen, leaderElection, signal: controller.signal });
    });
}
