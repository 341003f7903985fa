// KubeletConfig → MachineConfig `99-<pool>-generated-kubelet`, as a pure function. For every pool
// a KubeletConfig's machineConfigPoolSelector selects, the generated MachineConfig rewrites
// /etc/kubernetes/kubelet.conf with the role's base configuration (template.ts) deep-merged with
// spec.kubeletConfig (objects merge, anything else replaces) and the TLS settings of
// spec.tlsSecurityProfile (tls-profile.ts), plus a kubelet log-level dropin (spec.logLevel) and
// the node-sizing switch (spec.autoSizingReserved).
//
// Several KubeletConfigs for one pool are ordered by creation time (then name): the first writes
// `99-<pool>-generated-kubelet`, the next `…-1`, and so on, each the base plus its own settings,
// so the newest wins by merge order, as in OpenShift.
//
// Fields the cluster owns are refused as OpenShift refuses them; the KubeletConfig then gets
// OpenShift's condition {type: Failure, status: "False", message: "Error: …"} and nothing is
// generated for it; a good one gets {type: Success, status: "True", message: "Success"}.
import { fromLabelSelectorObject, matchesLabels, SelectorError } from '../../common/label-selectors.js';
import { encodeDataUrl } from '../../ignition/data-url.js';
import { kubeletTlsFor, type TlsSecurityProfile } from './tls-profile.js';
import { baseKubeletConfiguration, KUBELET_CONFIG_PATH, serializeKubeletConfig, TEMPLATE_IGNITION_VERSION, type Role } from './template.js';
import {
  GENERATED_BY_VERSION_ANNOTATION, MCO_API_VERSION, ROLE_LABEL,
  metaSelector, ownerReferenceTo, type Condition, type ControllerConfig, type KubeletConfig, type MachineConfig, type MachineConfigPool,
} from './types.js';

/** Kubelet settings the cluster owns, and why a user may not set them. */
export const FORBIDDEN_KUBELET_FIELDS: Record<string, string> = {
  cgroupDriver: 'the container runtime and the kubelet must agree on it',
  clusterDNS: 'it comes from the cluster network configuration',
  clusterDomain: 'it comes from the cluster network configuration',
  featureGates: 'feature gates are set cluster-wide (FeatureGate/cluster)',
  staticPodPath: 'control-plane static pods depend on it',
  authentication: 'the kubelet must authenticate clients with the cluster CA',
  authorization: 'the kubelet must authorize through the API server',
  rotateCertificates: 'node certificates are rotated by the cluster',
  serverTLSBootstrap: 'serving certificates are issued by the cluster',
  containerRuntimeEndpoint: 'the node runs CRI-O at a fixed socket',
};

export const KUBELET_LOG_DROPIN = '20-logging.conf';
export const NODE_SIZING_ENV_PATH = '/etc/node-sizing-enabled.env';

export interface KubeletConfigWithTls extends KubeletConfig {
  spec: KubeletConfig['spec'] & { tlsSecurityProfile?: TlsSecurityProfile | null };
}

/** Problems with a KubeletConfig's own fields (empty when it can be applied). */
export function validateKubeletConfig(kc: KubeletConfigWithTls): string[] {
  const problems: string[] = [];
  const user = kc.spec?.kubeletConfig;
  if (user !== undefined && user !== null && (typeof user !== 'object' || Array.isArray(user))) return ['KubeletConfiguration: spec.kubeletConfig must be an object'];
  const fields = user ?? {};
  if (Object.keys(fields).length === 0 && kc.spec?.logLevel == null && kc.spec?.autoSizingReserved == null && !kc.spec?.tlsSecurityProfile) {
    problems.push('KubeletConfig is empty: set spec.kubeletConfig, spec.logLevel, spec.autoSizingReserved or spec.tlsSecurityProfile');
  }
  for (const key of Object.keys(fields).sort()) {
    const why = FORBIDDEN_KUBELET_FIELDS[key];
    if (why) problems.push(`KubeletConfiguration: ${key} is not allowed to be set (${why}), but contains: ${JSON.stringify(fields[key])}`);
  }
  if (fields.apiVersion !== undefined && fields.apiVersion !== 'kubelet.config.k8s.io/v1beta1') problems.push(`KubeletConfiguration: apiVersion must be kubelet.config.k8s.io/v1beta1, not ${JSON.stringify(fields.apiVersion)}`);
  if (fields.kind !== undefined && fields.kind !== 'KubeletConfiguration') problems.push(`KubeletConfiguration: kind must be KubeletConfiguration, not ${JSON.stringify(fields.kind)}`);
  const soft = fields.evictionSoft as Record<string, unknown> | undefined;
  if (soft && typeof soft === 'object') {
    const grace = (fields.evictionSoftGracePeriod ?? {}) as Record<string, unknown>;
    for (const signal of Object.keys(soft).sort()) {
      if (grace[signal] === undefined) problems.push(`KubeletConfiguration: evictionSoft.${signal} needs evictionSoftGracePeriod.${signal}`);
    }
  }
  if (kc.spec?.autoSizingReserved === true && fields.systemReserved !== undefined) {
    problems.push('KubeletConfiguration: autoSizingReserved and systemReserved cannot both be set');
  }
  if (kc.spec?.logLevel != null && (!Number.isInteger(kc.spec.logLevel) || kc.spec.logLevel < 0 || kc.spec.logLevel > 10)) {
    problems.push(`spec.logLevel must be an integer from 0 to 10, not ${kc.spec.logLevel}`);
  }
  if (kc.spec?.tlsSecurityProfile) {
    try { kubeletTlsFor(kc.spec.tlsSecurityProfile); } catch (e) { problems.push((e as Error).message); }
    for (const key of ['tlsMinVersion', 'tlsCipherSuites']) {
      if (fields[key] !== undefined) problems.push(`KubeletConfiguration: ${key} cannot be set together with spec.tlsSecurityProfile`);
    }
  }
  return problems;
}

