// The deployment install strategy (pure): the objects a ClusterServiceVersion's `install.spec`
// stands for, given the namespaces its OperatorGroup targets —
//   - a ServiceAccount for every account its permissions and Deployments name;
//   - `permissions`: a Role and RoleBinding for the account in the operator's namespace and in each
//     target namespace, or, for all namespaces, a ClusterRole and ClusterRoleBinding;
//   - `clusterPermissions`: a ClusterRole and ClusterRoleBinding;
//   - each Deployment, its pods annotated with olm.operatorGroup, olm.operatorNamespace and
//     olm.targetNamespaces (what an operator reads to know what to watch).
// What lives in the CSV's namespace is owned by the CSV (the garbage collector removes it with the
// CSV); what lives elsewhere or is cluster-scoped carries OLM's olm.owner labels instead, and is
// removed by the CSV controller once the CSV is gone.
import type * as api from '../api/index.js';
import { type ResourceDefinition, resources } from '../kube/index.js';
import { OLM_GROUP } from './context.js';

export const OWNER_LABELS = { name: 'olm.owner', namespace: 'olm.owner.namespace', kind: 'olm.owner.kind' } as const;
export const GROUP_ANNOTATIONS = { group: 'olm.operatorGroup', namespace: 'olm.operatorNamespace', targets: 'olm.targetNamespaces' } as const;

export interface StrategyObject {
  resource: ResourceDefinition<api.KubeObject>;
  object: api.KubeObject;
}

/** Where the CSV is installed and what it serves. */
export interface StrategyTarget {
  operatorGroup: string;
  /** The group's status.namespaces ([""]: all). */
  targets: string[];
}

const RBAC = 'rbac.authorization.k8s.io/v1';

/** A name of at most 253 characters built from parts (long CSV names stay unique by their start). */
const nameOf = (...parts: string[]) => parts.join('-').toLowerCase().replace(/[^a-z0-9.-]/g, '-').slice(0, 253);

/** The group annotations a CSV and its pods carry. */
export function groupAnnotations(csv: api.ClusterServiceVersion, target: StrategyTarget): Record<string, string> {
  return { [GROUP_ANNOTATIONS.group]: target.operatorGroup, [GROUP_ANNOTATIONS.namespace]: csv.metadata.namespace ?? '', [GROUP_ANNOTATIONS.targets]: target.targets.join(',') };
}

/** A Subscription's spec.config: what it overrides in every Deployment of its CSV (OLM's SubscriptionConfig). */
export interface SubscriptionConfig {
  env?: NonNullable<api.Container['env']>;
  envFrom?: NonNullable<api.Container['envFrom']>;
  resources?: api.Container['resources'];
  nodeSelector?: Record<string, string>;
  tolerations?: api.Toleration[];
  volumes?: api.Volume[];
  volumeMounts?: NonNullable<api.Container['volumeMounts']>;
  affinity?: api.PodSpec['affinity'];
  annotations?: Record<string, string>;
}

const CONFIG_FIELDS = ['env', 'envFrom', 'resources', 'nodeSelector', 'tolerations', 'volumes', 'volumeMounts', 'affinity', 'annotations'] as const;

/** A Subscription's spec.config checked for shape; a message naming the bad field when it is not one. */
export function subscriptionConfig(value: unknown): { config?: SubscriptionConfig; problem?: string } {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return { problem: 'spec.config must be an object' };
  const record = value as Record<string, unknown>;
  const unknownField = Object.keys(record).find((k) => !(CONFIG_FIELDS as readonly string[]).includes(k) && k !== 'selector');
  if (unknownField) return { problem: `spec.config.${unknownField} is not a field of a Subscription's config (${CONFIG_FIELDS.join(', ')})` };
  for (const list of ['env', 'envFrom', 'tolerations', 'volumes', 'volumeMounts'] as const) {
    if (record[list] !== undefined && !Array.isArray(record[list])) return { problem: `spec.config.${list} must be a list` };
  }
  for (const map of ['nodeSelector', 'annotations'] as const) {
    const m = record[map];
    if (m !== undefined && (typeof m !== 'object' || m === null || Array.isArray(m) || Object.values(m).some((v) => typeof v !== 'string'))) return { problem: `spec.config.${map} must map names to strings` };
  }
  const env = record.env as unknown[] | undefined;
  const bad = (env ?? []).findIndex((e) => !e || typeof (e as { name?: unknown }).name !== 'string');
  if (bad >= 0) return { problem: `spec.config.env[${bad}] has no name` };
  for (const list of ['volumes', 'volumeMounts'] as const) {
    const i = ((record[list] as unknown[] | undefined) ?? []).findIndex((e) => !e || typeof (e as { name?: unknown }).name !== 'string');
    if (i >= 0) return { problem: `spec.config.${list}[${i}] has no name` };
  }
  return { config: record as SubscriptionConfig };
}

/** Merges by name: `extra` replaces what `base` has of the same name, the rest appended. */
function byName<T extends { name: string }>(base: T[] | undefined, extra: T[] | undefined): T[] | undefined {
  if (!extra?.length) return base;
  const names = new Set(extra.map((e) => e.name));
  return [...(base ?? []).filter((b) => !names.has(b.name)), ...extra];
}

