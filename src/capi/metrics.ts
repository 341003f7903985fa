// Cluster API's metrics as kube-state-metrics exports them with Cluster API's custom-resource
// configuration (cluster-api's config/metrics, for cluster.x-k8s.io/v1beta2): the same names,
// labels and values, so its dashboards and alerts work on bosun without a kube-state-metrics. They
// are computed at scrape time from the controllers' informer caches.
//
// Every series carries the object's labels: name, namespace, uid, and cluster_name
// (spec.clusterName) for the kinds other than Cluster. Per kind (prefix capi_<kind>_):
//   created                                 creationTimestamp (Unix seconds)
//   annotation_paused{paused_value}         1 when the cluster.x-k8s.io/paused annotation is set
//   status_condition{type, status}          a StateSet per condition: 1 for its status among
//                                           True, False, Unknown, 0 for the others
//   status_condition_last_transition_time{type, status}
//   cluster:            info{control_plane_endpoint_host, …_port, control_plane_reference_kind,
//                       …_name, infrastructure_reference_kind, …_name, topology_classref_name,
//                       …_namespace, topology_version}, spec_paused, status_phase{phase}
//   machine:            info{bootstrap_reference_kind, …_name, container_runtime_version,
//                       control_plane_name, failure_domain, infrastructure_reference_kind, …_name,
//                       kernel_version, kube_proxy_version, kubelet_version, os_image, provider_id,
//                       version}, addresses{type, address}, status_certificatesexpirydate,
//                       status_noderef{node_name}, status_phase{phase}
//   machineset:         info{…references, version}, spec_replicas, status_replicas{,_available,
//                       _ready,_uptodate}
//   machinedeployment:  info, spec_paused, spec_replicas, spec_strategy_rollingupdate_max_surge,
//                       …_max_unavailable, status_phase{phase}, status_replicas{,_available,_ready,
//                       _uptodate}
//   machinehealthcheck: info{remediation_triggerif_unhealthyinrange, …_unhealthylessthanorequalto},
//                       status_current_healthy, status_expected_machines, status_remediations_allowed
// Values as kube-state-metrics reads them: numbers, booleans as 1/0, RFC 3339 times as Unix
// seconds, "N%" as N/100; a missing value is no series, or 0 where kube-state-metrics says nilIsZero.
import { Gauge, Registry } from 'prom-client';
import type * as api from '../api/index.js';
import type { Informer } from '../kube/index.js';

type Path = readonly string[];
type Labels = Record<string, Path>;

/** One metric family over one kind's objects. */
type Family =
  /** The value at `path`. */
  | { type: 'gauge'; name: string; help: string; path: Path; nilIsZero?: boolean }
  /** At `path` a list: a series per item, its labels from the item, its value at `valueFrom`. */
  | { type: 'gauge-each'; name: string; help: string; path: Path; labels: Labels; valueFrom: Path }
  /** Value 1, labelled from the object (no path) or from what is at `path` (an object, a list: a
   *  series per item, or a value: the label whose path is empty). Nothing at `path`: no series. */
  | { type: 'info'; name: string; help: string; path?: Path; labels: Labels }
  /** One series per state in `states`, `labelName` = the state, 1 for the one at `path`. */
  | { type: 'stateset'; name: string; help: string; path: Path; labelName: string; states: readonly string[] }
  /** A stateset per item of the list at `path`, labelled from the item, its state at `valueFrom`. */
  | { type: 'stateset-each'; name: string; help: string; path: Path; labels: Labels; labelName: string; states: readonly string[]; valueFrom: Path };

interface Kind {
  prefix: string;
  /** The labels every series of the kind carries. */
  labels: Labels;
  families: Family[];
  objects(): readonly api.KubeObject[];
}

const OBJECT_LABELS: Labels = { name: ['metadata', 'name'], namespace: ['metadata', 'namespace'], uid: ['metadata', 'uid'] };
const OWNED_LABELS: Labels = { cluster_name: ['spec', 'clusterName'], ...OBJECT_LABELS };
const CONDITION_STATUSES = ['True', 'False', 'Unknown'];

