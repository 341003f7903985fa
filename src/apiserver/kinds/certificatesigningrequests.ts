// CertificateSigningRequests (certificates.k8s.io/v1, cluster-scoped, short name csr), as
// kube-apiserver's registry/certificates strategy keeps them: the requester's identity recorded
// in spec on create, spec immutable afterwards, the `status` subresource for the signer
// (certificate, Failed) that cannot touch the approval, the `approval` subresource for approvers
// that changes only conditions; validation of the request, signer name, usages, duration,
// conditions and certificate; and the columns of `kubectl get csr`.
import type * as api from '../../api/index.js';
import type { FieldProblem } from '../errors.js';
import { column, AGE_COLUMN, ageCell, humanDuration, NAME_COLUMN } from '../printing/columns.js';
import { KEY_USAGES, parseCertificateRequest, pemBlocks, RequestError } from '../certificates/request.js';
import { builtinType, replaceStatus, type KindStrategy } from './strategy.js';
import { rfc3339 } from '../../common/time.js';

const APPROVAL_TYPES = ['Approved', 'Denied'];
const TRUE_ONLY_TYPES = [...APPROVAL_TYPES, 'Failed'];
const LEGACY_SIGNER = 'kubernetes.io/legacy-unknown';
const QUALIFIED_SIGNER = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?(\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)*$/;
const MIN_EXPIRATION_SECONDS = 600;

const now = (): string => rfc3339();

type CSR = api.CertificateSigningRequest;
type CsrCondition = NonNullable<NonNullable<CSR['status']>['conditions']>[number];

const conditionsOf = (o: Pick<CSR, 'status'> | undefined): CsrCondition[] => (Array.isArray(o?.status?.conditions) ? o.status.conditions : []);
const hasTrue = (o: CSR | undefined, type: string): boolean => conditionsOf(o).some((c) => c?.type === type && c?.status === 'True');

/** What `kubectl get csr` shows as CONDITION (kube's extractCSRStatus): the decision, then Failed and Issued. */
export function csrCondition(o: CSR): string {
  const types = new Set(conditionsOf(o).map((c) => c?.type));
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (o.status?.certificate) status += ',Issued';
  return status;
}

/** Fills in condition timestamps the writer left out (kube's populateConditionTimestamps). */
function populateConditionTimestamps(next: CSR, previous: CSR): void {
  const at = now();
  for (const c of conditionsOf(next)) {
    if (typeof c !== 'object' || c === null) continue;
    c.lastUpdateTime ||= at;
    if (!c.lastTransitionTime) {
      const before = conditionsOf(previous).find((p) => p?.type === c.type);
      c.lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : at;
    }
  }
}

/** A status update: the signer's view, which keeps spec and the Approved/Denied decision as stored. */
function statusUpdate(incoming: CSR, previous: CSR): CSR {
  const next = replaceStatus({ status: structuredClone(incoming.status ?? {}) }, previous);
  const kept = conditionsOf(previous).filter((c) => APPROVAL_TYPES.includes(c.type));
  const status = (next.status ??= {});
  status.conditions = [...conditionsOf(next).filter((c) => !APPROVAL_TYPES.includes(c?.type)), ...kept];
  if (status.conditions?.length === 0) delete status.conditions;
  populateConditionTimestamps(next, previous);
  return next;
}

/** An approval update (`kubectl certificate approve|deny`): only the conditions change. */
function approvalUpdate(incoming: CSR, previous: CSR): CSR {
  const next = structuredClone(previous);
  const status: NonNullable<CSR['status']> = (next.status = { ...(previous.status ?? {}), conditions: structuredClone(conditionsOf(incoming)) });
  if (status.conditions?.length === 0) delete status.conditions;
  populateConditionTimestamps(next, previous);
  return next;
}

