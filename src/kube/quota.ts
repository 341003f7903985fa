// Resource quota accounting as Kubernetes does it (its quota evaluators), shared by the API
// server's ResourceQuota admission and the controller manager's quota controller: what one object
// uses of which quota resource, which quotas an object falls under (scopes), what a pod must say
// for a quota on CPU or memory to count it, and usage written back as quantities.
//
// Resources: `pods` (pods not yet Succeeded or Failed) and the compute resources they request or
// limit (`requests.cpu`, `cpu`, `limits.cpu`, the same for `memory` and `ephemeral-storage`);
// `services` with `services.loadbalancers` and `services.nodeports`; `persistentvolumeclaims` with
// `requests.storage` and, per StorageClass, `<class>.storageclass.storage.k8s.io/requests.storage`
// and `<class>.storageclass.storage.k8s.io/persistentvolumeclaims`; `configmaps`, `secrets`,
// `replicationcontrollers`, `resourcequotas`; and `count/<resource>`
// (core) or `count/<resource>.<group>` for any kind, every object counted. Amounts are kept in
// thousandths as bigint (sums of bytes may pass 2^53).
import type * as api from '../api/index.js';
import { formatMilli, quantityMilli } from './quantity.js';
import { claimClass } from './storage.js';

export type Usage = Map<string, bigint>;

const ONE = 1000n;

/** The quota resources kube counts objects of by their plain name (its "legacy" object counts). */
const COUNTED_BY_NAME = ['pods', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas'];

const COMPUTE = ['cpu', 'memory', 'ephemeral-storage'];

/** The quota resources a pod can use. */
export const POD_RESOURCES = ['pods', 'count/pods', ...COMPUTE, ...COMPUTE.map((r) => `requests.${r}`), ...COMPUTE.map((r) => `limits.${r}`)];

/** The scopes a quota may have, and the resources a quota with them may limit. */
export const QUOTA_SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];

/** Resources whose amounts are bytes (printed with binary suffixes). */
export const isBytes = (resource: string): boolean => /(^|\.)(memory|ephemeral-storage|storage)$/.test(resource);

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise. */
export const countName = (group: string, resource: string): string => (group ? `count/${resource}.${group}` : `count/${resource}`);

/** The per-class resources of claims: `<class>.storageclass.storage.k8s.io/requests.storage` and `/persistentvolumeclaims`. */
const CLASS_RESOURCE = /^[^/]+\.storageclass\.storage\.k8s\.io\/(requests\.storage|persistentvolumeclaims)$/;
const CLAIM_RESOURCES = ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'];

/** The kind whose objects use a quota resource (pods for compute and extended resources, claims for storage), as group and resource. */
export function usedBy(name: string): { group: string; resource: string } {
  if (CLAIM_RESOURCES.includes(name) || CLASS_RESOURCE.test(name)) return { group: '', resource: 'persistentvolumeclaims' };
  if (name === 'pods' || name.startsWith('requests.') || name.startsWith('limits.') || COMPUTE.includes(name) || (name.includes('/') && !name.startsWith('count/'))) return { group: '', resource: 'pods' };
  if (name.startsWith('services')) return { group: '', resource: 'services' };
  const rest = name.startsWith('count/') ? name.slice('count/'.length) : name;
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

/** Whether a name is one a quota may limit: the ones above, `count/…`, or an extended resource (`example.com/gpu`, `requests.example.com/gpu`). */
export function isQuotaResourceName(name: string): boolean {
  if (POD_RESOURCES.includes(name) || COUNTED_BY_NAME.includes(name) || ['services.loadbalancers', 'services.nodeports', 'requests.storage'].includes(name)) return true;
  if (/^count\/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)) return true;
  return /^(requests\.|limits\.)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(name);
}

function add(usage: Usage, name: string, milli: bigint): void {
  usage.set(name, (usage.get(name) ?? 0n) + milli);
}

