// The CVO's apply engine: one payload manifest at a time, through the Kubernetes API. Creates
// what is missing, merges with the per-kind semantics of resource-merge/ (writing only when
// something the manifest sets differs), deletes what the payload marks for deletion, waits for
// CRDs to be Established, Jobs to complete and ClusterOperators to report healthy, and turns
// every failure into an UpdateError with a reason an administrator can act on.
import * as k8s from '@kubernetes/client-node';
import type { Manifest } from './payload/manifest.js';
import { describeManifest } from './payload/manifest.js';
import { applyMode } from './payload/inclusion.js';
import { merge } from './resource-merge/merge.js';
import { sleep } from '../common/sleep.js';
import { forClient, fromClient } from '../kube/client-node-compat.js';

type Obj = Record<string, any>;

/** An error with a stable reason (UpdatePayloadResourceInvalid, ClusterOperatorNotAvailable, …). */
export class UpdateError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    readonly manifest?: Manifest,
  ) {
    super(message);
    this.name = 'UpdateError';
  }
}

export interface ApplyContext {
  client: k8s.KubernetesObjectApi;
  /** The ClusterVersion every managed object is owned by. */
  owner?: { apiVersion: string; kind: string; name: string; uid: string };
  /** Whether ClusterOperator versions are awaited (not while Initializing). */
  awaitVersions: boolean;
  /** How long to wait for a CRD, Job or ClusterOperator before failing this attempt. */
  waitTimeoutMs: number;
  signal?: AbortSignal;
}

function httpCode(e: unknown): number | undefined {
  return (e as { code?: number }).code;
}

function bodyMessage(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body).message ?? body;
    } catch {
      return body;
    }
  }
  return (e as Error).message;
}

/** Maps an API failure while applying `m` to the reason OpenShift's CVO would report. */
export function toUpdateError(e: unknown, m: Manifest): UpdateError {
  if (e instanceof UpdateError) return e;
  const what = describeManifest(m);
  const code = httpCode(e);
  const message = bodyMessage(e);
  switch (code) {
    case 404:
      return new UpdateError('UpdatePayloadResourceTypeMissing', `Could not update ${what} (${m.file}): the server does not recognize this resource, check extension API servers: ${message}`, m);
    case 409:
      return new UpdateError('UpdatePayloadResourceConflict', `Could not update ${what} (${m.file}): the object is being modified by someone else: ${message}`, m);
    case 400:
    case 422:
      return new UpdateError('UpdatePayloadResourceInvalid', `Could not update ${what} (${m.file}): the object is invalid, possibly due to local cluster configuration: ${message}`, m);
    case 401:
    case 403:
      return new UpdateError('UpdatePayloadResourceForbidden', `Could not update ${what} (${m.file}): the server refused the request: ${message}`, m);
    default:
      return new UpdateError('UpdatePayloadFailed', `Could not update ${what} (${m.file}): ${message}`, m);
  }
}

async function readOrUndefined(client: k8s.KubernetesObjectApi, object: Obj): Promise<Obj | undefined> {
  try {
    return fromClient((await client.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata.name, namespace: object.metadata.namespace } })) as Obj);
  } catch (e) {
    if (httpCode(e) === 404) return undefined;
    throw e;
  }
}

function withOwner(required: Obj, owner: ApplyContext['owner']): Obj {
  if (!owner || required.kind === 'ClusterVersion' || required.kind === 'CustomResourceDefinition') return required;
  const refs: Obj[] = required.metadata.ownerReferences ?? [];
  if (refs.some((r) => r.uid === owner.uid)) return required;
  return { ...required, metadata: { ...required.metadata, ownerReferences: [...refs, { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true }] } };
}

