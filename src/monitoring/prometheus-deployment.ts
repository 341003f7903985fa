// The Deployment prometheus-k8s the monitoring operator runs (where OpenShift's operator has the
// Prometheus Operator run a StatefulSet): one replica on a master, two containers —
//   prometheus      `bosun prometheus`: Debian's /usr/bin/prometheus with the configuration from
//                   the Secret prometheus-k8s, the rule files from ConfigMap
//                   prometheus-k8s-rulefiles-0, the service CA bundle (ConfigMap
//                   serving-certs-ca-bundle), listening on the pod's IP, port 9090; its TSDB on
//                   the master's disk (/var/lib/prometheus-k8s), kept across restarts
//                   (strategy Recreate: one Prometheus owns the directory at a time);
//   thanos-querier  `bosun thanos-querier`: the authorising HTTPS proxy in front of Prometheus's
//                   HTTP API on port 9091 (Service thanos-querier, port web), serving the
//                   certificate of Secret thanos-querier-tls.
// Pure.
import type * as api from '../api/index.js';
import { CONFIG_DIR, CONFIG_FILE, RULES_DIR } from './scrape-config.js';
import { MONITORING_NAMESPACE, PROMETHEUS, PROMETHEUS_LABELS, PROMETHEUS_PORT, QUERIER_PORT, QUERIER_TLS_SECRET, RULE_FILES_CONFIGMAP, SERVING_CA_CONFIGMAP } from './names.js';

export interface PrometheusDeploymentOptions {
  /** The release (the images' tag). */
  version: string;
  /** The Prometheus binary the wrapper runs (default /usr/bin/prometheus). */
  binary: string;
  /** How long the TSDB keeps samples. */
  retention: string;
}

export const STORAGE_HOST_PATH = '/var/lib/prometheus-k8s';
export const SERVING_CA_DIR = `/etc/prometheus/configmaps/${SERVING_CA_CONFIGMAP}`;
const TLS_DIR = '/etc/tls/private';

export function prometheusDeployment(o: PrometheusDeploymentOptions): api.Deployment {
  const podIP = { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: PROMETHEUS, namespace: MONITORING_NAMESPACE, labels: { ...PROMETHEUS_LABELS } },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: { ...PROMETHEUS_LABELS } },
      template: {
        metadata: { labels: { ...PROMETHEUS_LABELS } },
        spec: {
          serviceAccountName: PROMETHEUS,
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'node-role.kubernetes.io/master': '' },
          tolerations: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' }],
          terminationGracePeriodSeconds: 60,
          containers: [
            {
              name: 'prometheus',
              image: `bosun.local/prometheus:${o.version}`,
              args: [
                'prometheus',
                `--config-file=${CONFIG_DIR}/${CONFIG_FILE}`,
                '--storage-path=/prometheus',
                `--listen=$(POD_IP):${PROMETHEUS_PORT}`,
                `--binary=${o.binary}`,
                `--retention=${o.retention}`,
              ],
              env: [podIP],
              ports: [{ name: 'web', containerPort: PROMETHEUS_PORT }],
              // Asked every second while it starts (a startup probe on /-/ready, as prometheus-operator
              // gives Prometheus, allowing it 15 minutes), so that it is found ready within a second
              // of being so rather than at the readiness probe's next 5 s period; then every 5 s.
              startupProbe: { httpGet: { path: '/-/ready', port: PROMETHEUS_PORT }, periodSeconds: 1, failureThreshold: 900 },
              readinessProbe: { httpGet: { path: '/-/ready', port: PROMETHEUS_PORT }, periodSeconds: 5 },
              volumeMounts: [
                { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
                { name: 'rules', mountPath: RULES_DIR, readOnly: true },
                { name: 'serving-certs-ca-bundle', mountPath: SERVING_CA_DIR, readOnly: true },
                { name: 'storage', mountPath: '/prometheus' },
              ],
              resources: { requests: { cpu: '70m', memory: '300Mi' } },
            },
            {
              name: 'thanos-querier',
              image: `bosun.local/thanos-querier:${o.version}`,
              args: [
                'thanos-querier',
                `--listen=$(POD_IP):${QUERIER_PORT}`,
                `--upstream=http://$(POD_IP):${PROMETHEUS_PORT}`,
                `--tls-cert-file=${TLS_DIR}/tls.crt`,
                `--tls-private-key-file=${TLS_DIR}/tls.key`,
              ],
              env: [podIP],
              ports: [{ name: 'web', containerPort: QUERIER_PORT }],
              volumeMounts: [{ name: 'thanos-querier-tls', mountPath: TLS_DIR, readOnly: true }],
              resources: { requests: { cpu: '5m', memory: '30Mi' } },
            },
          ],
          volumes: [
            { name: 'config', secret: { secretName: PROMETHEUS } },
            { name: 'rules', configMap: { name: RULE_FILES_CONFIGMAP } },
            // Filled by the service CA's injector; until then Prometheus leaves out the jobs that need it.
            { name: 'serving-certs-ca-bundle', configMap: { name: SERVING_CA_CONFIGMAP, optional: true } },
            // Issued by the service CA for Service thanos-querier; until then the proxy waits for it.
            { name: 'thanos-querier-tls', secret: { secretName: QUERIER_TLS_SECRET, optional: true } },
            { name: 'storage', hostPath: { path: STORAGE_HOST_PATH, type: 'DirectoryOrCreate' } },
          ],
        },
      },
    },
  };
}
