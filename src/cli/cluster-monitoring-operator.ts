// `bosun cluster-monitoring-operator`: the monitoring operator (src/monitoring/operator.ts) on the
// component manager until SIGTERM, under the Lease openshift-monitoring/cluster-monitoring-operator.
import type { Command } from 'commander';
import { registerComponent, releaseVersionOption } from '../kube/manager-flags.js';

interface Options {
  prometheusBinary: string;
  retention: string;
  alertForOverride?: string;
  scrapeInterval: string;
  evaluationInterval: string;
  releaseVersion?: string;
}

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

export function register(program: Command): void {
  registerComponent<Options>(program, {
    name: 'cluster-monitoring-operator',
    lease: { namespace: 'openshift-monitoring', name: 'cluster-monitoring-operator' },
    description: "run the monitoring operator: Prometheus's configuration from ServiceMonitors and PrometheusRules, Prometheus and thanos-querier as a pod, ClusterOperator/monitoring",
    flags: (command) =>
      command
        .option('--prometheus-binary <path>', 'the Prometheus binary the prometheus-k8s pod runs (Debian\'s package)', '/usr/bin/prometheus')
        .option('--retention <duration>', "how long Prometheus keeps samples", '1d')
        .option('--alert-for-override <duration>', 'TESTS ONLY: shorten every alert\'s `for:` to at most this (e.g. 10s), so that an alert fires in seconds')
        .option('--scrape-interval <duration>', 'the default scrape interval', '30s')
        .option('--evaluation-interval <duration>', 'how often rules are evaluated', '30s')
        .addOption(releaseVersionOption('monitoring')),
    help: `
Leader election: the Lease openshift-monitoring/cluster-monitoring-operator.

Writes, in openshift-monitoring:
  Secret prometheus-k8s                  prometheus.yaml (one scrape job per ServiceMonitor endpoint,
                                         every namespace) with its file_sd target files
  ConfigMap prometheus-k8s-rulefiles-0   one rule file per PrometheusRule
  Deployment prometheus-k8s              bosun prometheus (Debian's /usr/bin/prometheus, port 9090)
                                         and bosun thanos-querier (HTTPS 9091, Service thanos-querier)
and Service/Endpoints kube-system/kubelet (every node's kubelet, for the kubelet ServiceMonitor).
Without the Prometheus binary ClusterOperator/monitoring is Degraded (PrometheusBinaryMissing).

--alert-for-override is for tests only: it rewrites every alert's for: when the rule files are
generated, so that e.g. ClusterOperatorDown fires seconds after an operator stops.

Example:
  $ bosun cluster-monitoring-operator --kubeconfig .bosun/kubeconfig --release-version 1.0.0 &
  $ kubectl get clusteroperator monitoring`,
    async setup(manager, o) {
      for (const [flag, value] of [['--retention', o.retention], ['--scrape-interval', o.scrapeInterval], ['--evaluation-interval', o.evaluationInterval], ['--alert-for-override', o.alertForOverride]] as const) {
        if (value !== undefined && !DURATION.test(value)) throw new Error(`${flag} must be a Prometheus duration such as 30s or 1d, got "${value}"`);
      }
      const { addMonitoringOperator } = await import('../monitoring/operator.js');
      addMonitoringOperator(manager, {
        releaseVersion: o.releaseVersion, prometheusBinary: o.prometheusBinary, retention: o.retention, alertForOverride: o.alertForOverride,
        scrapeInterval: o.scrapeInterval, evaluationInterval: o.evaluationInterval,
      });
    },
  });
}
