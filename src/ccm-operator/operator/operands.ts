// The objects the cloud-controller-manager operator deploys for a platform with a CCM, in
// openshift-cloud-controller-manager, shaped as OpenShift's operator shapes them: the `cloud-conf`
// ConfigMap (the provider's cloud config, key cloud.conf), the CCM Deployment (2 replicas under
// leader election — 1 on a single-replica control plane — on the masters, tolerating the
// uninitialized and not-ready taints, since nodes wait for the CCM to initialise them and the
// network may wait for it too), and a PodDisruptionBudget keeping one replica up (none on a
// single-replica control plane, as OpenShift). A hash of the cloud config in the pod template
// rolls the pods when the config changes. Its metrics: HTTPS on each node's address, port 10258
// (hostNetwork: the port differs from every other component's on a master), behind the Service
// `cloud-controller-manager` whose serving certificate the service CA writes into Secret
// cloud-controller-manager-tls, mounted into the pods. The CCM's ServiceAccount and RBAC are the payload's
// (release-payload/manifests/0000_26_cloud-controller-manager-operator_03_rbac_provider.yaml).
export { rolledOut } from '../../kube/rollout.js';
import { createHash } from 'node:crypto';
import type * as api from '../../api/index.js';

export const CCM_NAMESPACE = 'openshift-cloud-controller-manager';
export const CLOUD_CONF = { name: 'cloud-conf', key: 'cloud.conf' };
export const CCM_SERVICE_ACCOUNT = 'cloud-controller-manager';
/** OpenShift's label naming the platform of a CCM's pods. */
export const PROVIDER_LABEL = 'infrastructure.openshift.io/cloud-controller-manager';
export const CONFIG_HASH_ANNOTATION = 'operator.openshift.io/config-hash';
/** Where the cloud-conf ConfigMap is mounted in the CCM's pods. */
export const CLOUD_CONFIG_DIR = '/etc/cloud-controller-manager/config';
/** The metrics endpoint: Service, port and the Secret of its serving certificate. */
export const CCM_METRICS = { service: 'cloud-controller-manager', port: 10258, secretName: 'cloud-controller-manager-tls', dir: '/etc/tls/private' };

/** The local provider's cloud credential: the Secret the cloud-credential controller writes for
 *  CredentialsRequest openshift-cloud-controller-manager (in the payload), mounted read-only. */
export const CCM_CLOUD_CREDENTIALS = { secretName: 'cloud-controller-manager-cloud-credentials', dir: '/etc/cloud-credentials', key: 'credential' };

export interface OperandSettings {
  /** The cloud provider (--cloud-provider) and the platform's name for object names. */
  provider: string;
  name: string;
  image: string;
  cloudConfig: string;
  /** Infrastructure status.infrastructureName: prefixes the cluster's balancers and routes. */
  clusterName?: string;
  /** The pods' network (Network/cluster): routes inside it that no node explains are removed. */
  clusterCidr?: string;
  /** Infrastructure status.controlPlaneTopology SingleReplica: one replica, no PDB. */
  singleReplica?: boolean;
}

export const deploymentName = (name: string) => `${name}-cloud-controller-manager`;

/** The operands, each of its kind's type (and as precise as written, for their readers). */
export function ccmOperands(s: OperandSettings) {
  const app = deploymentName(s.name);
  const labels = { 'k8s-app': app, [PROVIDER_LABEL]: s.name };
  const credentials = s.provider === 'local';
  const command = [
    'bosun', 'cloud-controller-manager',
    '--cloud-provider', s.provider,
    '--cloud-config', `${CLOUD_CONFIG_DIR}/${CLOUD_CONF.key}`,
    ...(credentials ? ['--cloud-credentials-file', `${CCM_CLOUD_CREDENTIALS.dir}/${CCM_CLOUD_CREDENTIALS.key}`] : []),
    `--metrics-listen=$(HOST_IP):${CCM_METRICS.port}`,
    `--tls-cert-file=${CCM_METRICS.dir}/tls.crt`,
    `--tls-private-key-file=${CCM_METRICS.dir}/tls.key`,
    ...(s.clusterName ? ['--cluster-name', s.clusterName] : []),
    ...(s.clusterCidr ? ['--cluster-cidr', s.clusterCidr] : []),
    '--leader-elect',
  ];
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CLOUD_CONF.name, namespace: CCM_NAMESPACE },
    data: { [CLOUD_CONF.key]: s.cloudConfig },
  } satisfies api.ConfigMap;
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app, namespace: CCM_NAMESPACE, labels },
    spec: {
      replicas: s.singleReplica ? 1 : 2,
      selector: { matchLabels: labels },
      // Only the Lease holder acts: the old pods go before the new ones start (OpenShift's choice).
      strategy: { type: 'Recreate' },
      template: {
        metadata: { labels, annotations: { [CONFIG_HASH_ANNOTATION]: createHash('sha256').update(s.cloudConfig).digest('hex').slice(0, 16) } },
        spec: {
          hostNetwork: true,
          serviceAccountName: CCM_SERVICE_ACCOUNT,
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'node-role.kubernetes.io/master': '' },
          // The two replicas on different masters, so one master going down leaves a CCM.
          affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels } }] } },
          tolerations: [
            { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
            // The CCM is what removes this taint: it must run on nodes that still carry it.
            { key: 'node.cloudprovider.kubernetes.io/uninitialized', operator: 'Exists', effect: 'NoSchedule' },
            // The network may need the CCM's addresses before nodes turn Ready.
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
          ],
          containers: [{
            name: 'cloud-controller-manager',
            image: s.image,
            command,
            env: [{ name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }],
            ports: [{ name: 'metrics', containerPort: CCM_METRICS.port, hostPort: CCM_METRICS.port }],
            resources: { requests: { cpu: '200m', memory: '50Mi' } },
            terminationMessagePolicy: 'FallbackToLogsOnError',
            volumeMounts: [
              { name: 'cloud-config', mountPath: CLOUD_CONFIG_DIR, readOnly: true }, { name: 'metrics-tls', mountPath: CCM_METRICS.dir, readOnly: true },
              ...(credentials ? [{ name: 'cloud-credentials', mountPath: CCM_CLOUD_CREDENTIALS.dir, readOnly: true }] : []),
            ],
          }],
          volumes: [
            { name: 'cloud-config', configMap: { name: CLOUD_CONF.name, items: [{ key: CLOUD_CONF.key, path: CLOUD_CONF.key }] } }, { name: 'metrics-tls', secret: { secretName: CCM_METRICS.secretName } },
            ...(credentials ? [{ name: 'cloud-credentials', secret: { secretName: CCM_CLOUD_CREDENTIALS.secretName, defaultMode: 0o400 } }] : []),
          ],
        },
      },
    },
  } satisfies api.Deployment;
  const pdb = s.singleReplica ? undefined : {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: app, namespace: CCM_NAMESPACE },
    spec: { minAvailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow', selector: { matchLabels: labels } },
  } satisfies api.PodDisruptionBudget;
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: CCM_METRICS.service, namespace: CCM_NAMESPACE, labels: { ...labels, 'k8s-app': CCM_METRICS.service }, annotations: { 'service.beta.openshift.io/serving-cert-secret-name': CCM_METRICS.secretName } },
    spec: { type: 'ClusterIP', selector: labels, ports: [{ name: 'metrics', port: CCM_METRICS.port, targetPort: CCM_METRICS.port, protocol: 'TCP' }] },
  } satisfies api.Service;
  return { configMap, deployment, pdb, service };
}