/** The families every kind has; `word` is how the help names an object of it. */
function common(word: string): Family[] {
  return [
    { type: 'gauge', name: 'created', help: 'Unix creation timestamp.', path: ['metadata', 'creationTimestamp'] },
    { type: 'info', name: 'annotation_paused', help: `Whether the ${word} is paused and any of its resources will not be processed by the controllers.`, path: ['metadata', 'annotations', 'cluster.x-k8s.io/paused'], labels: { paused_value: [] } },
    { type: 'stateset-each', name: 'status_condition', help: `The condition of a ${word}.`, path: ['status', 'conditions'], labels: { type: ['type'] }, labelName: 'status', states: CONDITION_STATUSES, valueFrom: ['status'] },
    { type: 'gauge-each', name: 'status_condition_last_transition_time', help: `The condition's last transition time of a ${word}.`, path: ['status', 'conditions'], labels: { type: ['type'], status: ['status'] }, valueFrom: ['lastTransitionTime'] },
  ];
}

const gauge = (name: string, help: string, path: Path, nilIsZero = false): Family => ({ type: 'gauge', name, help, path, nilIsZero });

/** A MachineSet's or MachineDeployment's info: its machines' template. */
const templateInfo = (word: string): Family => ({
  type: 'info', name: 'info', help: `Information about a ${word}.`,
  labels: {
    bootstrap_reference_kind: ['spec', 'template', 'spec', 'bootstrap', 'configRef', 'kind'],
    bootstrap_reference_name: ['spec', 'template', 'spec', 'bootstrap', 'configRef', 'name'],
    infrastructure_reference_kind: ['spec', 'template', 'spec', 'infrastructureRef', 'kind'],
    infrastructure_reference_name: ['spec', 'template', 'spec', 'infrastructureRef', 'name'],
    version: ['spec', 'template', 'spec', 'version'],
  },
});

const replicas = (word: string): Family[] => [
  gauge('status_replicas', `The number of replicas per ${word}.`, ['status', 'replicas'], true),
  gauge('status_replicas_available', `The number of available replicas per ${word}.`, ['status', 'availableReplicas'], true),
  gauge('status_replicas_ready', `The number of ready replicas per ${word}.`, ['status', 'readyReplicas'], true),
  gauge('status_replicas_uptodate', `The number of up-to-date replicas per ${word}.`, ['status', 'upToDateReplicas'], true),
];

const paused = (word: string) => gauge('spec_paused', `Whether the ${word} is paused and any of its resources will not be processed by the controllers.`, ['spec', 'paused'], true);

export interface ClusterApiInformers {
  clusters: () => Informer<api.Cluster>;
  machines: () => Informer<api.Machine>;
  machineSets: () => Informer<api.MachineSet>;
  machineDeployments: () => Informer<api.MachineDeployment>;
  machineHealthChecks: () => Informer<api.MachineHealthCheck>;
}