/** A pod in a terminal phase uses no compute quota (only its object count). */
export function podIsLive(pod: api.Pod): boolean {
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

type ResourceMap = Record<string, string | number> | undefined;

/**
 * A pod's requests or limits as kube counts them (component-helpers' PodRequests / PodLimits): its
 * containers' sum and its sidecars' (init containers with restartPolicy Always), at least what each
 * other init container needs beside the sidecars started before it, plus the pod's overhead (for
 * limits, only on resources something limits).
 */
export function podAmounts(pod: api.Pod, which: 'requests' | 'limits'): Usage {
  const of = (c: api.Container): Usage => {
    const amounts: Usage = new Map();
    for (const [name, value] of Object.entries((c.resources?.[which] as ResourceMap) ?? {})) add(amounts, name, quantityMilli(value));
    return amounts;
  };
  const atLeast = (into: Usage, other: Usage) => {
    for (const [name, amount] of other) if (amount > (into.get(name) ?? 0n)) into.set(name, amount);
  };
  const total: Usage = new Map();
  for (const c of pod.spec?.containers ?? []) for (const [name, amount] of of(c)) add(total, name, amount);
  const sidecars: Usage = new Map();
  const initPeak: Usage = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    const amounts = of(c);
    if (c.restartPolicy === 'Always') {
      for (const [name, amount] of amounts) {
        add(total, name, amount);
        add(sidecars, name, amount);
      }
      atLeast(initPeak, sidecars);
    } else {
      for (const [name, amount] of sidecars) add(amounts, name, amount);
      atLeast(initPeak, amounts);
    }
  }
  atLeast(total, initPeak);
  for (const [name, value] of Object.entries((pod.spec?.overhead as ResourceMap) ?? {})) {
    if (which === 'requests' || total.has(name)) add(total, name, quantityMilli(value));
  }
  return total;
}

function podUsage(pod: api.Pod): Usage {
  const usage: Usage = new Map([['count/pods', ONE]]);
  if (!podIsLive(pod)) return usage;
  usage.set('pods', ONE);
  for (const [name, amount] of podAmounts(pod, 'requests')) {
    usage.set(`requests.${name}`, amount);
    if (COMPUTE.includes(name)) usage.set(name, amount);
  }
  for (const [name, amount] of podAmounts(pod, 'limits')) usage.set(`limits.${name}`, amount);
  return usage;
}

function claimUsage(claim: api.PersistentVolumeClaim): Usage {
  const usage: Usage = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
  const storage = claim.spec?.resources?.requests?.storage;
  const requested = storage === undefined ? undefined : quantityMilli(storage);
  if (requested !== undefined) usage.set('requests.storage', requested);
  const className = claimClass(claim);
  if (className) {
    usage.set(`${className}.storageclass.storage.k8s.io/persistentvolumeclaims`, ONE);
    if (requested !== undefined) usage.set(`${className}.storageclass.storage.k8s.io/requests.storage`, requested);
  }
  return usage;
}

function serviceUsage(service: api.Service): Usage {
  const usage: Usage = new Map([['services', ONE], ['count/services', ONE]]);
  const type = service.spec?.type;
  const ports = BigInt((service.spec?.ports ?? []).length);
  if (type === 'LoadBalancer') {
    usage.set('services.loadbalancers', ONE);
    if (service.spec?.allocateLoadBalancerNodePorts !== false) usage.set('services.nodeports', ports * ONE);
  } else if (type === 'NodePort') usage.set('services.nodeports', ports * ONE);
  return usage;
}

/** What one object of `group`/`resource` uses. */
export function usageOf(group: string, resource: string, object: api.KubeObject): Usage {
  if (group === '' && resource === 'pods') return podUsage(object as api.Pod);
  if (group === '' && resource === 'services') return serviceUsage(object as api.Service);
  if (group === '' && resource === 'persistentvolumeclaims') return claimUsage(object as api.PersistentVolumeClaim);
  const usage: Usage = new Map([[countName(group, resource), ONE]]);
  if (group === '' && COUNTED_BY_NAME.includes(resource)) usage.set(resource, ONE);
  return usage;
}

/** Whether a quota resource can be used by objects of `group`/`resource`. */
export function concerns(group: string, resource: string, name: string): boolean {
  const user = usedBy(name);
  if (group === '' && resource === 'pods') return user.resource === 'pods' && user.group === '';
  if (group === '' && resource === 'persistentvolumeclaims') return user.resource === 'persistentvolumeclaims' && user.group === '';
  if (group === '' && resource === 'services') return ['services', 'count/services', 'services.loadbalancers', 'services.nodeports'].includes(name);
  if (name === countName(group, resource)) return true;
  return group === '' && name === resource && COUNTED_BY_NAME.includes(resource);
}

