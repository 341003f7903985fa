// `bosun cluster-version-operator`: runs the CVO against a cluster on the component manager
// until SIGTERM — the shared component flags (kubeconfig, metrics and health endpoints, leader
// election on openshift-cluster-version/version, log level) plus the CVO's own.
import { podPath } from '../common/pod-path.js';
import type { Command } from 'commander';
import { addClusterVersionOperator, CLUSTER_VERSION_OPERATOR } from '../cvo/operator.js';
import { registerComponent } from '../kube/manager-flags.js';

export function register(program: Command): void {
  registerComponent<{ releaseStore: string; reconcileInterval: string; metricsUrl?: string }>(program, {
    ...CLUSTER_VERSION_OPERATOR,
    description: 'run the cluster-version operator: apply the release named by ClusterVersion/version and report its status',
    defaults: { metricsListen: '127.0.0.1:9099', kubeconfigHelp: 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)' },
    flags: (command) =>
      command
        .requiredOption('--release-store <dir>', 'the release store the payloads are read from')
        .option('--reconcile-interval <seconds>', 'how often a completed release is applied again', '180')
        .option('--metrics-url <url>', 'Prometheus-compatible API to evaluate PromQL update risks against (without it they are Recommended=Unknown)'),
    help: `
Leader election: the Lease openshift-cluster-version/version. Metrics (cluster_version,
cluster_operator_up, …) on --metrics-listen, by default https://127.0.0.1:9099/metrics, for a
token the API server authorises (get on /metrics).

Example:
  $ bosun cluster-version-operator --kubeconfig .bosun/kubeconfig --release-store .bosun/releases
  $ kubectl get clusterversion
  NAME      VERSION   AVAILABLE   PROGRESSING   SINCE   STATUS
  version   1.0.0     True        False         5s      Cluster version is 1.0.0
  $ curl -sk -H "Authorization: Bearer $(kubectl create token prometheus-k8s -n openshift-monitoring)" https://127.0.0.1:9099/metrics | grep '^cluster_version{'
  cluster_version{type="cluster",version="",image="",from_version=""} 1795420800
  cluster_version{type="completed",version="1.0.0",image="bosun.local/release@sha256:0bb5…",from_version=""} 1795420807
  …`,
    setup(manager, o) {
      const interval = Number(o.reconcileInterval);
      if (!Number.isFinite(interval) || interval <= 0) throw new Error(`--reconcile-interval must be a positive number of seconds, got "${o.reconcileInterval}"`);
      addClusterVersionOperator(manager, { releaseStore: podPath(o.releaseStore), reconcileIntervalMs: interval * 1000, metricsUrl: o.metricsUrl });
    },
  });
}
