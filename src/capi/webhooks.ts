// What Cluster API's admission webhooks do, kind by kind, as pure functions over the objects: the
// defaulting ("mutate") and validation ("validate") of internal/webhooks (core kinds),
// controlplane/kubeadm and bootstrap/kubeadm (through kubeadm/validation.ts), and of an
// infrastructure provider as CAPD does it for its kinds (here bosun's Local* kinds). The webhook
// server (webhook-server.ts) turns a defaulted object into a JSONPatch and a list of problems into
// a 422 Invalid Status, named as controller-runtime names both; the paths and webhook names are
// Cluster API's (`/mutate-cluster-x-k8s-io-v1beta2-machinedeployment`,
// `default.machinedeployment.cluster.x-k8s.io`), so its users' habits carry over.
//
// The defaults that make YAML written for Cluster API apply as it is:
//   MachineDeployment / MachineSet   the cluster-name label on the object, on the selector and on
//       the template; without a selector of its own, one on deployment-name / set-name (and the
//       template labels to match); replicas 1 on create (or the autoscaler's min size); a `v`
//       before the template's version;
//   Machine                          the cluster-name label; a `v` before the version;
//   KubeadmControlPlane / KubeadmConfig / KubeadmConfigTemplate   kubeadm/validation.ts's
//       defaults (replicas 1, `v`, RollingUpdate maxSurge 1, format ignition);
//   LocalMachine / LocalMachineTemplate   the default instance type (an empty spec is valid, as
//       CAPD's); LocalCluster: an empty spec is valid (the failure domains are the cloud's zones).
import { createHash } from 'node:crypto';
import type * as api from '../api/index.js';
import { jsonEqual } from '../common/json.js';
import { LABEL } from './api.js';
import {
  defaultKubeadmConfig, defaultKubeadmConfigTemplate, defaultKubeadmControlPlane,
  validateKubeadmConfig, validateKubeadmConfigTemplate, validateKubeadmControlPlane,
} from './kubeadm/validation.js';

/** The LocalMachine instance type when a spec names none (the CRD's default too). */
export const DEFAULT_INSTANCE_TYPE = 'local.medium';
/** The Cluster Autoscaler's annotation for a node group's smallest size, which Cluster API's replica default reads. */
export const AUTOSCALER_MIN_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';

type Unstructured = api.Unstructured;

/** One kind's webhooks: what Cluster API would default, and what it refuses (field paths as kube prints them). */
export interface KindWebhooks {
  group: string;
  kind: string;
  /** The plural, for the webhook configurations' rules. */
  resource: string;
  default(object: Unstructured, old: Unstructured | undefined): Unstructured;
  validate(object: Unstructured, old: Unstructured | undefined): string[];
}

const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const withV = (version: string | undefined) => (version && !version.startsWith('v') ? `v${version}` : version);
const invalid = (path: string, value: unknown, detail: string) => `${path}: Invalid value: ${typeof value === 'number' ? value : JSON.stringify(value ?? '')}: ${detail}`;
const forbidden = (path: string, detail: string) => `${path}: Forbidden: ${detail}`;

/**
 * A label value from a name, as Cluster API's format.MustFormatValue: the name itself when it is a
 * valid label value (63 characters at most), else `hash_` and a hash of it.
 */
export function labelValueOf(name: string): string {
  if (name.length <= 63) return name;
  return `hash_${createHash('sha256').update(name).digest('base64url').slice(0, 20)}_z`;
}

/** The selector as a label-selector string, for messages (matchLabels only, as labels.Set prints them). */
function selectorString(selector: api.LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) parts.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
  return parts.join(',');
}

/** Whether a label selector (matchLabels and matchExpressions) selects `labels`. */
function selects(selector: api.LabelSelector | undefined, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector?.matchExpressions ?? []) {
    const has = e.key in labels;
    const value = labels[e.key];
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(value))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(value)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

type Replicated = { metadata: api.ObjectMeta; spec: { clusterName: string; replicas?: number; selector: api.LabelSelector; template: api.MachineTemplateSpec } };