const isBestEffort = (pod: api.Pod) => [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].every((c) => Object.keys(c.resources?.requests ?? {}).length === 0 && Object.keys(c.resources?.limits ?? {}).length === 0);
const isTerminating = (pod: api.Pod) => typeof pod.spec?.activeDeadlineSeconds === 'number' && pod.spec.activeDeadlineSeconds >= 0;
const crossNamespaceAffinity = (pod: api.Pod) => {
  const terms = [
    ...(pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(pod.spec?.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
    ...(pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(pod.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
  ];
  return terms.some((t) => (t?.namespaces ?? []).length > 0 || t?.namespaceSelector !== undefined);
};

/** A quota's scopes, and its scopeSelector's expressions, as one list of requirements. */
function scopeRequirements(quota: api.ResourceQuota): api.ScopedResourceSelectorRequirement[] {
  return [
    ...(quota.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists' })),
    ...(quota.spec?.scopeSelector?.matchExpressions ?? []),
  ];
}

function scopeMatches(requirement: api.ScopedResourceSelectorRequirement, pod: api.Pod): boolean {
  const { scopeName, operator, values = [] } = requirement;
  if (scopeName === 'PriorityClass') {
    const name = pod.spec?.priorityClassName ?? '';
    if (operator === 'Exists') return name !== '';
    if (operator === 'DoesNotExist') return name === '';
    if (operator === 'In') return values.includes(name);
    return !values.includes(name);
  }
  const holds = scopeName === 'Terminating' ? isTerminating(pod)
    : scopeName === 'NotTerminating' ? !isTerminating(pod)
      : scopeName === 'BestEffort' ? isBestEffort(pod)
        : scopeName === 'NotBestEffort' ? !isBestEffort(pod)
          : scopeName === 'CrossNamespacePodAffinity' ? crossNamespaceAffinity(pod) : false;
  return operator === 'DoesNotExist' ? !holds : holds;
}

/**
 * Whether `quota` applies to this object: it limits a resource the object can use, and (for pods)
 * the pod is in every one of its scopes; a quota with scopes applies to pods only.
 */
export function quotaApplies(quota: api.ResourceQuota, hard: Iterable<string>, group: string, resource: string, object: api.KubeObject): boolean {
  if (![...hard].some((name) => concerns(group, resource, name))) return false;
  const requirements = scopeRequirements(quota);
  if (requirements.length === 0) return true;
  if (group !== '' || resource !== 'pods') return false;
  return requirements.every((r) => scopeMatches(r, object as api.Pod));
}

/**
 * For a quota on CPU or memory, each container must say the amount, or the pod is refused (kube
 * kept this from before QoS): "must specify limits.cpu for: app; requests.memory for: app,sidecar".
 */
export function podConstraintProblem(pod: api.Pod, hard: Iterable<string>): string | undefined {
  const required = [...hard].filter((n) => ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'].includes(n));
  const missing = new Map<string, string[]>();
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const name of required) {
      const [which, res] = name.includes('.') ? (name.split('.') as ['requests' | 'limits', string]) : ['requests' as const, name];
      if (((c.resources?.[which] as ResourceMap) ?? {})[res] === undefined) missing.set(name, [...(missing.get(name) ?? []), c.name]);
    }
  }
  if (missing.size === 0) return undefined;
  return `must specify ${[...missing.keys()].sort().map((n) => `${n} for: ${[...new Set(missing.get(n))].sort().join(',')}`).join('; ')}`;
}

/** A ResourceList (status.hard, status.used) read into thousandths; unreadable amounts left out. */
export function readAmounts(list: Record<string, unknown> | undefined): Usage {
  const usage: Usage = new Map();
  for (const [name, value] of Object.entries(list ?? {})) {
    try {
      usage.set(name, quantityMilli(value as string));
    } catch {
      // Validation keeps these out of spec; status is the controller's.
    }
  }
  return usage;
}

/** Usage written back as a ResourceList, keys sorted. */
export function writeAmounts(usage: Usage): Record<string, string> {
  return Object.fromEntries([...usage.keys()].sort().map((name) => [name, formatMilli(usage.get(name)!, isBytes(name))]));
}

/** `name=amount` pairs sorted and comma-joined, as kube's quota messages print a ResourceList. */
export function printAmounts(usage: Usage): string {
  return Object.entries(writeAmounts(usage)).map(([k, v]) => `${k}=${v}`).join(',');
}
