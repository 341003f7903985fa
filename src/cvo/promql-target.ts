// Where the CVO asks its PromQL risk rules, and with what credentials, as OpenShift's CVO does
// (pkg/clusterconditions: --metrics-url, --metrics-ca-bundle-file, --metrics-token-file):
//   URL    https://thanos-querier.openshift-monitoring.svc:9091 (the Service's clusterIP is looked
//          up through the API: the CVO has no cluster DNS);
//   token  the file given, else the kubeconfig's bearer token (in a pod, the in-cluster
//          kubeconfig's is the service-account token; the in-process CVO of `bosun start` runs on
//          the admin kubeconfig), else the service-account token file if there is one;
//   CA     the file the CVO's Deployment mounts ConfigMap openshift-service-ca.crt at
//          (/etc/tls/service-ca/service-ca.crt), else that ConfigMap (key service-ca.crt) in
//          openshift-cluster-version, else ConfigMap openshift-config-managed/service-ca (key
//          ca-bundle.crt) — read through the API, for a CVO that runs outside a pod.
// File paths are the pod's view (podPath). Every rule goes through the throttled cache
// (updates/condition-cache.ts) on the CVO's clock.
import { existsSync, readFileSync } from 'node:fs';
import type { KubeConfigLike } from '../kube/kubeconfig.js';
import { podPath } from '../common/pod-path.js';
import type { Clock } from '../kube/clock.js';
import type { KubeClient } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { ConditionCache } from './updates/condition-cache.js';
import { DEFAULT_CA_FILE, DEFAULT_PROMQL_URL, DEFAULT_TOKEN_FILE, promqlMatcher } from './updates/promql.js';

export interface PromQLSettings {
  /** The PromQL service (default DEFAULT_PROMQL_URL); '' leaves PromQL rules unevaluated (Recommended=Unknown). */
  url?: string;
  /** The CA bundle that verifies it (default DEFAULT_CA_FILE, then the ConfigMaps above). */
  caFile?: string;
  /** The bearer token file (default: the kubeconfig's token, else DEFAULT_TOKEN_FILE if it exists). */
  tokenFile?: string;
}

/** The ConfigMaps tried, in order, when the CA file is not there: [namespace, name, key]. */
export const SERVICE_CA_CONFIGMAPS: [string, string, string][] = [
  ['openshift-cluster-version', 'openshift-service-ca.crt', 'service-ca.crt'],
  ['openshift-config-managed', 'service-ca', 'ca-bundle.crt'],
];

/** The bearer token the kubeconfig sends, if it sends one. */
async function kubeconfigToken(kubeconfig: KubeConfigLike): Promise<string | undefined> {
  const options: { headers: Record<string, string> } = { headers: {} };
  await kubeconfig.applyToHTTPSOptions(options);
  const header = options.headers.Authorization ?? options.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

/** The throttled, cached PromQL rule matcher the CVO evaluates risks with, or undefined when turned off. */
export function clusterPromQLCache(settings: PromQLSettings, client: KubeClient, kubeconfig: KubeConfigLike, clock: Clock): ConditionCache | undefined {
  const url = settings.url ?? DEFAULT_PROMQL_URL;
  if (!url) return undefined;
  const caFile = podPath(settings.caFile ?? DEFAULT_CA_FILE);
  const tokenFile = podPath(settings.tokenFile ?? DEFAULT_TOKEN_FILE);
  const match = promqlMatcher({
    url,
    ca: async () => {
      if (existsSync(caFile)) return readFileSync(caFile, 'utf8');
      for (const [namespace, name, key] of SERVICE_CA_CONFIGMAPS) {
        const pem = (await client.read(resources.configMaps, name, namespace))?.data?.[key];
        if (pem) return pem;
      }
      throw new Error(`no service CA to verify the PromQL service with: ${caFile} does not exist, nor do ConfigMaps ${SERVICE_CA_CONFIGMAPS.map(([ns, n, k]) => `${ns}/${n} (${k})`).join(' or ')}`);
    },
    token: async () => {
      if (settings.tokenFile !== undefined) {
        if (!existsSync(tokenFile)) throw new Error(`the token file ${tokenFile} for the PromQL service does not exist`);
        return readFileSync(tokenFile, 'utf8').trim();
      }
      // A pod's in-cluster kubeconfig reads the service-account token file itself.
      return (await kubeconfigToken(kubeconfig)) ?? (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined);
    },
    serviceIP: async (namespace, name) => (await client.read(resources.services, name, namespace))?.spec?.clusterIP,
  });
  return new ConditionCache((rule) => match(rule.promql?.promql ?? ''), clock);
}
