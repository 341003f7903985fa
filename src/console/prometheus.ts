// Where the console finds the cluster's Prometheus API: thanos-querier, the authorising HTTPS proxy
// the monitoring operator runs (Service openshift-monitoring/thanos-querier, port web 9091; its
// serving certificate from the service CA). The Service's cluster IP is looked up through the API
// (the console has no cluster DNS) and the service CA read from ConfigMap
// openshift-monitoring/serving-certs-ca-bundle (key service-ca.crt) or
// openshift-config-managed/service-ca (key ca-bundle.crt). The answer is kept for a minute; a
// cluster without monitoring gets an error saying so, which the page shows beside its charts.
import { Agent } from 'node:https';
import type { KubeClient } from '../kube/client.js';
import { resources } from '../kube/resources.js';

export type PrometheusTarget = () => Promise<{ url: URL; agent: Agent }>;

const NAMESPACE = 'openshift-monitoring';
const SERVICE = 'thanos-querier';
const CA_CONFIGMAPS: [string, string, string][] = [
  [NAMESPACE, 'serving-certs-ca-bundle', 'service-ca.crt'],
  ['openshift-config-managed', 'service-ca', 'ca-bundle.crt'],
];
const KEEP_MS = 60_000;

export function prometheusTarget(client: KubeClient, now: () => number = Date.now): PrometheusTarget {
  let kept: { at: number; value: { url: URL; agent: Agent } } | undefined;
  return async () => {
    if (kept && now() - kept.at < KEEP_MS) return kept.value;
    const service = await client.read(resources.services, SERVICE, NAMESPACE);
    if (!service) throw new Error(`this cluster runs no Prometheus API: Service ${NAMESPACE}/${SERVICE} does not exist (monitoring is off or not installed)`);
    const ip = service.spec?.clusterIP;
    const port = service.spec?.ports?.find((p) => p.name === 'web')?.port ?? 9091;
    if (!ip || ip === 'None') throw new Error(`Service ${NAMESPACE}/${SERVICE} has no cluster IP`);
    let ca: string | undefined;
    for (const [namespace, name, key] of CA_CONFIGMAPS) {
      ca = (await client.read(resources.configMaps, name, namespace))?.data?.[key];
      if (ca) break;
    }
    if (!ca) throw new Error(`no service CA to verify thanos-querier with: ConfigMaps ${CA_CONFIGMAPS.map(([ns, n, k]) => `${ns}/${n} (${k})`).join(' and ')} have none yet`);
    kept?.value.agent.destroy();
    const value = { url: new URL(`https://${ip}:${port}`), agent: new Agent({ keepAlive: true, ca, servername: `${SERVICE}.${NAMESPACE}.svc` }) };
    kept = { at: now(), value };
    return value;
  };
}
