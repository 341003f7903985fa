// `bosun adm alerts`: the firing alerts of the cluster's Prometheus, read from thanos-querier's
// /api/v1/alerts with the kubeconfig's bearer token. The Service openshift-monitoring/thanos-querier
// is found through the API (no cluster DNS on the host): its cluster IP on the loopback service
// network, where the node agents proxy Services, and its port `web`; the certificate is checked
// against the service CA bundle (ConfigMap openshift-monitoring/serving-certs-ca-bundle) for the
// name thanos-querier.openshift-monitoring.svc.
import type { Command } from 'commander';
import { request } from 'node:https';
import { admGroup } from './adm.js';

interface Options {
  kubeconfig?: string;
  pending?: boolean;
  insecureSkipTlsVerify?: boolean;
  timeout: string;
}

export function register(program: Command): void {
  admGroup(program)
    .command('alerts')
    .description("list the cluster's firing alerts (Prometheus, through thanos-querier)")
    .option('--kubeconfig <file>', 'the kubeconfig whose bearer token is used (default: $KUBECONFIG, ~/.kube/config)')
    .option('--pending', 'also list alerts that are pending (their for: not yet elapsed)')
    .option('--insecure-skip-tls-verify', "do not check thanos-querier's certificate")
    .option('--timeout <seconds>', 'how long to wait for the answer', '10')
    .addHelpText('after', `
The caller needs get on prometheuses/api "k8s" (monitoring.coreos.com) in openshift-monitoring,
as ClusterRole cluster-monitoring-view grants; the local cluster's admin has it.

Example:
  $ bosun adm alerts
  NAME       SEVERITY   STATE    SINCE   MESSAGE
  Watchdog   none       firing   12m     An alert that should always be firing to certify that Alertmanager is working properly.`)
    .action(async (o: Options) => {
      const timeoutMs = Number(o.timeout) * 1000;
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new Error(`--timeout must be seconds, got "${o.timeout}"`);
      const { KubeClient, loadKubeConfig, resources } = await import('../kube/index.js');
      const { alertsOf, alertsTable } = await import('../monitoring/alerts-table.js');
      const { MONITORING_NAMESPACE, QUERIER_SERVICE, SERVING_CA_CONFIGMAP } = await import('../monitoring/names.js');
      const kc = loadKubeConfig(o.kubeconfig);
      const token = kc.getCurrentUser()?.token;
      if (!token) throw new Error('the kubeconfig\'s user has no bearer token, which thanos-querier needs (use the local cluster\'s admin kubeconfig, or a token from `kubectl create token`)');
      const client = new KubeClient(kc);
      const service = await client.read(resources.services, QUERIER_SERVICE, MONITORING_NAMESPACE);
      if (!service) throw new Error(`Service ${MONITORING_NAMESPACE}/${QUERIER_SERVICE} does not exist: is monitoring running? (kubectl get clusteroperator monitoring)`);
      const ip = service.spec?.clusterIP;
      const port = service.spec?.ports?.find((p) => p.name === 'web')?.port;
      if (!ip || ip === 'None' || !port) throw new Error(`Service ${MONITORING_NAMESPACE}/${QUERIER_SERVICE} has no cluster IP or no port "web"`);
      let ca: string | undefined;
      if (!o.insecureSkipTlsVerify) {
        ca = (await client.read(resources.configMaps, SERVING_CA_CONFIGMAP, MONITORING_NAMESPACE))?.data?.['service-ca.crt'];
        if (!ca) throw new Error(`ConfigMap ${MONITORING_NAMESPACE}/${SERVING_CA_CONFIGMAP} has no service-ca.crt yet (the service CA injects it); pass --insecure-skip-tls-verify to skip the check`);
      }
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({
          host: ip, port, path: '/api/v1/alerts', method: 'GET', headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
          ca, servername: `${QUERIER_SERVICE}.${MONITORING_NAMESPACE}.svc`, rejectUnauthorized: !o.insecureSkipTlsVerify, timeout: timeoutMs,
        }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`thanos-querier answered ${res.statusCode}: ${text.trim().slice(0, 300)}`))));
        });
        req.on('timeout', () => req.destroy(new Error(`no answer from https://${ip}:${port} within ${o.timeout}s`)));
        req.on('error', (e) => reject(new Error(`cannot reach thanos-querier at https://${ip}:${port}: ${e.message}`)));
        req.end();
      });
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new Error('thanos-querier answered something that is not JSON');
      }
      process.stdout.write(alertsTable(alertsOf(parsed), Date.now(), { pending: o.pending }));
    });
}