/** MachineDeployment's and MachineSet's shared defaults; `nameLabel` is deployment-name or set-name. */
function defaultReplicated<T extends Replicated>(input: T, old: T | undefined, nameLabel: string): T {
  const o = structuredClone(input);
  o.spec ??= {} as T['spec'];
  const cluster = o.spec.clusterName;
  o.metadata.labels = { ...(o.metadata.labels ?? {}), ...(cluster ? { [LABEL.clusterName]: cluster } : {}) };
  if (o.spec.replicas === undefined) {
    const min = Number(o.metadata.annotations?.[AUTOSCALER_MIN_SIZE]);
    o.spec.replicas = old?.spec?.replicas ?? (Number.isInteger(min) && min >= 0 && o.metadata.annotations?.[AUTOSCALER_MIN_SIZE] !== undefined ? min : 1);
  }
  o.spec.selector = { ...(o.spec.selector ?? {}), matchLabels: { ...(o.spec.selector?.matchLabels ?? {}) } };
  o.spec.template ??= {} as api.MachineTemplateSpec;
  o.spec.template.metadata = { ...(o.spec.template.metadata ?? {}), labels: { ...(o.spec.template.metadata?.labels ?? {}) } };
  const selector = o.spec.selector;
  const templateLabels = o.spec.template.metadata.labels!;
  // The selector is set once, at creation: an object made before the webhooks were installed (the
  // install's own MachineDeployment) keeps the one it has, or its Machines would fall out of it.
  if (old) {
    if (o.spec.template.spec) o.spec.template.spec.version = withV(o.spec.template.spec.version);
    return o;
  }
  // No selector of its own: one on its name, as a default way of being unique.
  if (Object.keys(selector.matchLabels!).length === 0 && (selector.matchExpressions ?? []).length === 0) {
    selector.matchLabels![nameLabel] = labelValueOf(o.metadata.name ?? '');
    templateLabels[nameLabel] = labelValueOf(o.metadata.name ?? '');
  }
  // The selector and the template in the same cluster.
  if (cluster) {
    selector.matchLabels![LABEL.clusterName] = cluster;
    templateLabels[LABEL.clusterName] = cluster;
  }
  if (o.spec.template.spec) o.spec.template.spec.version = withV(o.spec.template.spec.version);
  return o;
}

/** An int-or-string rollout value: an integer, or a percentage. */
function intOrPercentProblem(path: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === 'number') return typeof value === 'number' && value < 0 ? invalid(path, value, 'must be greater than or equal to 0') : undefined;
  if (typeof value === 'string' && /^\d+%$/.test(value)) return undefined;
  return invalid(path, value, "must be an integer or percentage (e.g '5%')");
}

function validateReplicated(o: Replicated, old: Replicated | undefined): string[] {
  const errs: string[] = [];
  const labels = (o.spec?.template?.metadata?.labels ?? {}) as Record<string, string>;
  if (!selects(o.spec?.selector, labels)) errs.push(invalid('spec.template.metadata.labels', labels, `must match spec.selector "${selectorString(o.spec?.selector)}"`));
  if (old && old.spec?.clusterName !== o.spec?.clusterName) errs.push(forbidden('spec.clusterName', 'field is immutable'));
  const version = o.spec?.template?.spec?.version;
  if (version !== undefined && !SEMVER.test(version)) errs.push(invalid('spec.template.spec.version', version, 'must be a valid semantic version'));
  if (o.spec?.replicas !== undefined && o.spec.replicas < 0) errs.push(invalid('spec.replicas', o.spec.replicas, 'must be greater than or equal to 0'));
  return errs;
}

