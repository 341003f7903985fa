// ResourceQuotas (v1): kube's validation (resource names a quota may limit, non-negative
// quantities, known scopes that do not contradict each other, scope selectors well formed, a
// quota with scopes limiting only what pods use) and kubectl's REQUEST / LIMIT columns
// (`pods: 1/10, requests.cpu: 500m/2`), read from the status the quota controller writes.
import type * as api from '../../api/index.js';
import { POD_RESOURCES, QUOTA_SCOPES, isQuotaResourceName } from '../../kube/quota.js';
import { readResourceList } from './resource-lists.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** A quota's ResourceList: names a quota may limit, each with a non-negative quantity. */
function resourceListProblems(list: unknown, field: string): FieldProblem[] {
  const names = list && typeof list === 'object' && !Array.isArray(list) ? Object.keys(list) : [];
  return [
    ...names.filter((name) => !isQuotaResourceName(name)).map((name): FieldProblem => ({ type: 'FieldValueInvalid', field: `${field}[${name}]`, message: `Invalid value: ${JSON.stringify(name)}: must be a standard resource for quota` })),
    ...readResourceList(list, field).problems,
  ];
}

function scopeProblems(spec: NonNullable<api.ResourceQuota['spec']>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const scopes = [...(spec.scopes ?? []), ...(spec.scopeSelector?.matchExpressions ?? []).map((e) => e.scopeName)];
  (spec.scopes ?? []).forEach((scope, i) => {
    if (!QUOTA_SCOPES.includes(scope)) problems.push({ type: 'FieldValueInvalid', field: `spec.scopes[${i}]`, message: `Invalid value: ${JSON.stringify(scope)}: unsupported scope` });
  });
  (spec.scopeSelector?.matchExpressions ?? []).forEach((e, i) => {
    const field = `spec.scopeSelector.matchExpressions[${i}]`;
    if (!QUOTA_SCOPES.includes(e.scopeName)) problems.push({ type: 'FieldValueInvalid', field: `${field}.scopeName`, message: `Invalid value: ${JSON.stringify(e.scopeName)}: unsupported scope` });
    if (!OPERATORS.includes(e.operator)) {
      problems.push({ type: 'FieldValueNotSupported', field: `${field}.operator`, message: `Unsupported value: ${JSON.stringify(e.operator)}: supported values: "DoesNotExist", "Exists", "In", "NotIn"` });
    } else if ((e.operator === 'In' || e.operator === 'NotIn') !== (e.values ?? []).length > 0) {
      problems.push(e.operator === 'In' || e.operator === 'NotIn'
        ? { type: 'FieldValueRequired', field: `${field}.values`, message: 'Required value: must be at least one value when `operator` is \'In\' or \'NotIn\' for scope selector' }
        : { type: 'FieldValueInvalid', field: `${field}.values`, message: 'Invalid value: must be no value when `operator` is \'Exist\' or \'DoesNotExist\' for scope selector' });
    }
    if (e.scopeName !== 'PriorityClass' && (e.operator === 'In' || e.operator === 'NotIn')) {
      problems.push({ type: 'FieldValueInvalid', field: `${field}.operator`, message: `Invalid value: ${JSON.stringify(e.operator)}: must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity` });
    }
  });
  const both = (a: string, b: string) => scopes.includes(a) && scopes.includes(b);
  if (both('Terminating', 'NotTerminating') || both('BestEffort', 'NotBestEffort')) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.scopes', message: `Invalid value: ${JSON.stringify(scopes)}: conflicting scopes` });
  }
  if (scopes.length > 0) {
    const allowed = scopes.includes('BestEffort') ? ['pods', 'count/pods'] : POD_RESOURCES;
    for (const name of Object.keys(spec.hard ?? {})) {
      if (!allowed.includes(name) && !(name.includes('/') && !name.startsWith('count/') && !scopes.includes('BestEffort'))) {
        problems.push({ type: 'FieldValueInvalid', field: `spec.hard[${name}]`, message: `Invalid value: ${JSON.stringify(name)}: unsupported scope applied to resource` });
      }
    }
  }
  return problems;
}

/** kubectl's columns: each limited resource as used/hard, the limits.* ones in LIMIT. */
function usageColumns(o: api.ResourceQuota): [string, string] {
  const hard = o.status?.hard ?? {};
  const used = o.status?.used ?? {};
  const requests: string[] = [];
  const limits: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    (name.startsWith('limits.') ? limits : requests).push(`${name}: ${used[name] ?? '0'}/${hard[name]}`);
  }
  return [requests.join(', '), limits.join(', ')];
}

export const resourcequotas: KindStrategy<api.ResourceQuota> = {
  type: builtinType('', 'v1', 'resourcequotas', 'ResourceQuota', { status: true, shortNames: ['quota'] }),
  validate: (o) => [
    ...resourceListProblems(o.spec?.hard, 'spec.hard'),
    ...resourceListProblems(o.status?.hard, 'status.hard'),
    ...resourceListProblems(o.status?.used, 'status.used'),
    ...scopeProblems(o.spec ?? {}),
  ],
  printer: {
    columns: [NAME_COLUMN, AGE_COLUMN, column('Request'), column('Limit')],
    cells: (o, now) => [o.metadata.name, ageCell(o, now), ...usageColumns(o)],
  },
};
