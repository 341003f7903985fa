// The authorization.k8s.io reviews: SubjectAccessReview (may this user do this?),
// SelfSubjectAccessReview (may I? — `kubectl auth can-i`) and SelfSubjectRulesReview (what may I
// do in this namespace? — `kubectl auth can-i --list`). Each takes the review's spec and returns the
// status kube-apiserver would fill in, answered by the server's authorizers (access reviews) or the
// RBAC index (rules reviews).
import type { RbacIndex, PolicyRule } from './rbac.js';
import type { RequestAttributes, UserInfo } from './request-attributes.js';

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface AccessReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  uid?: string;
}

export interface AccessReviewStatus {
  allowed: boolean;
  reason?: string;
  evaluationError?: string;
}

function reviewAttributes(user: UserInfo, spec: AccessReviewSpec): RequestAttributes | string {
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if (r && n) return 'cannot set both resourceAttributes and nonResourceAttributes';
  if (!r && !n) return 'exactly one of nonResourceAttributes or resourceAttributes must be specified';
  const base = {
    user, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: '',
  };
  if (n) return { ...base, resourceRequest: false, verb: n.verb ?? '', path: n.path ?? '' };
  return {
    ...base, resourceRequest: true, verb: r!.verb ?? '', apiGroup: r!.group ?? '', apiVersion: r!.version ?? '',
    resource: r!.resource ?? '', subresource: r!.subresource ?? '', namespace: r!.namespace ?? '', name: r!.name ?? '',
  };
}

/** What answers access reviews: the RBAC index, or the chain of authorizers the server runs. */
export type Authorizes = Pick<RbacIndex, 'authorize'>;

function review(index: Authorizes, user: UserInfo, spec: AccessReviewSpec): AccessReviewStatus {
  const attrs = reviewAttributes(user, spec);
  if (typeof attrs === 'string') return { allowed: false, evaluationError: attrs };
  const decision = index.authorize(attrs);
  return decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false };
}

/** Status of a SubjectAccessReview: the user is the one named in the spec. */
export function subjectAccessReview(index: Authorizes, spec: AccessReviewSpec): AccessReviewStatus {
  return review(index, { name: spec.user ?? '', groups: spec.groups ?? [], uid: spec.uid }, spec);
}

/** Status of a SelfSubjectAccessReview: the user is the one making the request. */
export function selfSubjectAccessReview(index: Authorizes, requester: UserInfo, spec: AccessReviewSpec): AccessReviewStatus {
  return review(index, requester, spec);
}

export interface SubjectRulesReviewStatus {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[];
  incomplete: boolean;
}

/** Status of a SelfSubjectRulesReview for `spec.namespace`: every rule granted there, as kube lists them. */
export function selfSubjectRulesReview(index: RbacIndex, requester: UserInfo, spec: { namespace?: string }): SubjectRulesReviewStatus {
  const status: SubjectRulesReviewStatus = { resourceRules: [], nonResourceRules: [], incomplete: false };
  const rules: PolicyRule[] = index.rulesFor(requester, spec.namespace ?? '').flatMap((g) => g.rules);
  for (const rule of rules) {
    if ((rule.nonResourceURLs ?? []).length > 0) {
      status.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs! });
    } else {
      const resourceRule: SubjectRulesReviewStatus['resourceRules'][number] = {
        verbs: rule.verbs, apiGroups: rule.apiGroups ?? [], resources: rule.resources ?? [],
      };
      if ((rule.resourceNames ?? []).length > 0) resourceRule.resourceNames = rule.resourceNames;
      status.resourceRules.push(resourceRule);
    }
  }
  return status;
}