const machineDeployments: KindWebhooks = {
  group: 'cluster.x-k8s.io', kind: 'MachineDeployment', resource: 'machinedeployments',
  default: (o, old) => defaultReplicated(o as unknown as Replicated, old as unknown as Replicated | undefined, LABEL.deploymentName) as unknown as Unstructured,
  validate: (o, old) => {
    const md = o as unknown as api.MachineDeployment;
    const errs = validateReplicated(md as unknown as Replicated, old as unknown as Replicated | undefined);
    const rolling = md.spec?.rollout?.strategy?.rollingUpdate;
    for (const field of ['maxSurge', 'maxUnavailable'] as const) {
      const p = intOrPercentProblem(`spec.rollout.strategy.rollingUpdate.${field}`, rolling?.[field]);
      if (p) errs.push(p);
    }
    const surge = rolling?.maxSurge;
    const unavailable = rolling?.maxUnavailable;
    if ((surge === 0 || surge === '0%') && (unavailable === 0 || unavailable === '0%')) {
      errs.push(invalid('spec.rollout.strategy.rollingUpdate.maxUnavailable', unavailable, 'may not be 0 when maxSurge is 0'));
    }
    return errs;
  },
};

const machineSets: KindWebhooks = {
  group: 'cluster.x-k8s.io', kind: 'MachineSet', resource: 'machinesets',
  default: (o, old) => defaultReplicated(o as unknown as Replicated, old as unknown as Replicated | undefined, LABEL.setName) as unknown as Unstructured,
  validate: (o, old) => validateReplicated(o as unknown as Replicated, old as unknown as Replicated | undefined),
};

const machines: KindWebhooks = {
  group: 'cluster.x-k8s.io', kind: 'Machine', resource: 'machines',
  default: (input) => {
    const o = structuredClone(input) as unknown as api.Machine;
    if (o.spec?.clusterName) o.metadata.labels = { ...(o.metadata.labels ?? {}), [LABEL.clusterName]: o.spec.clusterName };
    if (o.spec) o.spec.version = withV(o.spec.version);
    return o as unknown as Unstructured;
  },
  validate: (input, oldInput) => {
    const o = input as unknown as api.Machine;
    const old = oldInput as unknown as api.Machine | undefined;
    const errs: string[] = [];
    if (old && old.spec?.clusterName !== o.spec?.clusterName) errs.push(forbidden('spec.clusterName', 'field is immutable'));
    if (o.spec?.version !== undefined && !SEMVER.test(o.spec.version)) errs.push(invalid('spec.version', o.spec.version, 'must be a valid semantic version'));
    return errs;
  },
};

const localClusters: KindWebhooks = {
  group: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', resource: 'localclusters',
  default: (input) => {
    const o = structuredClone(input);
    o.spec ??= {};
    return o;
  },
  // Nothing beyond the schema: the endpoint is the user's, or the controller's balancer's, which
  // follows the balancer if the cloud gives it another address.
  validate: () => [],
};

const localMachines: KindWebhooks = {
  group: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', resource: 'localmachines',
  default: (input) => {
    const o = structuredClone(input) as unknown as api.LocalMachine;
    o.spec = { ...(o.spec ?? {}), instanceType: o.spec?.instanceType ?? DEFAULT_INSTANCE_TYPE };
    return o as unknown as Unstructured;
  },
  validate: (input, oldInput) => {
    const spec = (input as unknown as api.LocalMachine).spec ?? {};
    const before = (oldInput as unknown as api.LocalMachine | undefined)?.spec;
    if (!before) return [];
    const errs: string[] = [];
    if (spec.instanceType !== before.instanceType) errs.push(forbidden('spec.instanceType', 'field is immutable'));
    if (before.providerID && spec.providerID !== before.providerID) errs.push(forbidden('spec.providerID', 'field is immutable once set'));
    return errs;
  },
};

const localMachineTemplates: KindWebhooks = {
  group: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', resource: 'localmachinetemplates',
  default: (input) => {
    const o = structuredClone(input) as unknown as api.LocalMachineTemplate;
    const template = o.spec?.template ?? {};
    o.spec = { ...(o.spec ?? {}), template: { ...template, spec: { ...(template.spec ?? {}), instanceType: template.spec?.instanceType ?? DEFAULT_INSTANCE_TYPE } } };
    return o as unknown as Unstructured;
  },
  validate: (input, oldInput) => {
    const before = (oldInput as unknown as api.LocalMachineTemplate | undefined)?.spec?.template?.spec;
    if (before && !jsonEqual((input as unknown as api.LocalMachineTemplate).spec?.template?.spec, before)) {
      return [forbidden('spec.template.spec', 'LocalMachineTemplate spec.template.spec field is immutable. Please create a new resource instead.')];
    }
    return [];
  },
};

