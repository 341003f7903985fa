// `bosun cluster-version-operator`: runs the CVO against a cluster on the component manager
// until SIGTERM — the shared component flags (kubeconfig, metrics and health endpoints, leader
// election on openshift-cluster-version/version, log level) plus the CVO's own.
import { podPath } from '../common/pod-path.js';
import type { Command } from 'commander';
import { addClusterVersionOperator, CLUSTER_VERSION_OPERATOR } from '../cvo/operator.js';
import { registerComponent } from '../kube/manager-flags.js';
import { SERVICE_CA_CONFIGMAPS } from '../cvo/promql-target.js';
import { DEFAULT_CA_FILE, DEFAULT_PROMQL_URL, DEFAULT_TOKEN_FILE } from '../cvo/updates/promql.js';

export function register(program: Command): void {
  registerComponent<{ releaseStore: string; reconcileInterval: string; metricsUrl: string; metricsCaBundleFile: string; metricsTokenFile?: string }>(program, {
    ...CLUSTER_VERSION_OPERATOR,
    description: 'run the cluster-version operator: apply the release named by ClusterVersion/version and report its status',
    defaults: { metricsListen: '127.0.0.1:9099', kubeconfigHelp: 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)' },
    flags: (command) =>
      command
        .requiredOption('--release-store <dir>', 'the release store the payloads are read from')
        .option('--reconcile-interval <seconds>', 'how often a completed release is applied again', '180')
        .option('--metrics-url <url>', 'the PromQL service conditional-update risks are evaluated against (a <service>.<namespace>.svc host is looked up as the Service\'s clusterIP); "" leaves them Recommended=Unknown', DEFAULT_PROMQL_URL)
        .option('--metrics-ca-bundle-file <file>', `the service CA that verifies it (if missing: ConfigMap ${SERVICE_CA_CONFIGMAPS.map(([ns, n]) => `${ns}/${n}`).join(', then ')})`, DEFAULT_CA_FILE)
        .option('--metrics-token-file <file>', `the bearer token sent to it (default: the kubeconfig's token, i.e. in a pod ${DEFAULT_TOKEN_FILE})`),
    help: `
Leader election: the Lease openshift-cluster-version/version. Metrics (cluster_version,
cluster_operator_up, …) on --metrics-listen, by default https://127.0.0.1:9099/metrics, for a
token the API server authorises (get on /metrics).

Conditional-update risks of type PromQL are instant queries (GET /api/v1/query) to --metrics-url
with the bearer token of --metrics-token-file, verified with --metrics-ca-bundle-file; at most one
query a second, each rule at most hourly (file paths are as the pod sees them).

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
      if (o.metricsUrl) {
        const url = URL.canParse(o.metricsUrl) ? new URL(o.metricsUrl) : undefined;
        if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new Error(`--metrics-url must be an http or https URL, got "${o.metricsUrl}"`);
      }
      const promql = { url: o.metricsUrl, caFile: o.metricsCaBundleFile, tokenFile: o.metricsTokenFile };
      addClusterVersionOperator(manager, { releaseStore: podPath(o.releaseStore), reconcileIntervalMs: interval * 1000, promql });
    },
  });
}
