// `bosun metrics-server`: the resource metrics API (metrics.k8s.io/v1beta1) from the node agents'
// /metrics/resource, served behind the API server's aggregation (src/metrics-server).
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { parseHostPort } from '../common/listen.js';
import { logger } from '../common/log.js';
import { podPath } from '../common/pod-path.js';
import { registerComponent } from '../kube/manager-flags.js';
import { kubeletRequestOptions, servingCertificate } from '../metrics-server/run.js';
import { readRequestHeaderAuth } from '../kube/index.js';
import { Scraper } from '../metrics-server/scraper.js';
import { MetricsApiServer } from '../metrics-server/server.js';

interface Options {
  secureListen: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  metricResolution: string;
  kubeletInsecureTls?: boolean;
  kubeletCertificateAuthority?: string;
}

/** A Go-style duration of seconds or minutes (`15s`, `1m`), in ms. */
function parseResolution(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
  const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'] : NaN;
  if (!(ms >= 1000)) throw new Error(`--metric-resolution is a duration of at least 1s (15s, 1m), got "${text}"`);
  return ms;
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    name: 'metrics-server',
    lease: { namespace: 'openshift-monitoring', name: 'metrics-server' },
    defaults: { leaderElect: false },
    description: 'serve the resource metrics API (metrics.k8s.io/v1beta1: node and pod CPU and memory, for kubectl top) from the kubelets\' /metrics/resource',
    flags: (command) =>
      command
        .option('--secure-listen <host:port>', 'where the HTTPS API listens (behind the APIService v1beta1.metrics.k8s.io)', '0.0.0.0:6443')
        .option('--metric-resolution <duration>', 'how often every node is scraped', '15s')
        .option('--kubelet-insecure-tls', 'do not verify the kubelets\' serving certificates')
        .option('--kubelet-certificate-authority <file>', 'CA of the kubelets\' serving certificates (default: the kubeconfig\'s CA)'),
    help: `
The API (--secure-listen) and /metrics serve the certificate of the shared --tls-cert-file and
--tls-private-key-file (without them, a self-signed one made at start).

Every --metric-resolution it lists the nodes and pods and reads each node's
https://<InternalIP>:<kubelet port>/metrics/resource with its own credentials (a token that may
get nodes/metrics); usage is the rate between the last two reads, so figures appear after two.
Requests come from the API server's aggregator (front-proxy certificate and X-Remote-User, checked
against kube-system/extension-apiserver-authentication) or with a bearer token; both are
authorised with SubjectAccessReviews. Behind the APIService v1beta1.metrics.k8s.io,
\`kubectl top nodes\` and \`bosun adm top pods\` read it.

Example:
  bosun metrics-server --kubeconfig .bosun/kubeconfig --secure-listen 127.0.0.1:6443 --kubelet-insecure-tls`,
    async setup(manager, o) {
      const listen = parseHostPort(o.secureListen, '--secure-listen');
      const resolutionMs = parseResolution(o.metricResolution);
      const caFile = podPath(o.kubeletCertificateAuthority);
      const kc = manager.kubeconfig;
      const clusterCa = kc.getCurrentCluster()?.caData ? Buffer.from(kc.getCurrentCluster()!.caData!, 'base64').toString('utf8') : undefined;
      const log = logger('metrics-server');
      const scraper = new Scraper(manager.client, {
        resolutionMs, log,
        kubeletRequestOptions: kubeletRequestOptions(kc, { insecure: o.kubeletInsecureTls === true, caPem: caFile ? readFileSync(caFile, 'utf8') : clusterCa }),
      });
      const tls = await servingCertificate({ cert: podPath(o.tlsCertFile), key: podPath(o.tlsPrivateKeyFile) }, ['localhost', '127.0.0.1', listen.host, 'metrics-server.openshift-monitoring.svc']);
      const requestHeader = await readRequestHeaderAuth(manager.client);
      if (!requestHeader) log.warn('no request-header CA in kube-system/extension-apiserver-authentication: only bearer tokens are accepted');
      manager.add(scraper, new MetricsApiServer(manager.client, scraper, { ...listen, tls, requestHeader, log }));
    },
  });
}