const kubeadmControlPlanes: KindWebhooks = {
  group: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', resource: 'kubeadmcontrolplanes',
  default: (o) => {
    const kcp = o as unknown as api.KubeadmControlPlane;
    return defaultKubeadmControlPlane({ ...kcp, spec: kcp.spec ?? ({} as api.KubeadmControlPlane['spec']) }) as unknown as Unstructured;
  },
  validate: (o, old) => validateKubeadmControlPlane(o as unknown as api.KubeadmControlPlane, old as unknown as api.KubeadmControlPlane | undefined),
};

const kubeadmConfigs: KindWebhooks = {
  group: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', resource: 'kubeadmconfigs',
  default: (o) => defaultKubeadmConfig(o as unknown as api.KubeadmConfig) as unknown as Unstructured,
  validate: (o) => validateKubeadmConfig(o as unknown as api.KubeadmConfig),
};

const kubeadmConfigTemplates: KindWebhooks = {
  group: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfigTemplate', resource: 'kubeadmconfigtemplates',
  default: (o) => defaultKubeadmConfigTemplate(o as unknown as api.KubeadmConfigTemplate) as unknown as Unstructured,
  validate: (o) => validateKubeadmConfigTemplate(o as unknown as api.KubeadmConfigTemplate),
};

/** Every kind Cluster API's webhooks (and the local provider's) default and validate. */
export const CLUSTER_API_WEBHOOKS: readonly KindWebhooks[] = [
  machineDeployments, machineSets, machines, kubeadmControlPlanes, kubeadmConfigs, kubeadmConfigTemplates,
  localClusters, localMachines, localMachineTemplates,
];

/**
 * KubeadmControlPlane's scale validator (Cluster API's ScaleValidator), on
 * `kubeadmcontrolplanes/scale`: `kubectl scale kcp` does not pass the kind's own webhooks (they
 * see the object, this one the autoscaling/v1 Scale), so what they refuse of replicas is refused
 * here too — none, or an even number while etcd is stacked on the control-plane machines.
 */
export const KCP_SCALE_WEBHOOK = {
  name: 'validation-scale.kubeadmcontrolplane.controlplane.cluster.x-k8s.io',
  path: '/validate-scale-controlplane-cluster-x-k8s-io-v1beta2-kubeadmcontrolplane',
  group: 'controlplane.cluster.x-k8s.io', resource: 'kubeadmcontrolplanes/scale',
} as const;

/** Why a Scale of `kcp` to `replicas` is refused, if it is. */
export function kcpScaleRefusal(replicas: number, kcp: api.KubeadmControlPlane): string | undefined {
  if (replicas === 0) return 'replicas cannot be 0';
  const externalEtcd = kcp.spec?.kubeadmConfigSpec?.clusterConfiguration?.etcd?.external !== undefined;
  if (!externalEtcd && replicas % 2 === 0) return 'replicas cannot be an even number when etcd is stacked';
  return undefined;
}

/** controller-runtime's path for a kind's webhook: `/mutate-cluster-x-k8s-io-v1beta2-machinedeployment`. */
export function webhookPath(which: 'mutate' | 'validate', w: Pick<KindWebhooks, 'group' | 'kind'>): string {
  return `/${which}-${w.group.replace(/\./g, '-')}-v1beta2-${w.kind.toLowerCase()}`;
}

/** Cluster API's name for a kind's webhook: `default.machinedeployment.cluster.x-k8s.io`, `validation.…`. */
export function webhookName(which: 'mutate' | 'validate', w: Pick<KindWebhooks, 'group' | 'kind'>): string {
  return `${which === 'mutate' ? 'default' : 'validation'}.${w.kind.toLowerCase()}.${w.group}`;
}