function specProblems(spec: Partial<CSR['spec']>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (typeof spec.request !== 'string' || spec.request === '') {
    problems.push({ type: 'FieldValueRequired', field: 'spec.request', message: 'Required value' });
  } else {
    // The request travels base64-encoded in JSON, as a []byte field does.
    const pem = Buffer.from(spec.request, 'base64').toString('utf8');
    try {
      parseCertificateRequest(pem);
    } catch (e) {
      if (!(e instanceof RequestError)) throw e;
      problems.push({ type: 'FieldValueInvalid', field: 'spec.request', message: `Invalid value: []byte{...}: ${e.message}` });
    }
  }
  if (typeof spec.signerName !== 'string' || spec.signerName === '') {
    problems.push({ type: 'FieldValueRequired', field: 'spec.signerName', message: 'Required value' });
  } else if (spec.signerName === LEGACY_SIGNER) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.signerName', message: `Invalid value: "${spec.signerName}": the legacy signerName is not allowed via this API version` });
  } else if (spec.signerName.length > 571 || !QUALIFIED_SIGNER.test(spec.signerName)) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.signerName', message: `Invalid value: "${spec.signerName}": must be a fully qualified domain and path of the form 'example.com/signer-name'` });
  }
  if (!Array.isArray(spec.usages) || spec.usages.length === 0) {
    problems.push({ type: 'FieldValueRequired', field: 'spec.usages', message: 'Required value' });
  } else {
    const seen = new Set<string>();
    spec.usages.forEach((u: unknown, i: number) => {
      if (typeof u !== 'string' || !(u in KEY_USAGES)) {
        problems.push({ type: 'FieldValueNotSupported', field: `spec.usages[${i}]`, message: `Unsupported value: ${JSON.stringify(u)}: supported values: ${Object.keys(KEY_USAGES).map((k) => `"${k}"`).join(', ')}` });
      } else if (seen.has(u)) {
        problems.push({ type: 'FieldValueDuplicate', field: `spec.usages[${i}]`, message: `Duplicate value: "${u}"` });
      }
      if (typeof u === 'string') seen.add(u);
    });
  }
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds !== null && !(Number.isInteger(spec.expirationSeconds) && spec.expirationSeconds >= MIN_EXPIRATION_SECONDS)) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${JSON.stringify(spec.expirationSeconds)}: may not specify a duration less than ${MIN_EXPIRATION_SECONDS} seconds (10 minutes)` });
  }
  return problems;
}

function statusProblems(object: CSR, previous: CSR | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const conditions = object.status?.conditions;
  if (conditions !== undefined && !Array.isArray(conditions)) return [{ type: 'FieldValueInvalid', field: 'status.conditions', message: 'Invalid value: must be a list' }];
  const seen = new Set<string>();
  conditionsOf(object).forEach((c, i) => {
    const field = `status.conditions[${i}]`;
    if (typeof c?.type !== 'string' || c.type === '') {
      problems.push({ type: 'FieldValueRequired', field: `${field}.type`, message: 'Required value' });
      return;
    }
    if (TRUE_ONLY_TYPES.includes(c.type)) {
      if (c.status !== 'True') problems.push({ type: 'FieldValueNotSupported', field: `${field}.status`, message: `Unsupported value: ${JSON.stringify(c.status ?? '')}: supported values: "True"` });
      if (seen.has(c.type)) problems.push({ type: 'FieldValueDuplicate', field: `${field}.type`, message: `Duplicate value: "${c.type}"` });
    } else if (!['True', 'False', 'Unknown'].includes(c.status)) {
      problems.push({ type: 'FieldValueNotSupported', field: `${field}.status`, message: `Unsupported value: ${JSON.stringify(c.status ?? '')}: supported values: "False", "True", "Unknown"` });
    }
    seen.add(c.type);
  });
  if (seen.has('Approved') && seen.has('Denied')) {
    problems.push({ type: 'FieldValueInvalid', field: 'status.conditions', message: 'Invalid value: Approved and Denied conditions are mutually exclusive' });
  }
  for (const type of APPROVAL_TYPES) {
    if (hasTrue(previous, type) && !hasTrue(object, type)) {
      problems.push({ type: 'FieldValueForbidden', field: 'status.conditions', message: `Forbidden: updates may not remove a condition of type "${type}"` });
    }
  }
  const certificate = object.status?.certificate;
  if (certificate !== undefined && certificate !== null && certificate !== '') {
    const pem = typeof certificate === 'string' ? Buffer.from(certificate, 'base64').toString('utf8') : '';
    const blocks = pemBlocks(pem);
    if (blocks.length === 0 || blocks.some((b) => b.label !== 'CERTIFICATE')) {
      problems.push({ type: 'FieldValueInvalid', field: 'status.certificate', message: 'Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block and nothing else' });
    }
    const before = previous?.status?.certificate;
    if (before && before !== certificate) {
      problems.push({ type: 'FieldValueForbidden', field: 'status.certificate', message: 'Forbidden: updates may not modify existing certificate content' });
    }
  }
  return problems;
}

export const certificatesigningrequests: KindStrategy<api.CertificateSigningRequest> = {
  type: builtinType('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', { namespaced: false, shortNames: ['csr'], status: true, fieldSelectors: ['spec.signerName'] }),
  names: 'path',
  defaults(object, previous, requester) {
    // What a spec sent lacks is refused by validation, which follows.
    object.spec = typeof object.spec === 'object' && object.spec !== null ? object.spec : ({} as CSR['spec']);
    if (previous) {
      // Spec is immutable once created; only metadata changes through the main endpoint.
      object.spec = structuredClone(previous.spec);
      return;
    }
    // Who asked is recorded by the server, never taken from the client.
    delete object.spec.username;
    delete object.spec.uid;
    delete object.spec.groups;
    delete object.spec.extra;
    if (requester) {
      object.spec.username = requester.name;
      if (requester.uid) object.spec.uid = requester.uid;
      object.spec.groups = [...requester.groups];
    }
    object.status = {};
  },
  validate(object, previous) {
    return [...(previous ? [] : specProblems(object.spec ?? {})), ...statusProblems(object, previous)];
  },
  subresourceUpdates: { status: statusUpdate, approval: approvalUpdate },
  printer: {
    columns: [NAME_COLUMN, AGE_COLUMN, column('SignerName'), column('Requestor'), column('RequestedDuration'), column('Condition')],
    cells: (o, nowMs) => [
      o.metadata.name, ageCell(o, nowMs), o.spec?.signerName ?? '', o.spec?.username ?? '',
      typeof o.spec?.expirationSeconds === 'number' ? humanDuration(o.spec.expirationSeconds * 1000) : '<none>', csrCondition(o),
    ],
  },
};

/** Whether a CSR carries a true condition of `type` (Approved, Denied, Failed). */
export const csrHasCondition = hasTrue;
