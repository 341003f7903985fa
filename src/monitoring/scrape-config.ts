// ServiceMonitors → Prometheus's configuration, as the Prometheus Operator generates it
// (pkg/prometheus/promcfg.go): one scrape job per ServiceMonitor endpoint, named
// `serviceMonitor/<namespace>/<name>/<index>`, with the endpoint's scheme, path, interval,
// bearer token file or authorization, and TLS settings; targets are the selected Services'
// endpoints on the endpoint's port, labelled `namespace`, `service`, `pod`, `container`,
// `endpoint` and `job` (the Service's name, or its `jobLabel` label's value) as the operator's
// relabelling produces them.
//
// Where upstream has Prometheus discover the endpoints itself (kubernetes_sd_configs, role
// endpoints), bosun resolves them here and writes them as file_sd target files: Prometheus's
// client-go discovery would need its own kubeconfig-free in-cluster identity pointing at fixed
// paths (/var/run/secrets/…) that a bosun pod's sandbox does not have at the filesystem root, and
// it would be a second, untested client of the API server's watch protocol; the operator's
// informers already hold the Endpoints. The file_sd files change as endpoints do and Prometheus
// re-reads them without a reload. Pure.
//
// Paths in the configuration are the pod's (/etc/prometheus/…, /var/run/secrets/…): the
// `bosun prometheus` wrapper maps them onto the pod's sandbox.
import type * as api from '../api/index.js';
import { storedSelectorMatches } from '../common/label-selectors.js';

/** Where the monitoring operator's Secret (configuration, target files, copied CA bundles) is mounted in Prometheus's pod. */
export const CONFIG_DIR = '/etc/prometheus/config';
export const CONFIG_FILE = 'prometheus.yaml';
/** Where the rule files ConfigMap is mounted. */
export const RULES_DIR = '/etc/prometheus/rules';
/** The service account token Prometheus scrapes with (the pod's, ServiceAccount prometheus-k8s). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface ScrapeInputs {
  serviceMonitors: api.ServiceMonitor[];
  services: api.Service[];
  endpoints: api.Endpoints[];
  /** ConfigMaps and Secrets a ServiceMonitor's tlsConfig.ca or authorization.credentials names. */
  configMaps: api.ConfigMap[];
  secrets: api.Secret[];
  /** The nodes' kubelet targets are discovered like any Service's (kube-system/kubelet). */
  externalLabels?: Record<string, string>;
  scrapeInterval?: string;
  evaluationInterval?: string;
}

export interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

export interface GeneratedConfig {
  /** prometheus.yaml as an object (the caller serialises it). */
  config: PrometheusConfig;
  /** Further files of the configuration Secret, by key: file_sd target files and copied CA bundles or tokens. */
  files: Record<string, string>;
  /** ServiceMonitor endpoints left out, and why (a missing referenced ConfigMap/Secret, a bad field). */
  problems: string[];
}

export interface ScrapeConfig {
  job_name: string;
  honor_labels?: boolean;
  scrape_interval?: string;
  scrape_timeout?: string;
  metrics_path: string;
  scheme: string;
  params?: Record<string, string[]>;
  sample_limit?: number;
  authorization?: { type: string; credentials_file: string };
  tls_config?: { ca_file?: string; cert_file?: string; key_file?: string; server_name?: string; insecure_skip_verify?: boolean };
  file_sd_configs: Array<{ files: string[] }>;
  relabel_configs?: Array<Record<string, unknown>>;
  metric_relabel_configs?: Array<Record<string, unknown>>;
}

export interface PrometheusConfig {
  global: { scrape_interval: string; scrape_timeout?: string; evaluation_interval: string; external_labels?: Record<string, string> };
  rule_files: string[];
  scrape_configs: ScrapeConfig[];
}

type Endpoint = api.ServiceMonitorEndpoint;
type KeyRef = { name?: string; key: string; optional?: boolean };

/** A file name (a Secret key) from parts: only the characters a key may hold. */
function keyName(...parts: string[]): string {
  return parts.join('_').replace(/[^-._a-zA-Z0-9]/g, '-');
}

