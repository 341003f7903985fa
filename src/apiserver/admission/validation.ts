// What kube-apiserver checks on every object before it is stored, whatever its kind: the name
// (by the kind's naming rule) and metadata (labels, annotations, owner references). Each kind's
// own fields are checked by its strategy (kinds/). Problems come back as field problems for a
// 422 Invalid.
//
// admission/ holds the checks every write passes whatever its kind: this file (names and
// metadata) and the size limit of ConfigMaps and Secrets (object-size.ts).
import type { FieldProblem } from '../errors.js';
import type { NameRule } from '../kinds/strategy.js';
import { labelKeyProblem, labelValueProblem } from '../../common/label-selectors.js';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../../common/dns-names.js';

/** Why `name` is not a valid name under `rule`, or undefined. */
export function nameProblem(rule: NameRule, name: string): string | undefined {
  if (rule === 'path') {
    if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) return `may not be '.' or '..' and may not contain '/' or '%'`;
    return name.length === 0 ? 'name or generateName is required' : undefined;
  }
  if (rule === 'label') {
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

import type * as api from '../../api/index.js';

/** Problems with an object's labels, annotations and owner references. */
export function metadataProblems(object: Partial<api.KubeObject>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries((object.metadata?.labels ?? {}) as Record<string, unknown>)) {
    const p = labelKeyProblem(key) ?? (typeof value === 'string' ? labelValueProblem(value) : 'label values must be strings');
    if (p) problems.push({ type: 'FieldValueInvalid', field: `metadata.labels`, message: `Invalid value: "${key}": ${p}` });
  }
  for (const [key, value] of Object.entries((object.metadata?.annotations ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') problems.push({ type: 'FieldValueInvalid', field: `metadata.annotations`, message: `Invalid value: "${key}": annotation values must be strings` });
  }
  // Any JSON sent: each reference is checked for what it must have.
  for (const [i, ref] of ((object.metadata?.ownerReferences ?? []) as Array<Partial<api.OwnerReference> | null>).entries()) {
    for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) {
      if (!ref?.[f]) problems.push({ type: 'FieldValueRequired', field: `metadata.ownerReferences[${i}].${f}`, message: 'Required value' });
    }
  }
  return problems;
}
