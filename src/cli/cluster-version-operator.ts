// `bosun cluster-version-operator`: runs the CVO against a cluster until SIGTERM.
import type { Command } from 'commander';
import * as k8s from '@kubernetes/client-node';
import { runClusterVersionOperator } from '../cvo/operator.js';

export function register(program: Command): void {
  program
    .command('cluster-version-operator')
    .description('run the cluster-version operator: apply the release named by ClusterVersion/version and report its status')
    .requiredOption('--release-store <dir>', 'the release store the payloads are read from')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)')
    .option('--reconcile-interval <seconds>', 'how often a completed release is applied again', '180')
    .option('--metrics-url <url>', 'Prometheus-compatible API to evaluate PromQL update risks against (without it they are Recommended=Unknown)')
    .addHelpText(
      'after',
      `
Example:
  $ bosun cluster-version-operator --kubeconfig .bosun/kubeconfig --release-store .bosun/releases
  $ kubectl get clusterversion
  NAME      VERSION   AVAILABLE   PROGRESSING   SINCE   STATUS
  version   1.0.0     True        False         5s      Cluster version is 1.0.0`,
    )
    .action(async (opts: { releaseStore: string; kubeconfig?: string; reconcileInterval: string; metricsUrl?: string }) => {
      const interval = Number(opts.reconcileInterval);
      if (!Number.isFinite(interval) || interval <= 0) throw new Error(`--reconcile-interval must be a positive number of seconds, got "${opts.reconcileInterval}"`);
      const kc = new k8s.KubeConfig();
      if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
      else kc.loadFromDefault();
      const controller = new AbortController();
      process.once('SIGTERM', () => controller.abort());
      process.once('SIGINT', () => controller.abort());
      await runClusterVersionOperator({ kubeconfig: kc, releaseStore: opts.releaseStore, reconcileIntervalMs: interval * 1000, metricsUrl: opts.metricsUrl, signal: controller.signal });
    });
}
