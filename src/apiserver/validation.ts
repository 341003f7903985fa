// What kube-apiserver checks before an object is stored: names, the few required fields of the
// built-in kinds bosun's clients write, and label syntax. Problems come back as field problems
// for a 422 Invalid.
import type { FieldProblem } from './errors.js';
import type { ResourceType } from './registry.js';
import { labelKeyProblem, labelValueProblem } from './selectors.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** Kinds whose names must be DNS-1123 labels rather than subdomains. */
const LABEL_NAMED = new Set(['namespaces', 'services']);
/** Kinds whose names are paths and may contain ':' (RBAC names such as system:masters). */
const PATH_NAMED = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']);

export function nameProblem(type: ResourceType, name: string): string | undefined {
  if (PATH_NAMED.has(type.resource)) {
    if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) return `may not be '.' or '..' and may not contain '/' or '%'`;
    return name.length === 0 ? 'name or generateName is required' : undefined;
  }
  if (LABEL_NAMED.has(type.resource)) {
    if (name.length > 63 || !DNS1123_LABEL.test(name)) {
      return `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
    }
    return undefined;
  }
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    return `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
  }
  return undefined;
}

type Obj = Record<string, any>;

function metadataProblems(object: Obj): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries((object.metadata?.labels ?? {}) as Record<string, unknown>)) {
    const p = labelKeyProblem(key) ?? (typeof value === 'string' ? labelValueProblem(value) : 'label values must be strings');
    if (p) problems.push({ type: 'FieldValueInvalid', field: `metadata.labels`, message: `Invalid value: "${key}": ${p}` });
  }
  for (const [key, value] of Object.entries((object.metadata?.annotations ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') problems.push({ type: 'FieldValueInvalid', field: `metadata.annotations`, message: `Invalid value: "${key}": annotation values must be strings` });
  }
  for (const [i, ref] of ((object.metadata?.ownerReferences ?? []) as Obj[]).entries()) {
    for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
      if (!ref?.[f]) problems.push({ type: 'FieldValueRequired', field: `metadata.ownerReferences[${i}].${f}`, message: 'Required value' });
    }
  }
  return problems;
}

function containersProblems(containers: unknown, field: string): FieldProblem[] {
  if (!Array.isArray(containers) || containers.length === 0) return [{ type: 'FieldValueRequired', field, message: 'Required value' }];
  const problems: FieldProblem[] = [];
  const names = new Set<string>();
  containers.forEach((c: Obj, i) => {
    if (!c?.name) problems.push({ type: 'FieldValueRequired', field: `${field}[${i}].name`, message: 'Required value' });
    else if (names.has(c.name)) problems.push({ type: 'FieldValueDuplicate', field: `${field}[${i}].name`, message: `Duplicate value: "${c.name}"` });
    else names.add(c.name);
    if (!c?.image) problems.push({ type: 'FieldValueRequired', field: `${field}[${i}].image`, message: 'Required value' });
  });
  return problems;
}

function workloadProblems(object: Obj): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const selector = object.spec?.selector;
  if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) {
    problems.push({ type: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' });
  } else {
    const labels = object.spec?.template?.metadata?.labels ?? {};
    const mismatch = Object.entries(selector.matchLabels ?? {}).some(([k, v]) => labels[k] !== v);
    if (mismatch) problems.push({ type: 'FieldValueInvalid', field: 'spec.template.metadata.labels', message: `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\`` });
  }
  problems.push(...containersProblems(object.spec?.template?.spec?.containers, 'spec.template.spec.containers'));
  if (object.spec?.replicas !== undefined && (!Number.isInteger(object.spec.replicas) || object.spec.replicas < 0)) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(object.spec.replicas)}: must be greater than or equal to 0` });
  }
  return problems;
}

function dataKeyProblems(object: Obj): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const field of ['data', 'binaryData', 'stringData']) {
    for (const [key, value] of Object.entries((object[field] ?? {}) as Record<string, unknown>)) {
      if (!CONFIG_KEY.test(key) || key.length > 253) problems.push({ type: 'FieldValueInvalid', field: `${field}[${key}]`, message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'` });
      if (typeof value !== 'string') problems.push({ type: 'FieldValueInvalid', field: `${field}[${key}]`, message: 'must be a string' });
    }
  }
  if (object.kind === 'Secret') {
    for (const [key, value] of Object.entries((object.data ?? {}) as Record<string, unknown>)) {
      if (typeof value === 'string' && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) problems.push({ type: 'FieldValueInvalid', field: `data[${key}]`, message: 'illegal base64 data' });
    }
  }
  return problems;
}

const KIND_CHECKS: Record<string, (object: Obj) => FieldProblem[]> = {
  pods: (o) => containersProblems(o.spec?.containers, 'spec.containers'),
  deployments: workloadProblems,
  replicasets: workloadProblems,
  daemonsets: workloadProblems,
  statefulsets: workloadProblems,
  jobs: (o) => containersProblems(o.spec?.template?.spec?.containers, 'spec.template.spec.containers'),
  configmaps: dataKeyProblems,
  secrets: dataKeyProblems,
  services: (o) =>
    ((o.spec?.ports ?? []) as Obj[]).flatMap((p, i) =>
      !Number.isInteger(p?.port) || p.port < 1 || p.port > 65535 ? [{ type: 'FieldValueInvalid', field: `spec.ports[${i}].port`, message: `Invalid value: ${JSON.stringify(p?.port)}: must be between 1 and 65535, inclusive` }] : [],
    ),
  leases: (o) =>
    o.spec?.leaseDurationSeconds !== undefined && !(Number.isInteger(o.spec.leaseDurationSeconds) && o.spec.leaseDurationSeconds > 0)
      ? [{ type: 'FieldValueInvalid', field: 'spec.leaseDurationSeconds', message: 'must be greater than 0' }]
      : [],
};

/** Validation problems of a built-in object (metadata for every kind, required fields for some). */
export function builtinProblems(type: ResourceType, object: Obj): FieldProblem[] {
  return [...metadataProblems(object), ...(KIND_CHECKS[type.resource]?.(object) ?? [])];
}

export { metadataProblems };