function kinds(informers: ClusterApiInformers): Kind[] {
  return [
    {
      prefix: 'capi_cluster', labels: OBJECT_LABELS, objects: () => informers.clusters().list(),
      families: [
        ...common('cluster'),
        {
          type: 'info', name: 'info', help: 'Information about a cluster.',
          labels: {
            control_plane_endpoint_host: ['spec', 'controlPlaneEndpoint', 'host'],
            control_plane_endpoint_port: ['spec', 'controlPlaneEndpoint', 'port'],
            control_plane_reference_kind: ['spec', 'controlPlaneRef', 'kind'],
            control_plane_reference_name: ['spec', 'controlPlaneRef', 'name'],
            infrastructure_reference_kind: ['spec', 'infrastructureRef', 'kind'],
            infrastructure_reference_name: ['spec', 'infrastructureRef', 'name'],
            topology_classref_name: ['spec', 'topology', 'classRef', 'name'],
            topology_classref_namespace: ['spec', 'topology', 'classRef', 'namespace'],
            topology_version: ['spec', 'topology', 'version'],
          },
        },
        paused('cluster'),
        { type: 'stateset', name: 'status_phase', help: 'The clusters current phase.', path: ['status', 'phase'], labelName: 'phase', states: ['Pending', 'Provisioning', 'Provisioned', 'Deleting', 'Failed', 'Unknown'] },
      ],
    },
    {
      prefix: 'capi_machine', labels: OWNED_LABELS, objects: () => informers.machines().list(),
      families: [
        ...common('machine'),
        { type: 'info', name: 'addresses', help: 'Address information about a machine.', path: ['status', 'addresses'], labels: { type: ['type'], address: ['address'] } },
        {
          type: 'info', name: 'info', help: 'Information about a machine.',
          labels: {
            bootstrap_reference_kind: ['spec', 'bootstrap', 'configRef', 'kind'],
            bootstrap_reference_name: ['spec', 'bootstrap', 'configRef', 'name'],
            container_runtime_version: ['status', 'nodeInfo', 'containerRuntimeVersion'],
            control_plane_name: ['metadata', 'labels', 'cluster.x-k8s.io/control-plane-name'],
            failure_domain: ['spec', 'failureDomain'],
            infrastructure_reference_kind: ['spec', 'infrastructureRef', 'kind'],
            infrastructure_reference_name: ['spec', 'infrastructureRef', 'name'],
            kernel_version: ['status', 'nodeInfo', 'kernelVersion'],
            kube_proxy_version: ['status', 'nodeInfo', 'kubeProxyVersion'],
            kubelet_version: ['status', 'nodeInfo', 'kubeletVersion'],
            os_image: ['status', 'nodeInfo', 'osImage'],
            provider_id: ['spec', 'providerID'],
            version: ['spec', 'version'],
          },
        },
        gauge('status_certificatesexpirydate', 'Information about certificate expiration date of a control plane node.', ['status', 'certificatesExpiryDate'], true),
        { type: 'info', name: 'status_noderef', help: 'Information about the node reference of a machine.', path: ['status', 'nodeRef'], labels: { node_name: ['name'] } },
        { type: 'stateset', name: 'status_phase', help: 'The machines current phase.', path: ['status', 'phase'], labelName: 'phase', states: ['Pending', 'Provisioning', 'Provisioned', 'Running', 'Updating', 'Deleting', 'Deleted', 'Failed', 'Unknown'] },
      ],
    },
    {
      prefix: 'capi_machineset', labels: OWNED_LABELS, objects: () => informers.machineSets().list(),
      families: [
        ...common('machineset'),
        templateInfo('machineset'),
        gauge('spec_replicas', 'The number of desired machines for a machineset.', ['spec', 'replicas'], true),
        ...replicas('machineset'),
      ],
    },
    {
      prefix: 'capi_machinedeployment', labels: OWNED_LABELS, objects: () => informers.machineDeployments().list(),
      families: [
        ...common('machinedeployment'),
        templateInfo('machinedeployment'),
        paused('machinedeployment'),
        gauge('spec_replicas', 'The number of desired machines for a machinedeployment.', ['spec', 'replicas']),
        gauge('spec_strategy_rollingupdate_max_surge', 'Maximum number of replicas that can be scheduled above the desired number of replicas during a rolling update of a machinedeployment.', ['spec', 'rollout', 'strategy', 'rollingUpdate', 'maxSurge']),
        gauge('spec_strategy_rollingupdate_max_unavailable', 'Maximum number of unavailable replicas during a rolling update of a machinedeployment.', ['spec', 'rollout', 'strategy', 'rollingUpdate', 'maxUnavailable']),
        { type: 'stateset', name: 'status_phase', help: 'The machinedeployments current phase.', path: ['status', 'phase'], labelName: 'phase', states: ['ScalingUp', 'ScalingDown', 'Running', 'Failed', 'Unknown'] },
        ...replicas('machinedeployment'),
      ],
    },
    {
      prefix: 'capi_machinehealthcheck', labels: OWNED_LABELS, objects: () => informers.machineHealthChecks().list(),
      families: [
        ...common('machinehealthcheck'),
        {
          type: 'info', name: 'info', help: 'Information about a machinehealthcheck.',
          labels: {
            remediation_triggerif_unhealthyinrange: ['spec', 'remediation', 'triggerIf', 'unhealthyInRange'],
            remediation_triggerif_unhealthylessthanorequalto: ['spec', 'remediation', 'triggerIf', 'unhealthyLessThanOrEqualTo'],
          },
        },
        gauge('status_current_healthy', 'Current number of healthy machines.', ['status', 'currentHealthy'], true),
        gauge('status_expected_machines', 'Total number of machines counted by this machinehealthcheck.', ['status', 'expectedMachines'], true),
        gauge('status_remediations_allowed', 'Number of machine remediations that are currently allowed.', ['status', 'remediationsAllowed'], true),
      ],
    },
  ];
}