/** A Deployment spec with a Subscription's config applied, as OLM applies it (pure): env and
 *  volumes merged by name (the config wins), envFrom and tolerations added, resources, nodeSelector
 *  and affinity replaced, annotations added to the pods. */
export function withSubscriptionConfig(spec: NonNullable<api.Deployment['spec']>, config: SubscriptionConfig | undefined): NonNullable<api.Deployment['spec']> {
  if (!config) return spec;
  const out = structuredClone(spec);
  const pod: api.PodSpec = { ...out.template?.spec, containers: out.template?.spec?.containers ?? [] };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  pod.containers = pod.containers.map((c) => ({
    ...c,
    ...(config.env?.length ? { env: byName(c.env, config.env) } : {}),
    ...(config.envFrom?.length ? { envFrom: [...(c.envFrom ?? []), ...config.envFrom.filter((e) => !(c.envFrom ?? []).some((x) => same(x, e)))] } : {}),
    ...(config.volumeMounts?.length ? { volumeMounts: byName(c.volumeMounts, config.volumeMounts) } : {}),
    ...(config.resources ? { resources: config.resources } : {}),
  }));
  if (config.volumes?.length) pod.volumes = byName(pod.volumes, config.volumes);
  if (config.tolerations?.length) pod.tolerations = [...(pod.tolerations ?? []), ...config.tolerations.filter((t) => !(pod.tolerations ?? []).some((x) => same(x, t)))];
  if (config.nodeSelector) pod.nodeSelector = config.nodeSelector;
  if (config.affinity) pod.affinity = config.affinity;
  out.template = {
    ...out.template,
    metadata: { ...out.template?.metadata, ...(config.annotations ? { annotations: { ...out.template?.metadata?.annotations, ...config.annotations } } : {}) },
    spec: pod,
  };
  return out;
}

export function strategyObjects(csv: api.ClusterServiceVersion, target: StrategyTarget, config?: SubscriptionConfig): StrategyObject[] {
  const namespace = csv.metadata.namespace ?? '';
  const name = csv.metadata.name;
  const owned = { ownerReferences: [{ apiVersion: `${OLM_GROUP}/v1alpha1`, kind: 'ClusterServiceVersion', name, uid: csv.metadata.uid ?? '', controller: false, blockOwnerDeletion: false }] };
  const labelled = { labels: { [OWNER_LABELS.name]: name, [OWNER_LABELS.namespace]: namespace, [OWNER_LABELS.kind]: 'ClusterServiceVersion' } };
  const spec = csv.spec.install.spec ?? { deployments: [] };
  const out: StrategyObject[] = [];
  const add = <T extends api.KubeObject>(resource: ResourceDefinition<T>, object: T) => out.push({ resource: resource as ResourceDefinition<api.KubeObject>, object });
  const deployments = spec.deployments ?? [];
  const accounts = new Set<string>([
    ...(spec.permissions ?? []).map((p) => p.serviceAccountName),
    ...(spec.clusterPermissions ?? []).map((p) => p.serviceAccountName),
    ...deployments.map((d) => (d.spec as NonNullable<api.Deployment['spec']>).template?.spec?.serviceAccountName).filter((n): n is string => Boolean(n) && n !== 'default'),
  ]);
  for (const account of [...accounts].sort()) add(resources.serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace, ...owned } });
  const subject = (account: string) => [{ kind: 'ServiceAccount', name: account, namespace }];
  const all = target.targets.length === 1 && target.targets[0] === '';
  for (const permission of spec.permissions ?? []) {
    const roleName = nameOf(name, permission.serviceAccountName);
    const rules = permission.rules as api.Role['rules'];
    const namespaces = [namespace, ...(all ? [] : target.targets.filter((t) => t !== namespace))];
    for (const ns of namespaces) {
      const meta = ns === namespace ? owned : labelled;
      add(resources.roles, { apiVersion: RBAC, kind: 'Role', metadata: { name: roleName, namespace: ns, ...meta }, rules });
      add(resources.roleBindings, { apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: roleName, namespace: ns, ...meta }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName }, subjects: subject(permission.serviceAccountName) });
    }
    if (all) {
      const clusterName = nameOf(name, permission.serviceAccountName, 'all-namespaces');
      add(resources.clusterRoles, { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: clusterName, ...labelled }, rules });
      add(resources.clusterRoleBindings, { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: clusterName, ...labelled }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName }, subjects: subject(permission.serviceAccountName) });
    }
  }
  for (const permission of spec.clusterPermissions ?? []) {
    const clusterName = nameOf(name, permission.serviceAccountName);
    add(resources.clusterRoles, { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: clusterName, ...labelled }, rules: permission.rules as api.ClusterRole['rules'] });
    add(resources.clusterRoleBindings, { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: clusterName, ...labelled }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName }, subjects: subject(permission.serviceAccountName) });
  }
  for (const d of deployments) {
    const dspec = withSubscriptionConfig(structuredClone(d.spec) as NonNullable<api.Deployment['spec']>, config);
    dspec.template = { ...dspec.template, metadata: { ...dspec.template?.metadata, annotations: { ...dspec.template?.metadata?.annotations, ...groupAnnotations(csv, target) } } };
    add(resources.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: d.name, namespace, ...(d.label ? { labels: d.label } : {}), ...owned }, spec: dspec });
  }
  return out;
}