/** The pools a KubeletConfig's machineConfigPoolSelector selects (an empty selector: none). */
export function poolsForKubeletConfig(kc: KubeletConfig, pools: MachineConfigPool[]): MachineConfigPool[] {
  const raw = kc.spec?.machineConfigPoolSelector;
  if (!raw || (Object.keys(raw.matchLabels ?? {}).length === 0 && (raw.matchExpressions ?? []).length === 0)) return [];
  const selector = fromLabelSelectorObject(metaSelector(raw));
  return pools.filter((p) => matchesLabels(selector, p.metadata.labels)).sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

/** Objects merge key by key; anything else in `over` replaces what is in `base`. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? deepMerge(b, v) : v;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export interface KubeletConfigOutcome {
  /** Generated MachineConfigs, sorted by name. */
  machineConfigs: MachineConfig[];
  /** The condition each KubeletConfig should carry, by name. */
  conditions: Map<string, Condition>;
}

/** Which role's base a pool's kubelet starts from: master for master, worker for every other pool. */
export function poolRole(pool: MachineConfigPool): Role {
  return pool.metadata.name === 'master' ? 'master' : 'worker';
}

export function generatedKubeletName(pool: string, index: number): string {
  return `99-${pool}-generated-kubelet${index === 0 ? '' : `-${index}`}`;
}

/** All generated kubelet MachineConfigs and every KubeletConfig's condition. */
export function generateKubeletConfigs(kcs: KubeletConfigWithTls[], pools: MachineConfigPool[], cc: ControllerConfig, controllerVersion: string): KubeletConfigOutcome {
  const conditions = new Map<string, Condition>();
  const perPool = new Map<string, { pool: MachineConfigPool; kcs: KubeletConfigWithTls[] }>();
  for (const kc of kcs) {
    const name = kc.metadata.name ?? '';
    if (kc.metadata.deletionTimestamp) continue;
    const problems = validateKubeletConfig(kc);
    let selected: MachineConfigPool[] = [];
    try {
      selected = poolsForKubeletConfig(kc, pools);
      if (selected.length === 0) problems.push('spec.machineConfigPoolSelector selects no MachineConfigPool');
    } catch (e) {
      if (!(e instanceof SelectorError)) throw e;
      problems.push(`spec.machineConfigPoolSelector is invalid: ${e.message}`);
    }
    if (problems.length > 0) {
      conditions.set(name, { type: 'Failure', status: 'False', message: `Error: ${problems.join('; ')}` });
      continue;
    }
    conditions.set(name, { type: 'Success', status: 'True', message: 'Success' });
    for (const pool of selected) {
      const entry = perPool.get(pool.metadata.name ?? '') ?? { pool, kcs: [] };
      entry.kcs.push(kc);
      perPool.set(pool.metadata.name ?? '', entry);
    }
  }

  const machineConfigs: MachineConfig[] = [];
  for (const [poolName, { pool, kcs: forPool }] of perPool) {
    forPool.sort((a, b) => compareCreation(a, b));
    forPool.forEach((kc, index) => machineConfigs.push(kubeletMachineConfig(kc, pool, poolName, index, cc, controllerVersion)));
  }
  machineConfigs.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  return { machineConfigs, conditions };
}

function compareCreation(a: KubeletConfig, b: KubeletConfig): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

function kubeletMachineConfig(kc: KubeletConfigWithTls, pool: MachineConfigPool, poolName: string, index: number, cc: ControllerConfig, controllerVersion: string): MachineConfig {
  const { apiVersion: _a, kind: _k, ...userFields } = (kc.spec.kubeletConfig ?? {}) as Record<string, unknown>;
  let merged = deepMerge(baseKubeletConfiguration(cc, poolRole(pool)), userFields);
  if (kc.spec.tlsSecurityProfile) merged = { ...merged, ...kubeletTlsFor(kc.spec.tlsSecurityProfile) };
  if (kc.spec.autoSizingReserved === true) {
    const { systemReserved: _s, ...rest } = merged;
    merged = rest;
  }
  const files = [{ path: KUBELET_CONFIG_PATH, mode: 0o644, overwrite: true, contents: { source: encodeDataUrl(serializeKubeletConfig(merged)) } }];
  if (kc.spec.autoSizingReserved != null) {
    files.push({ path: NODE_SIZING_ENV_PATH, mode: 0o644, overwrite: true, contents: { source: encodeDataUrl(`NODE_SIZING_ENABLED=${kc.spec.autoSizingReserved}\n`) } });
  }
  const units = kc.spec.logLevel != null
    ? [{ name: 'kubelet.service', dropins: [{ name: KUBELET_LOG_DROPIN, contents: `[Service]\nEnvironment="KUBELET_LOG_LEVEL=${kc.spec.logLevel}"\n` }] }]
    : undefined;
  return {
    apiVersion: MCO_API_VERSION,
    kind: 'MachineConfig',
    metadata: {
      name: generatedKubeletName(poolName, index),
      labels: { [ROLE_LABEL]: poolName },
      annotations: { [GENERATED_BY_VERSION_ANNOTATION]: controllerVersion },
      ownerReferences: [ownerReferenceTo(kc, 'KubeletConfig')],
    },
    spec: { config: { ignition: { version: TEMPLATE_IGNITION_VERSION }, storage: { files }, ...(units ? { systemd: { units } } : {}) } },
  };
}
