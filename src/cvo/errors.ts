// The CVO's errors while syncing a payload, as OpenShift's payload.UpdateError: a stable reason,
// a message an administrator can act on, and the effect the error has on the update — which the
// status computation (status.ts) reads, rather than guessing it from reasons.
import { BosunError } from '../common/errors.js';
import { KubeApiError } from '../kube/client.js';
import type { Manifest } from './payload/manifest.js';
import { describeManifest } from './payload/manifest.js';

/**
 * What an error means for the update (upstream's UpdateEffectType):
 * - `fail`: the update is failing now (Failing=True);
 * - `fail-after-interval`: normal for a while (a Degraded operator during an update), failing
 *   once it has lasted longer than the tolerated interval;
 * - `none`: progress, not failure (an operator still moving to the new version), reported as
 *   slow (Failing=Unknown, SlowClusterOperator) after the expected time;
 * - `report`: worth reporting (Failing=True with it) but not a reason to stop calling the work
 *   progress (a Degraded operator while the cluster is still being installed).
 */
export type UpdateEffect = 'report' | 'none' | 'fail' | 'fail-after-interval';

export class UpdateError extends BosunError {
  readonly effect: UpdateEffect;
  /** The manifest being applied, when the error is about one. */
  readonly manifest?: Manifest;
  /** The ClusterOperator it waits on, for errors about one (named in Progressing). */
  readonly operator?: string;

  constructor(init: { reason: string; message: string; effect: UpdateEffect; manifest?: Manifest; operator?: string }) {
    super(init.reason, init.message);
    this.effect = init.effect;
    this.manifest = init.manifest;
    this.operator = init.operator;
  }
}

/** Any error of a pass as an UpdateError (an unexpected one fails the update). */
export function asUpdateError(e: unknown): UpdateError {
  if (e instanceof UpdateError) return e;
  return new UpdateError({ reason: 'UpdatePayloadFailed', message: (e as Error)?.message ?? String(e), effect: 'fail' });
}

/** Maps an API failure while applying `m` to the reason OpenShift's CVO would report. */
export function toUpdateError(e: unknown, m: Manifest): UpdateError {
  if (e instanceof UpdateError) return e;
  const what = `${describeManifest(m)} (${m.file})`;
  const code = e instanceof KubeApiError ? e.code : (e as { code?: number })?.code;
  const message = e instanceof KubeApiError ? (e.status?.message ?? e.message) : ((e as Error)?.message ?? String(e));
  const fail = (reason: string, text: string) => new UpdateError({ reason, message: `Could not update ${what}: ${text}`, effect: 'fail', manifest: m });
  switch (code) {
    case 404:
      return fail('UpdatePayloadResourceTypeMissing', `the server does not recognize this resource, check extension API servers: ${message}`);
    case 409:
      return fail('UpdatePayloadResourceConflict', `the object is being modified by someone else: ${message}`);
    case 400:
    case 422:
      return fail('UpdatePayloadResourceInvalid', `the object is invalid, possibly due to local cluster configuration: ${message}`);
    case 401:
    case 403:
      return fail('UpdatePayloadResourceForbidden', `the server refused the request: ${message}`);
    default:
      return fail('UpdatePayloadFailed', message);
  }
}
