// Kubernetes `Status` errors: every failure the API server answers with is one of these, so that
// kubectl and client-node print the message and act on the reason and code.

import { BosunError } from '../common/errors.js';
/** A cause as it appears in JSON (metav1.StatusCause's type is serialised as `reason`). */
export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

/** A problem found by validation, before it becomes a StatusCause. */
export interface FieldProblem {
  type?: string;
  message: string;
  field?: string;
}

/** kube's "Unsupported value" problem (field.NotSupported): the value, and the values allowed. */
export function unsupported(field: string, value: unknown, values: readonly string[]): FieldProblem {
  return { type: 'FieldValueNotSupported', field, message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${values.map((v) => JSON.stringify(v)).join(', ')}` };
}

/** kube's "Invalid value" problem (field.Invalid): the value, and why. */
export function invalidValue(field: string, value: unknown, detail: string): FieldProblem {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

/** An error the API server answers with; its reason is the Kubernetes Status reason. */
export class ApiError extends BosunError {
  constructor(
    readonly code: number,
    reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(reason, message);
  }

  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: withoutEmpty(this.details) } : {}),
      code: this.code,
    };
  }
}

/** StatusDetails as Go writes them: every field `omitempty` (no `group: ""` for the core group). */
function withoutEmpty(details: StatusDetails): StatusDetails {
  const { name, group, kind, causes, retryAfterSeconds } = details;
  return {
    ...(name ? { name } : {}),
    ...(group ? { group } : {}),
    ...(kind ? { kind } : {}),
    ...(causes && causes.length > 0 ? { causes } : {}),
    ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
  };
}

/** How kube-apiserver names a resource in messages: `pods`, `deployments.apps`. */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export const errors = {
  notFound: (resource: string, group: string, name: string) =>
    new ApiError(404, 'NotFound', `${qualifiedResource(resource, group)} "${name}" not found`, { name, group, kind: resource }),
  alreadyExists: (resource: string, group: string, name: string) =>
    new ApiError(409, 'AlreadyExists', `${qualifiedResource(resource, group)} "${name}" already exists`, { name, group, kind: resource }),
  conflict: (resource: string, group: string, name: string) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, group, kind: resource },
    ),
  invalid: (kind: string, group: string, name: string, causes: FieldProblem[]) =>
    new ApiError(
      422,
      'Invalid',
      `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`,
      { name, group, kind, causes: causes.map((c): StatusCause => ({ reason: c.type ?? 'FieldValueInvalid', message: c.message, field: c.field })) },
    ),
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  forbidden: (message: string) => new ApiError(403, 'Forbidden', message),
  /** An admission refusal of one object, as kube's admission.NewForbidden words it: `pods "web" is forbidden: …`. */
  forbiddenObject: (resource: string, group: string, name: string, reason: string) =>
    new ApiError(403, 'Forbidden', `${qualifiedResource(resource, group)} "${name}" is forbidden: ${reason}`, { name, group, kind: resource }),
  methodNotAllowed: (method: string, what: string) => new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method} ${what})`),
  notAcceptable: (message: string) => new ApiError(406, 'NotAcceptable', message),
  gone: (message: string) => new ApiError(410, 'Expired', message),
  tooLarge: (message: string) => new ApiError(413, 'RequestEntityTooLarge', message),
  unsupportedMediaType: (contentType: string) => new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got "${contentType}")`),
  pathNotFound: (path: string) => new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`),
  internal: (message: string) => new ApiError(500, 'InternalError', `Internal error occurred: ${message}`),
};
