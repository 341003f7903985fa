// `bosun thanos-querier`: the image bosun.local/thanos-querier — the authorising HTTPS proxy in
// front of Prometheus's HTTP API (src/monitoring/querier-proxy.ts).
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';
import { exitOnSignals } from './signals.js';

interface Options {
  listen: string;
  upstream: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  kubeconfig?: string;
}

export function register(program: Command): void {
  program
    .command('thanos-querier')
    .description("serve Prometheus's HTTP API over HTTPS to callers the API server authenticates and authorises (get prometheuses/api k8s in openshift-monitoring)")
    .requiredOption('--listen <host:port>', 'where to serve HTTPS')
    .option('--upstream <url>', "Prometheus's HTTP address", 'http://127.0.0.1:9090')
    .option('--tls-cert-file <file>', 'the serving certificate (in a pod: the pod\'s path)', '/etc/tls/private/tls.crt')
    .option('--tls-private-key-file <file>', 'its key', '/etc/tls/private/tls.key')
    .option('--kubeconfig <file>', 'how to reach the API server for TokenReviews and SubjectAccessReviews (default: in-cluster)')
    .addHelpText('after', `
A request to /api/v1/… is let through when its bearer token passes a TokenReview and a
SubjectAccessReview for verb get (GET) or create (POST) on prometheuses/api "k8s" in group
monitoring.coreos.com, namespace openshift-monitoring (ClusterRole cluster-monitoring-view);
otherwise 401 or 403. Until the certificate files exist, the proxy waits for them.

Example:
  $ TOKEN=$(kubectl create token prometheus-k8s -n openshift-monitoring)
  $ curl -k -H "Authorization: Bearer $TOKEN" https://<clusterIP>:9091/api/v1/alerts`)
    .action(async (o: Options) => {
      const listen = parseHostPort(o.listen, '--listen');
      const { loadKubeConfig, KubeClient } = await import('../kube/index.js');
      // common/pod-path.ts, not prometheus-runner's mapPodPath: that module brings YAML, which this proxy never reads.
      const { podPath } = await import('../common/pod-path.js');
      const { QuerierProxy } = await import('../monitoring/querier-proxy.js');
      const stopper = new AbortController();
      const proxy = new QuerierProxy({
        client: new KubeClient(loadKubeConfig(o.kubeconfig)), upstream: o.upstream, listen,
        certFile: podPath(o.tlsCertFile), keyFile: podPath(o.tlsPrivateKeyFile), signal: stopper.signal,
      });
      exitOnSignals(() => {
        stopper.abort();
        return proxy.stop();
      });
      await proxy.start();
    });
}