/** The Prometheus Operator's camelCase relabel config → Prometheus's snake_case one. */
export function relabelConfig(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return out;
}

/** The Services a ServiceMonitor selects: its namespaces (its own by default, `any`, or `matchNames`) and label selector. */
export function selectedServices(sm: api.ServiceMonitor, services: api.Service[]): api.Service[] {
  const ns = sm.spec?.namespaceSelector;
  const own = sm.metadata.namespace ?? '';
  const inNamespace = (s: api.Service) => ns?.any ? true : (ns?.matchNames?.length ? ns.matchNames : [own]).includes(s.metadata.namespace ?? '');
  return services
    .filter((s) => inNamespace(s) && storedSelectorMatches(sm.spec?.selector, s.metadata.labels ?? {}))
    .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
}

/** The target groups of one endpoint of a ServiceMonitor: each selected Service's endpoints on the endpoint's port. */
export function targetGroups(sm: api.ServiceMonitor, endpoint: Endpoint, services: api.Service[], endpoints: api.Endpoints[]): TargetGroup[] {
  const groups: TargetGroup[] = [];
  for (const service of selectedServices(sm, services)) {
    const namespace = service.metadata.namespace ?? '';
    const ep = endpoints.find((e) => e.metadata.namespace === namespace && e.metadata.name === service.metadata.name);
    const jobLabel = sm.spec?.jobLabel;
    const job = (jobLabel && service.metadata.labels?.[jobLabel]) || service.metadata.name;
    const serviceLabels: Record<string, string> = {};
    for (const l of sm.spec?.targetLabels ?? []) {
      const v = service.metadata.labels?.[l];
      if (v !== undefined) serviceLabels[l.replace(/[^a-zA-Z0-9_]/g, '_')] = v;
    }
    for (const subset of ep?.subsets ?? []) {
      const port = subset.ports?.find((p) => portMatches(endpoint, p, service));
      if (!port) continue;
      const addresses = [...(subset.addresses ?? []), ...(subset.notReadyAddresses ?? [])];
      for (const address of addresses) {
        const labels: Record<string, string> = { job, namespace, service: service.metadata.name, endpoint: endpoint.port ?? String(endpoint.targetPort ?? port.port), ...serviceLabels };
        if (address.targetRef?.kind === 'Pod' && address.targetRef.name) labels.pod = address.targetRef.name;
        if (address.nodeName) labels.node = address.nodeName;
        groups.push({ targets: [`${address.ip}:${port.port}`], labels });
      }
    }
  }
  return groups;
}

/** Whether an Endpoints port is the one a ServiceMonitor endpoint names (by the Service port's name, or the target port). */
function portMatches(endpoint: Endpoint, port: { name?: string; port: number }, service: api.Service): boolean {
  if (endpoint.port !== undefined) return (port.name ?? '') === endpoint.port;
  const target = endpoint.targetPort;
  if (typeof target === 'number') return port.port === target;
  if (typeof target === 'string') {
    // A named target port: the Service port whose targetPort has that name.
    const sp = service.spec?.ports?.find((p) => p.targetPort === target);
    return sp !== undefined && (port.name ?? '') === (sp.name ?? '');
  }
  return false;
}

