// The RBAC authorizer: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings evaluated the way
// kube-apiserver's RBAC authorizer does (an allow-only union of rules; a RoleBinding grants only in
// its own namespace, even when it refers to a ClusterRole), plus the Forbidden message in
// Kubernetes' exact wording. The index is updated object by object as RBAC objects change, so a
// changed role takes effect on the next request without a restart.
import type { RequestAttributes, UserInfo } from './request-attributes.js';
import { storedSelectorMatches, type MetaLabelSelector } from '../../common/label-selectors.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Meta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  [field: string]: unknown;
}

export interface RoleObject {
  kind?: string;
  metadata: Meta;
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: MetaLabelSelector[] };
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface BindingObject {
  kind?: string;
  metadata: Meta;
  subjects?: Subject[] | null;
  roleRef: { kind: string; name: string; apiGroup?: string };
}

export type RbacKind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';

export const RBAC_KINDS: readonly RbacKind[] = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];

export interface Decision {
  allowed: boolean;
  /** Why: the binding and role that allowed the request, or empty when nothing did. */
  reason: string;
}

/** One binding's rules as they apply to a user: what `SelfSubjectRulesReview` lists. */
export interface GrantedRules {
  bindingDescription: string;
  rules: PolicyRule[];
}

function has(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((item) => item === '*' || item === value);
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  return (rule.resources ?? []).some((r) =>
    r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`));
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) =>
    u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

/** Whether one rule allows the request (kube's rbac.RuleAllows). */
export function ruleAllows(attrs: RequestAttributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceURLMatches(rule, attrs.path);
  return has(rule.apiGroups, attrs.apiGroup)
    && resourceMatches(rule, attrs.resource, attrs.subresource)
    && ((rule.resourceNames ?? []).length === 0 || (rule.resourceNames ?? []).includes(attrs.name));
}

function subjectApplies(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User': return subject.name === user.name;
    case 'Group': return user.groups.includes(subject.name);
    case 'ServiceAccount':
      return user.name === `system:serviceaccount:${subject.namespace || bindingNamespace}:${subject.name}`;
    default: return false;
  }
}

/** A binding that applies to a user, with the subject that matched. */
interface FoundBinding {
  binding: BindingObject;
  kind: RbacKind;
  namespace: string;
  subject: Subject;
}

/** How a decision names the binding that allowed it. */
function describeBinding({ binding, kind, namespace, subject }: FoundBinding): string {
  const where = kind === 'RoleBinding' ? ` in namespace "${namespace}"` : '';
  return `${kind} "${binding.metadata.name}" of ${binding.roleRef.kind} "${binding.roleRef.name}" to ${subject.kind} "${subject.name}"${where}`;
}

function key(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

/**
 * The current RBAC objects, indexed by namespace/name. Feed it every Role, ClusterRole,
 * RoleBinding and ClusterRoleBinding (`upsert`, `remove`) and ask it `authorize`.
 */
export class RbacIndex {
  private readonly objects: Record<RbacKind, Map<string, RoleObject | BindingObject>> = {
    Role: new Map(), ClusterRole: new Map(), RoleBinding: new Map(), ClusterRoleBinding: new Map(),
  };
  private readonly roleBindingsByNamespace = new Map<string, Map<string, BindingObject>>();
  /** The rules of each aggregated ClusterRole asked for, until a ClusterRole changes (authorize asks on every request). */
  private readonly aggregated = new Map<string, PolicyRule[]>();

  upsert(kind: RbacKind, object: RoleObject | BindingObject): void {
    const k = key(object.metadata.namespace, object.metadata.name);
    this.objects[kind].set(k, object);
    if (kind === 'ClusterRole') this.aggregated.clear();
    if (kind === 'RoleBinding') {
      const ns = object.metadata.namespace ?? '';
      let inNamespace = this.roleBindingsByNamespace.get(ns);
      if (!inNamespace) this.roleBindingsByNamespace.set(ns, inNamespace = new Map());
      inNamespace.set(k, object as BindingObject);
    }
  }

  remove(kind: RbacKind, namespace: string | undefined, name: string): void {
    const k = key(namespace, name);
    this.objects[kind].delete(k);
    if (kind === 'ClusterRole') this.aggregated.clear();
    if (kind === 'RoleBinding') this.roleBindingsByNamespace.get(namespace ?? '')?.delete(k);
  }

  /**
   * The rules of a ClusterRole; an aggregated one gets those of every ClusterRole its selectors
   * match, and a matched role that is itself aggregated gives its own aggregate (kube's aggregation
   * controller writes an aggregate's rules into it, so `admin` gets `edit`'s and `edit` `view`'s).
   * An aggregate's rules are kept until a ClusterRole changes.
   */
  clusterRoleRules(name: string): PolicyRule[] {
    const role = this.objects.ClusterRole.get(key(undefined, name)) as RoleObject | undefined;
    if (!role?.aggregationRule?.clusterRoleSelectors) return role?.rules ?? [];
    let rules = this.aggregated.get(name);
    if (!rules) this.aggregated.set(name, rules = this.gatherRules(name, new Set()));
    return rules;
  }

  /** clusterRoleRules without the cache; `seen` stops a cycle of aggregates. */
  private gatherRules(name: string, seen: Set<string>): PolicyRule[] {
    const role = this.objects.ClusterRole.get(key(undefined, name)) as RoleObject | undefined;
    if (!role || seen.has(name)) return [];
    seen.add(name);
    const selectors = role.aggregationRule?.clusterRoleSelectors;
    if (!selectors) return role.rules ?? [];
    const rules: PolicyRule[] = [];
    for (const other of this.objects.ClusterRole.values() as Iterable<RoleObject>) {
      if (other === role || !selectors.some((s) => storedSelectorMatches(s, other.metadata.labels))) continue;
      rules.push(...(other.aggregationRule ? this.gatherRules(other.metadata.name ?? '', seen) : other.rules ?? []));
    }
    return rules;
  }

  private bindingRules(binding: BindingObject, kind: RbacKind): PolicyRule[] {
    if (binding.roleRef.kind === 'ClusterRole') return this.clusterRoleRules(binding.roleRef.name);
    // A ClusterRoleBinding cannot refer to a namespaced Role.
    if (binding.roleRef.kind !== 'Role' || kind === 'ClusterRoleBinding') return [];
    const role = this.objects.Role.get(key(binding.metadata.namespace, binding.roleRef.name)) as RoleObject | undefined;
    return role?.rules ?? [];
  }

  /** The bindings that apply to the user in `namespace` ('' = cluster-wide only), each with the subject that matched, in order. */
  private *bindingsFor(user: UserInfo, namespace: string): Generator<FoundBinding> {
    for (const b of this.objects.ClusterRoleBinding.values()) {
      const binding = b as BindingObject;
      const subject = (binding.subjects ?? []).find((s) => subjectApplies(s, user, ''));
      if (subject) yield { binding, kind: 'ClusterRoleBinding', namespace: '', subject };
    }
    if (namespace === '') return;
    for (const binding of this.roleBindingsByNamespace.get(namespace)?.values() ?? []) {
      const subject = (binding.subjects ?? []).find((s) => subjectApplies(s, user, namespace));
      if (subject) yield { binding, kind: 'RoleBinding', namespace, subject };
    }
  }

  /** Every binding that applies to the user in `namespace` ('' = cluster-wide only), with its rules. */
  rulesFor(user: UserInfo, namespace: string): GrantedRules[] {
    return [...this.bindingsFor(user, namespace)].map((found) => ({ bindingDescription: describeBinding(found), rules: this.bindingRules(found.binding, found.kind) }));
  }

  /** Allowed by the first binding (in rulesFor's order) with a rule that allows; only that one is described. */
  authorize(attrs: RequestAttributes): Decision {
    for (const found of this.bindingsFor(attrs.user, attrs.resourceRequest ? attrs.namespace : '')) {
      if (this.bindingRules(found.binding, found.kind).some((rule) => ruleAllows(attrs, rule))) return { allowed: true, reason: `RBAC: allowed by ${describeBinding(found)}` };
    }
    return { allowed: false, reason: '' };
  }
}

/**
 * The message of kube-apiserver's 403 for a denied request, e.g.
 * `pods "p" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "default"`.
 */
export function forbiddenMessage(attrs: RequestAttributes, reason = ''): string {
  const who = `User "${attrs.user.name}"`;
  let detail: string;
  if (!attrs.resourceRequest) {
    detail = `${who} cannot ${attrs.verb} path "${attrs.path}"`;
  } else {
    const resource = attrs.subresource === '' ? attrs.resource : `${attrs.resource}/${attrs.subresource}`;
    const scope = attrs.namespace !== '' ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
    detail = `${who} cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" ${scope}`;
  }
  if (reason !== '') detail += `: ${reason}`;
  if (!attrs.resourceRequest) return `forbidden: ${detail}`;
  const qualified = attrs.apiGroup === '' ? attrs.resource : `${attrs.resource}.${attrs.apiGroup}`;
  return attrs.name === '' ? `${qualified} is forbidden: ${detail}` : `${qualified} "${attrs.name}" is forbidden: ${detail}`;
}

/** The 403 `Status` kube-apiserver sends for a denied request. */
export function forbiddenStatus(attrs: RequestAttributes, reason = ''): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  if (attrs.resourceRequest) {
    if (attrs.name !== '') details.name = attrs.name;
    if (attrs.apiGroup !== '') details.group = attrs.apiGroup;
    details.kind = attrs.resource;
  }
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: forbiddenMessage(attrs, reason), reason: 'Forbidden', details, code: 403,
  };
}