/** An RFC 6902 patch that turns `from` into `to`: objects field by field, anything else replaced whole. */
export function jsonPatch(from: unknown, to: unknown, path = ''): Array<{ op: 'add' | 'remove' | 'replace'; path: string; value?: unknown }> {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (jsonEqual(from, to)) return [];
  if (!isObject(from) || !isObject(to)) return [{ op: 'replace', path, value: to }];
  const ops: Array<{ op: 'add' | 'remove' | 'replace'; path: string; value?: unknown }> = [];
  const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
  for (const key of Object.keys(from)) if (!(key in to) || to[key] === undefined) if (from[key] !== undefined) ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    if (!(key in from) || from[key] === undefined) ops.push({ op: 'add', path: `${path}/${escape(key)}`, value });
    else ops.push(...jsonPatch(from[key], value, `${path}/${escape(key)}`));
  }
  return ops;
}

/** Where the API server finds the webhook server: the Service in front of the controllers' pods. */
export const WEBHOOK_SERVICE = { namespace: 'openshift-cluster-api', name: 'capi-controllers', port: 443 };
export const MUTATING_CONFIGURATION = 'capi-mutating-webhook-configuration';
export const VALIDATING_CONFIGURATION = 'capi-validating-webhook-configuration';

/**
 * The Mutating- and ValidatingWebhookConfiguration that send Cluster API's kinds to the webhook
 * server, as Cluster API's config/webhook manifests declare them (CREATE and UPDATE, failurePolicy
 * Fail, sideEffects None). `clientConfig` is where the server is: the Service (the payload, with
 * the service CA injecting caBundle) or a URL with its caBundle (tests).
 */
export function webhookConfigurations(clientConfig: (path: string) => Record<string, unknown> = (path) => ({ service: { ...WEBHOOK_SERVICE, path } }), annotations: Record<string, string> = {}): [api.MutatingWebhookConfiguration, api.ValidatingWebhookConfiguration] {
  const webhooks = (which: 'mutate' | 'validate') => CLUSTER_API_WEBHOOKS.map((w) => ({
    name: webhookName(which, w),
    clientConfig: clientConfig(webhookPath(which, w)),
    rules: [{ apiGroups: [w.group], apiVersions: ['v1beta2'], operations: ['CREATE', 'UPDATE'], resources: [w.resource] }],
    failurePolicy: 'Fail', matchPolicy: 'Equivalent', sideEffects: 'None', admissionReviewVersions: ['v1', 'v1beta1'],
  }));
  const scale = {
    name: KCP_SCALE_WEBHOOK.name,
    clientConfig: clientConfig(KCP_SCALE_WEBHOOK.path),
    rules: [{ apiGroups: [KCP_SCALE_WEBHOOK.group], apiVersions: ['v1beta2'], operations: ['UPDATE'], resources: [KCP_SCALE_WEBHOOK.resource] }],
    failurePolicy: 'Fail', matchPolicy: 'Equivalent', sideEffects: 'None', admissionReviewVersions: ['v1', 'v1beta1'],
  };
  const metadata = (name: string) => ({ name, labels: { 'cluster.x-k8s.io/provider': 'cluster-api' }, ...(Object.keys(annotations).length ? { annotations } : {}) });
  return [
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: metadata(MUTATING_CONFIGURATION), webhooks: webhooks('mutate') } as api.MutatingWebhookConfiguration,
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: metadata(VALIDATING_CONFIGURATION), webhooks: [...webhooks('validate'), scale] } as api.ValidatingWebhookConfiguration,
  ];
}

/** The payload's file of the webhook configurations (scripts/generate-capi-crds.ts writes it). */
export const WEBHOOKS_FILE = '0000_30_cluster-api_05_webhooks.yaml';

/** The payload's webhook configurations: the Service, caBundle from the service CA, in both install profiles. */
export function payloadWebhookConfigurations(): [api.MutatingWebhookConfiguration, api.ValidatingWebhookConfiguration] {
  return webhookConfigurations(undefined, {
    'include.release.openshift.io/self-managed-high-availability': 'true',
    'include.release.openshift.io/single-node-developer': 'true',
    'service.beta.openshift.io/inject-cabundle': 'true',
  });
}
