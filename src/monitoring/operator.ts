// The monitoring operator (OpenShift's cluster-monitoring-operator with the part of the
// Prometheus Operator it needs): one controller, one key, reconciling
//   - Secret openshift-monitoring/prometheus-k8s: prometheus.yaml and its file_sd target files
//     and copied CA bundles, from every ServiceMonitor of the cluster (scrape-config.ts);
//   - ConfigMap openshift-monitoring/prometheus-k8s-rulefiles-0: one rule file per PrometheusRule
//     (rule-files.ts), `for:` shortened with --alert-for-override (tests only);
//   - Service and Endpoints kube-system/kubelet: every node's kubelet on its InternalIP:10250,
//     which the kubelet ServiceMonitor selects (the Prometheus Operator's kubelet controller);
//   - Deployment openshift-monitoring/prometheus-k8s (prometheus-deployment.ts), only when the
//     Prometheus binary is installed;
//   - ClusterOperator monitoring: Available once Prometheus has a ready replica; Degraded with
//     reason PrometheusBinaryMissing when the binary is not there (Available stays True then: the
//     operator runs and the rest of the cluster does not depend on Prometheus, so the install is
//     not held up), with reason ServiceMonitorsInvalid when ServiceMonitors were left out, and
//     SyncFailed when a sync fails (written at once by this, the operator's one controller; the
//     sync is retried with the queue's back-off).
// Secret and ConfigMap contents are replaced as a whole (keys that went away are removed).
import { accessSync, constants } from 'node:fs';
import { stringify } from 'yaml';
import type * as api from '../api/index.js';
import { ClusterOperatorStatus, Controller, type Clock, type Informer, type KubeClient, type Manager, applyObject, isNotFound, realClock, releaseVersion, resources } from '../kube/index.js';
import {
  CLUSTER_OPERATOR, DEFAULT_PROMETHEUS_BINARY, KUBELET_PORT, KUBELET_SERVICE, MONITORING_NAMESPACE, OPERATOR_DEPLOYMENT, PROMETHEUS, RULE_FILES_CONFIGMAP,
} from './names.js';
import { prometheusDeployment } from './prometheus-deployment.js';
import { ruleFiles } from './rule-files.js';
import { CONFIG_FILE, generateScrapeConfig } from './scrape-config.js';

export interface MonitoringSettings {
  releaseVersion?: string;
  /** The Prometheus binary (default /usr/bin/prometheus). */
  prometheusBinary?: string;
  /** TSDB retention (default 1d). */
  retention?: string;
  /** Tests only: every alert's `for:` at most this long. */
  alertForOverride?: string;
  scrapeInterval?: string;
  evaluationInterval?: string;
  clock?: Clock;
}

const KEY = 'cluster';

/** Why the binary cannot be run, or undefined. */
export function binaryProblem(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? `${path} is not installed: install Debian's prometheus package (apt-get install prometheus) on the masters`
      : `${path} cannot be run (${code ?? (e as Error).message})`;
  }
}

/** The kube-system/kubelet Endpoints: every node's InternalIP on the kubelet's port. */
export function kubeletEndpoints(nodes: api.Node[]): api.Endpoints {
  const addresses = nodes
    .map((n) => ({ node: n, ip: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address }))
    .filter((a): a is { node: api.Node; ip: string } => Boolean(a.ip))
    .sort((a, b) => a.node.metadata.name.localeCompare(b.node.metadata.name))
    .map(({ node, ip }) => ({ ip, nodeName: node.metadata.name, targetRef: { kind: 'Node', name: node.metadata.name, uid: node.metadata.uid } }));
  const port = (n: api.Node | undefined) => n?.status?.daemonEndpoints?.kubeletEndpoint?.Port || KUBELET_PORT;
  return {
    apiVersion: 'v1', kind: 'Endpoints',
    metadata: { ...KUBELET_SERVICE, labels: { 'k8s-app': 'kubelet', 'app.kubernetes.io/name': 'kubelet', 'app.kubernetes.io/managed-by': 'bosun-cluster-monitoring-operator' } },
    subsets: addresses.length ? [{ addresses, ports: [{ name: 'https-metrics', port: port(nodes[0]), protocol: 'TCP' }] }] : [],
  };
}