/** Applies one manifest and waits for what its kind needs; throws an UpdateError on failure. */
export async function applyManifest(m: Manifest, ctx: ApplyContext): Promise<void> {
  const mode = applyMode(m);
  if ('error' in mode) throw new UpdateError('UpdatePayloadResourceInvalid', `${describeManifest(m)} (${m.file}): ${mode.error}`, m);
  const required = withOwner(structuredClone(m.object) as Obj, ctx.owner);
  try {
    const existing = await readOrUndefined(ctx.client, required);
    if (mode.mode === 'delete') {
      if (existing && !existing.metadata.deletionTimestamp) await ctx.client.delete(existing as k8s.KubernetesObject);
      return;
    }
    let live: Obj;
    if (!existing) {
      // A ClusterOperator is created without status: its operator reports that.
      const { status: _status, ...body } = required;
      live = fromClient((await ctx.client.create(forClient(m.gvk.kind === 'ClusterOperator' ? body : required))) as Obj);
    } else if (mode.mode === 'create-only' || m.gvk.kind === 'ClusterOperator') {
      live = existing;
    } else {
      const result = merge(existing, required);
      live = existing;
      if (result.recreate) {
        await ctx.client.delete(existing as k8s.KubernetesObject);
        live = fromClient((await ctx.client.create(forClient(required))) as Obj);
      } else if (result.modified) {
        live = fromClient((await ctx.client.replace(forClient(result.object))) as Obj);
      }
    }
    await waitForHealth(m, live, required, ctx);
  } catch (e) {
    throw toUpdateError(e, m);
  }
}

function condition(object: Obj | undefined, type: string): Obj | undefined {
  return (object?.status?.conditions ?? []).find((c: Obj) => c.type === type);
}

/** Waits for the kinds the CVO gates on; other kinds are done once written. */
async function waitForHealth(m: Manifest, live: Obj, required: Obj, ctx: ApplyContext): Promise<void> {
  const kind = m.gvk.kind;
  if (kind !== 'CustomResourceDefinition' && kind !== 'Job' && kind !== 'ClusterOperator') return;
  const deadline = Date.now() + ctx.waitTimeoutMs;
  let current: Obj | undefined = live;
  for (;;) {
    const verdict = kind === 'CustomResourceDefinition' ? crdReady(current) : kind === 'Job' ? jobDone(current, m) : clusterOperatorReady(current, required, ctx.awaitVersions);
    if (verdict === true) return;
    if (Date.now() > deadline || ctx.signal?.aborted) throw new UpdateError(verdict.reason, verdict.message, m);
    await sleep(250, ctx.signal);
    current = await readOrUndefined(ctx.client, required);
  }
}

type Verdict = true | { reason: string; message: string };

function crdReady(crd: Obj | undefined): Verdict {
  return condition(crd, 'Established')?.status === 'True' ? true : { reason: 'UpdatePayloadResourceNotEstablished', message: `customresourcedefinition "${crd?.metadata?.name}" is not Established yet` };
}

function jobDone(job: Obj | undefined, m: Manifest): Verdict {
  if (condition(job, 'Failed')?.status === 'True') return { reason: 'UpdatePayloadJobFailed', message: `job ${describeManifest(m)} failed: ${condition(job, 'Failed')?.message ?? ''}` };
  return condition(job, 'Complete')?.status === 'True' ? true : { reason: 'UpdatePayloadJobNotComplete', message: `Waiting for job ${describeManifest(m)} to complete` };
}

/**
 * A ClusterOperator gates its part of the graph: Available=True, Degraded not True, and — except
 * while Initializing — every version the manifest lists reported by the operator.
 */
export function clusterOperatorReady(co: Obj | undefined, required: Obj, awaitVersions: boolean): Verdict {
  const name = required.metadata.name;
  const available = condition(co, 'Available');
  if (available?.status !== 'True') {
    return { reason: 'ClusterOperatorNotAvailable', message: `Cluster operator ${name} is not available${available?.message ? `: ${available.message}` : ''}` };
  }
  const degraded = condition(co, 'Degraded');
  if (degraded?.status === 'True') {
    return { reason: 'ClusterOperatorDegraded', message: `Cluster operator ${name} is degraded${degraded.message ? `: ${degraded.message}` : ''}` };
  }
  if (awaitVersions) {
    const reported = new Map<string, string>((co?.status?.versions ?? []).map((v: Obj) => [v.name, v.version]));
    for (const want of (required.status?.versions ?? []) as Obj[]) {
      if (reported.get(want.name) !== want.version) {
        return {
          reason: 'ClusterOperatorUpdating',
          message: `Cluster operator ${name} is updating versions: ${want.name} is ${reported.get(want.name) ?? 'not reported'}, waiting for ${want.version}`,
        };
      }
    }
  }
  return true;
}