/** What is at `path` below `value` (undefined when any step is missing). */
function at(value: unknown, path: Path): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v ?? undefined;
}

/** A value as kube-state-metrics turns it into a sample's value (undefined: none). */
export function sampleValue(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  const s = v.trim();
  if (/^-?\d+(\.\d+)?%$/.test(s)) return Number(s.slice(0, -1)) / 100;
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s)) return Number(s);
  if (/^\d{4}-\d{2}-\d{2}T/.test(s)) {
    const ms = Date.parse(s);
    return Number.isFinite(ms) ? ms / 1000 : undefined;
  }
  return undefined;
}

/** Labels read from `source`; a missing value leaves its label out. */
function labelsFrom(source: unknown, labels: Labels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [label, path] of Object.entries(labels)) {
    const v = path.length ? at(source, path) : source;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[label] = String(v);
  }
  return out;
}

/** The samples of one family for one object. */
function samples(f: Family, object: unknown, base: Record<string, string>): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  const items = (path: Path): unknown[] => {
    const v = at(object, path);
    return Array.isArray(v) ? v : [];
  };
  switch (f.type) {
    case 'gauge': {
      const value = sampleValue(at(object, f.path)) ?? (f.nilIsZero ? 0 : undefined);
      if (value !== undefined) out.push({ labels: base, value });
      break;
    }
    case 'gauge-each':
      for (const item of items(f.path)) {
        const value = sampleValue(at(item, f.valueFrom));
        if (value !== undefined) out.push({ labels: { ...base, ...labelsFrom(item, f.labels) }, value });
      }
      break;
    case 'info': {
      if (!f.path) { out.push({ labels: { ...base, ...labelsFrom(object, f.labels) }, value: 1 }); break; }
      const v = at(object, f.path);
      for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) out.push({ labels: { ...base, ...labelsFrom(item, f.labels) }, value: 1 });
      break;
    }
    case 'stateset': {
      const state = at(object, f.path);
      if (typeof state !== 'string') break;
      for (const s of f.states) out.push({ labels: { ...base, [f.labelName]: s }, value: s === state ? 1 : 0 });
      break;
    }
    case 'stateset-each':
      for (const item of items(f.path)) {
        const state = at(item, f.valueFrom);
        const labels = { ...base, ...labelsFrom(item, f.labels) };
        for (const s of f.states) out.push({ labels: { ...labels, [f.labelName]: s }, value: s === state ? 1 : 0 });
      }
      break;
  }
  return out;
}

function familyLabels(f: Family): string[] {
  const own = 'labels' in f ? Object.keys(f.labels) : [];
  return 'labelName' in f ? [...own, f.labelName] : own;
}

/** The capi_* families over the informers' caches, in a registry of their own. */
export function createClusterApiMetrics(informers: ClusterApiInformers): { registry: Registry } {
  const registry = new Registry();
  for (const kind of kinds(informers)) {
    for (const family of kind.families) {
      new Gauge({
        name: `${kind.prefix}_${family.name}`,
        help: family.help,
        labelNames: [...new Set([...Object.keys(kind.labels), ...familyLabels(family)])],
        registers: [registry],
        collect() {
          this.reset();
          for (const object of kind.objects()) {
            for (const s of samples(family, object, labelsFrom(object, kind.labels))) this.set(s.labels, s.value);
          }
        },
      });
    }
  }
  return { registry };
}