/** Replaces an object's `data` when it differs (creating the object when missing); true when it wrote. */
async function replaceData<T extends api.ConfigMap | api.Secret>(client: KubeClient, ref: typeof resources.configMaps | typeof resources.secrets, desired: T): Promise<boolean> {
  const typed = ref as unknown as import('../kube/index.js').ResourceRef<T>;
  const live = await client.read(typed, desired.metadata.name, desired.metadata.namespace);
  if (!live) {
    await client.create(typed, desired);
    return true;
  }
  if (JSON.stringify(live.data ?? {}) === JSON.stringify(desired.data ?? {})) return false;
  await client.update(typed, { ...live, data: desired.data, metadata: { ...live.metadata, labels: { ...live.metadata.labels, ...desired.metadata.labels } } });
  return true;
}

export function addMonitoringOperator(manager: Manager, settings: MonitoringSettings = {}): Controller {
  const client = manager.client;
  const clock = settings.clock ?? realClock;
  const informer = <T extends api.KubeObject>(ref: import('../kube/index.js').ResourceRef<T>, options?: import('../kube/index.js').InformerOptions): Informer<T> => manager.informers.forResource(ref, options);
  const serviceMonitors = informer(resources.serviceMonitors);
  const prometheusRules = informer(resources.prometheusRules);
  const services = informer(resources.services);
  const endpoints = informer(resources.endpoints);
  const nodes = informer(resources.nodes);
  const deployments = informer(resources.deployments, { namespace: MONITORING_NAMESPACE });
  const operators = informer(resources.clusterOperators, { fieldSelector: `metadata.name=${CLUSTER_OPERATOR}` });
  const binary = settings.prometheusBinary ?? DEFAULT_PROMETHEUS_BINARY;
  const status = new ClusterOperatorStatus({
    client, name: CLUSTER_OPERATOR, clock, informer: operators,
    relatedObjects: [
      { group: '', resource: 'namespaces', name: MONITORING_NAMESPACE },
      { group: 'monitoring.coreos.com', resource: 'servicemonitors', name: '' },
      { group: 'monitoring.coreos.com', resource: 'prometheusrules', name: '' },
    ],
  });
  const version = releaseVersion({ version: settings.releaseVersion, deployment: { informer: deployments, namespace: MONITORING_NAMESPACE, name: OPERATOR_DEPLOYMENT } });

  const controller = new Controller({
    name: 'cluster-monitoring',
    clock,
    keys: [KEY],
    resyncPeriodMs: 60_000,
    sync: async () => {
      let outcome: { missing?: string; problems: string[]; jobs: number };
      try {
        outcome = await reconcile();
      } catch (e) {
        // The one controller writes the status: a failed reconcile says so at once and is retried.
        await writeStatus({ problems: [], jobs: 0, failure: (e as Error).message });
        throw e;
      }
      await writeStatus(outcome);
    },
  });
  const reconcile = async (): Promise<{ missing?: string; problems: string[]; jobs: number }> => {
    const v = version() ?? 'unknown';
    // What the ServiceMonitors reference besides Services: ConfigMaps and Secrets of their namespaces.
    const configMaps: api.ConfigMap[] = [];
    const secrets: api.Secret[] = [];
    for (const sm of serviceMonitors.list()) {
      const ns = sm.metadata.namespace;
      for (const e of sm.spec?.endpoints ?? []) {
        const cm = e.tlsConfig?.ca?.configMap?.name;
        const secretNames = [e.tlsConfig?.ca?.secret?.name, e.authorization?.credentials?.name].filter((n): n is string => Boolean(n));
        if (cm) { const o = await client.read(resources.configMaps, cm, ns); if (o) configMaps.push(o); }
        for (const n of secretNames) { const o = await client.read(resources.secrets, n, ns); if (o) secrets.push(o); }
      }
    }
    const generated = generateScrapeConfig({
      serviceMonitors: serviceMonitors.list(), services: services.list(), endpoints: endpoints.list(), configMaps, secrets,
      scrapeInterval: settings.scrapeInterval, evaluationInterval: settings.evaluationInterval,
    });
    const configData: Record<string, string> = { [CONFIG_FILE]: Buffer.from(stringify(generated.config, { lineWidth: 0 })).toString('base64') };
    for (const [k, text] of Object.entries(generated.files)) configData[k] = Buffer.from(text).toString('base64');
    const labels = { 'app.kubernetes.io/managed-by': 'bosun-cluster-monitoring-operator' };
    await replaceData(client, resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: PROMETHEUS, namespace: MONITORING_NAMESPACE, labels }, type: 'Opaque', data: configData });
    await replaceData(client, resources.configMaps, {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: RULE_FILES_CONFIGMAP, namespace: MONITORING_NAMESPACE, labels },
      data: ruleFiles(prometheusRules.list(), { forOverride: settings.alertForOverride }),
    });
    await applyObject(client, {
      apiVersion: 'v1', kind: 'Service',
      metadata: { ...KUBELET_SERVICE, labels: { 'k8s-app': 'kubelet', 'app.kubernetes.io/name': 'kubelet', ...labels } },
      spec: { clusterIP: 'None', ports: [{ name: 'https-metrics', port: KUBELET_PORT, targetPort: KUBELET_PORT, protocol: 'TCP' }] },
    }, resources.services);
    const wantedEndpoints = kubeletEndpoints(nodes.list());
    const liveEndpoints = endpoints.get(KUBELET_SERVICE.name, KUBELET_SERVICE.namespace);
    if (!liveEndpoints) await client.create(resources.endpoints, wantedEndpoints).catch((e: Error) => { if (!/already exists/i.test(e.message)) throw e; });
    else if (JSON.stringify(liveEndpoints.subsets ?? []) !== JSON.stringify(wantedEndpoints.subsets)) await client.update(resources.endpoints, { ...liveEndpoints, subsets: wantedEndpoints.subsets });

    const missing = binaryProblem(binary);
    if (!missing) await applyObject(client, prometheusDeployment({ version: v, binary, retention: settings.retention ?? '1d' }), resources.deployments);
    else await client.delete(resources.deployments, PROMETHEUS, MONITORING_NAMESPACE).catch((e: Error) => { if (!isNotFound(e)) throw e; });
    return { missing, problems: generated.problems, jobs: generated.config.scrape_configs.length };
  };
  const writeStatus = async ({ missing, problems, jobs, failure }: { missing?: string; problems: string[]; jobs: number; failure?: string }): Promise<void> => {
    const prometheus = deployments.get(PROMETHEUS, MONITORING_NAMESPACE);
    const ready = (prometheus?.status?.availableReplicas ?? 0) > 0;
    const available = missing !== undefined || ready;
    const degraded = failure
      ? { type: 'Degraded', status: 'True', reason: 'SyncFailed', message: `cannot reconcile monitoring: ${failure}` }
      : missing
      ? { type: 'Degraded', status: 'True', reason: 'PrometheusBinaryMissing', message: `Prometheus cannot run: ${missing}` }
      : problems.length
        ? { type: 'Degraded', status: 'True', reason: 'ServiceMonitorsInvalid', message: `left out of Prometheus's configuration: ${problems.join('; ')}` }
        : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' };
    const conditions = status.conditions([
      missing
        ? { type: 'Available', status: 'True', reason: 'PrometheusBinaryMissing', message: 'The monitoring operator runs; Prometheus does not (see Degraded)' }
        : ready
          ? { type: 'Available', status: 'True', reason: 'AsExpected', message: `Prometheus is scraping ${jobs} ServiceMonitor endpoints` }
          : { type: 'Available', status: 'False', reason: 'PrometheusNotReady', message: `Deployment ${MONITORING_NAMESPACE}/${PROMETHEUS} has no ready replica yet` },
      ready || missing
        ? { type: 'Progressing', status: 'False', reason: 'AsExpected', message: '' }
        : { type: 'Progressing', status: 'True', reason: 'RollOutInProgress', message: `Rolling out ${MONITORING_NAMESPACE}/${PROMETHEUS}` },
      degraded,
      { type: 'Upgradeable', status: 'True', reason: 'AsExpected', message: '' },
    ]);
    await status.write({ conditions, versions: status.versions(available, version()) }, { from: 'cluster-monitoring' });
  };
  const all = () => KEY;
  for (const i of [serviceMonitors, prometheusRules, services, nodes, deployments, operators]) controller.watch(i as Informer<api.KubeObject>, all);
  // Endpoints change often (leases are not Endpoints here, but pods come and go): only those of selected Services matter, and the kubelet's own.
  controller.watch(endpoints, all);
  manager.add(controller);
  return controller;
}
