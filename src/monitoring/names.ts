// The names the monitoring operator and its operands share with the payload manifests
// (release-payload/manifests/0000_50_cluster-monitoring-operator_*), as OpenShift's
// cluster-monitoring-operator names them.
export const MONITORING_NAMESPACE = 'openshift-monitoring';
export const CLUSTER_OPERATOR = 'monitoring';
export const OPERATOR_DEPLOYMENT = 'cluster-monitoring-operator';
/** Prometheus's Deployment, its ServiceAccount (the scraping identity) and its configuration Secret. */
export const PROMETHEUS = 'prometheus-k8s';
export const RULE_FILES_CONFIGMAP = 'prometheus-k8s-rulefiles-0';
/** The ConfigMap the service CA's bundle is injected into (service.beta.openshift.io/inject-cabundle), key service-ca.crt. */
export const SERVING_CA_CONFIGMAP = 'serving-certs-ca-bundle';
/** thanos-querier's serving certificate Secret (the Service's service.beta.openshift.io/serving-cert-secret-name). */
export const QUERIER_TLS_SECRET = 'thanos-querier-tls';
export const QUERIER_SERVICE = 'thanos-querier';
export const QUERIER_PORT = 9091;
export const PROMETHEUS_PORT = 9090;
/** The Service and Endpoints naming every node's kubelet (the Prometheus Operator's --kubelet-service). */
export const KUBELET_SERVICE = { namespace: 'kube-system', name: 'kubelet' };
export const KUBELET_PORT = 10250;
/** The pod labels of Prometheus (what thanos-querier's and prometheus-k8s's Services select). */
export const PROMETHEUS_LABELS = { 'app.kubernetes.io/name': 'prometheus', 'app.kubernetes.io/instance': 'k8s', 'app.kubernetes.io/part-of': 'openshift-monitoring' };
/** Debian's Prometheus. */
export const DEFAULT_PROMETHEUS_BINARY = '/usr/bin/prometheus';
/** thanos-querier's authorisation, as OpenShift's kube-rbac-proxy-web config for it: the verb from the HTTP method. */
export const QUERIER_RESOURCE_ATTRIBUTES = { group: 'monitoring.coreos.com', resource: 'prometheuses', subresource: 'api', namespace: MONITORING_NAMESPACE, name: 'k8s' } as const;
