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

/** kube's limit on all of an object's annotations together: keys and values, in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * Problems with an object's labels, annotations (keys qualified names, whatever their case; 256
 * KiB in all), finalizers (qualified names; not both `orphan` and `foregroundDeletion`) and owner
 * references (each complete, with an apiVersion that parses, no Event as owner, at most one
 * controller), as kube's ValidateObjectMeta finds them.
 */
export function metadataProblems(object: Partial<api.KubeObject>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries((object.metadata?.labels ?? {}) as Record<string, unknown>)) {
    const p = labelKeyProblem(key) ?? (typeof value === 'string' ? labelValueProblem(value) : 'label values must be strings');
    if (p) problems.push({ type: 'FieldValueInvalid', field: `metadata.labels`, message: `Invalid value: "${key}": ${p}` });
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries((object.metadata?.annotations ?? {}) as Record<string, unknown>)) {
    const p = labelKeyProblem(key.toLowerCase());
    if (p) problems.push({ type: 'FieldValueInvalid', field: 'metadata.annotations', message: `Invalid value: "${key}": ${p}` });
    if (typeof value !== 'string') problems.push({ type: 'FieldValueInvalid', field: `metadata.annotations`, message: `Invalid value: "${key}": annotation values must be strings` });
    else annotationBytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (annotationBytes > TOTAL_ANNOTATION_SIZE_LIMIT) {
    problems.push({ type: 'FieldValueTooLong', field: 'metadata.annotations', message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
  }
  const finalizers = (Array.isArray(object.metadata?.finalizers) ? object.metadata.finalizers : []) as unknown[];
  for (const finalizer of finalizers) {
    const p = typeof finalizer === 'string' ? labelKeyProblem(finalizer) : 'finalizers must be strings';
    if (p) problems.push({ type: 'FieldValueInvalid', field: 'metadata.finalizers', message: `Invalid value: ${JSON.stringify(finalizer)}: ${p}` });
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    problems.push({ type: 'FieldValueInvalid', field: 'metadata.finalizers', message: `Invalid value: ${JSON.stringify(finalizers)}: finalizer orphan and foregroundDeletion cannot be both set` });
  }
  // Any JSON sent: each reference is checked for what it must have.
  let controller: string | undefined;
  for (const [i, ref] of ((object.metadata?.ownerReferences ?? []) as Array<Partial<api.OwnerReference> | null>).entries()) {
    const field = `metadata.ownerReferences[${i}]`;
    for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) {
      if (!ref?.[f]) problems.push({ type: 'FieldValueRequired', field: `${field}.${f}`, message: 'Required value: must not be empty' });
    }
    const apiVersion = ref?.apiVersion;
    if (typeof apiVersion === 'string' && apiVersion !== '' && !/^([^/]+\/)?[^/]+$/.test(apiVersion)) {
      problems.push({ type: 'FieldValueInvalid', field: `${field}.apiVersion`, message: `Invalid value: ${JSON.stringify(apiVersion)}: must be <group>/<version> or <version>` });
    }
    if (apiVersion === 'v1' && ref?.kind === 'Event') problems.push({ type: 'FieldValueInvalid', field, message: 'Invalid value: /v1, Kind=Event is disallowed from being an owner' });
    if (ref?.controller === true) {
      const name = `${ref.kind}/${ref.name}`;
      if (controller !== undefined) {
        problems.push({ type: 'FieldValueInvalid', field: 'metadata.ownerReferences', message: `Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${name}` });
      } else controller = name;
    }
  }
  return problems;
}