/** The ServiceMonitors, Services and Endpoints, as Prometheus's configuration and its files. */
export function generateScrapeConfig(inputs: ScrapeInputs): GeneratedConfig {
  const files: Record<string, string> = {};
  const problems: string[] = [];
  const scrapeConfigs: ScrapeConfig[] = [];
  const monitors = [...inputs.serviceMonitors].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  for (const sm of monitors) {
    const namespace = sm.metadata.namespace ?? '';
    const name = sm.metadata.name;
    for (const [i, endpoint] of (sm.spec?.endpoints ?? []).entries()) {
      const where = `ServiceMonitor ${namespace}/${name} endpoint ${i}`;
      if (endpoint.port === undefined && endpoint.targetPort === undefined) {
        problems.push(`${where}: neither port nor targetPort is set`);
        continue;
      }
      // A copied file (a CA bundle, a token) from a ConfigMap or Secret of the ServiceMonitor's namespace.
      const copy = (kind: 'configmap' | 'secret', ref: KeyRef): string | undefined => {
        const object = kind === 'configmap'
          ? inputs.configMaps.find((c) => c.metadata.namespace === namespace && c.metadata.name === ref.name)
          : inputs.secrets.find((s) => s.metadata.namespace === namespace && s.metadata.name === ref.name);
        const raw = object?.data?.[ref.key];
        if (raw === undefined) {
          problems.push(`${where}: ${kind === 'configmap' ? 'ConfigMap' : 'Secret'} ${namespace}/${ref.name ?? ''} has no key ${ref.key}`);
          return undefined;
        }
        const key = keyName(kind, namespace, ref.name ?? '', ref.key);
        files[key] = kind === 'secret' ? Buffer.from(raw, 'base64').toString('utf8') : raw;
        return `${CONFIG_DIR}/${key}`;
      };
      const job: ScrapeConfig = {
        job_name: `serviceMonitor/${namespace}/${name}/${i}`,
        metrics_path: endpoint.path ?? '/metrics',
        scheme: endpoint.scheme ?? 'http',
        file_sd_configs: [],
      };
      if (endpoint.honorLabels) job.honor_labels = true;
      if (endpoint.interval) job.scrape_interval = endpoint.interval;
      if (endpoint.scrapeTimeout) job.scrape_timeout = endpoint.scrapeTimeout;
      if (endpoint.params) job.params = endpoint.params;
      if (sm.spec?.sampleLimit) job.sample_limit = sm.spec.sampleLimit;
      if (endpoint.authorization?.credentials) {
        const file = copy('secret', endpoint.authorization.credentials);
        if (!file) continue;
        job.authorization = { type: endpoint.authorization.type ?? 'Bearer', credentials_file: file };
      } else if (endpoint.bearerTokenFile) {
        job.authorization = { type: 'Bearer', credentials_file: endpoint.bearerTokenFile };
      }
      const tls = endpoint.tlsConfig;
      if (tls) {
        const t: NonNullable<ScrapeConfig['tls_config']> = {};
        if (tls.ca?.configMap || tls.ca?.secret) {
          const file = tls.ca.configMap ? copy('configmap', tls.ca.configMap) : copy('secret', tls.ca.secret!);
          if (!file) continue;
          t.ca_file = file;
        } else if (tls.caFile) t.ca_file = tls.caFile;
        if (tls.certFile) t.cert_file = tls.certFile;
        if (tls.keyFile) t.key_file = tls.keyFile;
        if (tls.serverName) t.server_name = tls.serverName;
        if (tls.insecureSkipVerify) t.insecure_skip_verify = true;
        job.tls_config = t;
      }
      if (endpoint.relabelings?.length) job.relabel_configs = endpoint.relabelings.map(relabelConfig);
      if (endpoint.metricRelabelings?.length) job.metric_relabel_configs = endpoint.metricRelabelings.map(relabelConfig);
      const targetsKey = keyName('targets', namespace, name, String(i)) + '.json';
      files[targetsKey] = `${JSON.stringify(targetGroups(sm, endpoint, inputs.services, inputs.endpoints), null, 2)}\n`;
      job.file_sd_configs = [{ files: [`${CONFIG_DIR}/${targetsKey}`] }];
      scrapeConfigs.push(job);
    }
  }
  const config: PrometheusConfig = {
    global: {
      scrape_interval: inputs.scrapeInterval ?? '30s',
      evaluation_interval: inputs.evaluationInterval ?? '30s',
      ...(inputs.externalLabels && Object.keys(inputs.externalLabels).length ? { external_labels: inputs.externalLabels } : {}),
    },
    rule_files: [`${RULES_DIR}/*.yaml`],
    scrape_configs: scrapeConfigs,
  };
  return { config, files, problems };
}
