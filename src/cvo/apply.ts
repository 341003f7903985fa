// The CVO's apply engine: one payload manifest at a time, through the Kubernetes API. Creates
// what is missing, merges with the per-kind semantics of resource-merge/ (writing only when
// something the manifest sets differs), deletes what the payload marks for deletion, waits for
// CRDs to be Established, Jobs to complete and ClusterOperators to report healthy, and turns
// every failure into an UpdateError (errors.ts) with a reason an administrator can act on and
// the effect it has on the update.
import type { Manifest } from './payload/manifest.js';
import { describeManifest } from './payload/manifest.js';
import { applyMode } from './payload/inclusion.js';
import { merge } from './resource-merge/merge.js';
import type { JsonObject } from './resource-merge/ensure.js';
import { ensureObjectMeta } from './resource-merge/object-meta.js';
import { sleep } from '../common/sleep.js';
import { KubeApiError, isAlreadyExists, type KubeClient, type ResourceRef } from '../kube/client.js';
import type * as api from '../api/index.js';
import type { Condition } from '../kube/conditions.js';
import type { GraphMode } from './task-graph.js';
import { toUpdateError, UpdateError, type UpdateEffect } from './errors.js';
import { isCrdEstablished } from '../kube/readiness.js';

/** A payload object of any kind, as sent to and read back from the API. */
type Unstructured = api.Unstructured;

export interface ApplyContext {
  client: KubeClient;
  /** The ClusterVersion every managed object is owned by. */
  owner?: { apiVersion: string; kind: string; name: string; uid: string };
  /** The pass's mode: ClusterOperator versions are not awaited while Initializing, and what an unhealthy operator means depends on it. */
  mode: GraphMode;
  /** How long to wait for a CRD, Job or ClusterOperator before failing this attempt (paces API polling; the status rules read the CVO's clock). */
  waitTimeoutMs: number;
  signal?: AbortSignal;
}

async function refFor(client: KubeClient, object: Unstructured): Promise<ResourceRef<Unstructured>> {
  return (await client.resourceFor(String(object.apiVersion), String(object.kind))) as ResourceRef<Unstructured>;
}

function withOwner(required: Unstructured, owner: ApplyContext['owner']): Unstructured {
  if (!owner || required.kind === 'ClusterVersion' || required.kind === 'CustomResourceDefinition') return required;
  const refs = required.metadata.ownerReferences ?? [];
  if (refs.some((r) => r.uid === owner.uid)) return required;
  return { ...required, metadata: { ...required.metadata, ownerReferences: [...refs, { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true }] } };
}

/**
 * While Initializing, every run level is applied at once (task-graph.ts), so a manifest may meet
 * a namespace or CRD another worker is still creating: such transient refusals (404, 409, 429,
 * 5xx) are retried a few times with a growing pause, as OpenShift's task runner retries a task,
 * instead of failing the pass and applying every manifest again.
 */
const INITIALIZING_RETRIES = [250, 500, 1_000, 2_000];

function transient(e: unknown): boolean {
  if (!(e instanceof KubeApiError)) return false;
  return e.code === 404 || e.code === 409 || e.code === 429 || e.code >= 500;
}

/** Applies one manifest and waits for what its kind needs; throws an UpdateError on failure. */
export async function applyManifest(m: Manifest, ctx: ApplyContext): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await applyOnce(m, ctx);
    } catch (e) {
      if (ctx.mode !== 'Initializing' || attempt >= INITIALIZING_RETRIES.length || !transient(e) || ctx.signal?.aborted) throw toUpdateError(e, m);
      await sleep(INITIALIZING_RETRIES[attempt], ctx.signal);
    }
  }
}

async function applyOnce(m: Manifest, ctx: ApplyContext): Promise<void> {
  const mode = applyMode(m);
  if ('error' in mode) throw new UpdateError({ reason: 'UpdatePayloadResourceInvalid', message: `${describeManifest(m)} (${m.file}): ${mode.error}`, effect: 'fail', manifest: m });
  const required = withOwner(structuredClone(m.object) as Unstructured, ctx.owner);
  const { name, namespace } = required.metadata;
  const ref = await refFor(ctx.client, required);
  // A ClusterOperator is created without status: its operator reports that.
  const { status: _status, ...withoutStatus } = required;
  const body = m.gvk.kind === 'ClusterOperator' ? withoutStatus : required;
  // On a fresh install nearly every object is missing: create first, and read only when the
  // object turns out to exist (one request per manifest instead of a read and a create).
  if (ctx.mode === 'Initializing' && mode.mode !== 'delete') {
    const created = await createIfMissing(ctx.client, ref, body);
    if (created) return await waitForHealth(m, ref, created, required, ctx);
  }
  const existing = await ctx.client.read(ref, name, namespace);
  if (mode.mode === 'delete') {
    if (existing && !existing.metadata.deletionTimestamp) await ctx.client.delete(ref, name, namespace);
    return;
  }
  let live: Unstructured;
  if (!existing) {
    live = await ctx.client.create(ref, body);
  } else if (mode.mode === 'create-only') {
    live = existing;
  } else if (m.gvk.kind === 'ClusterOperator') {
    // An operator may create its ClusterOperator before the CVO reaches it: the status is the
    // operator's, but the payload's metadata (the include.release.openshift.io annotations that
    // tell clients which operators belong to the release) is the CVO's to merge in, as
    // OpenShift's CVO does.
    const meta = ensureObjectMeta(existing.metadata as unknown as JsonObject, required.metadata as unknown as JsonObject);
    live = meta.modified ? await ctx.client.update(ref, { ...existing, metadata: meta.object as unknown as api.ObjectMeta }) : existing;
  } else {
    const result = merge(existing as unknown as JsonObject, required as unknown as JsonObject);
    live = existing;
    if (result.recreate) {
      await ctx.client.delete(ref, name, namespace);
      live = await ctx.client.create(ref, required);
    } else if (result.modified) {
      live = await ctx.client.update(ref, result.object as unknown as Unstructured);
    }
  }
  await waitForHealth(m, ref, live, required, ctx);
}

/** Creates the object; undefined when it exists already (the caller then reads and merges). */
async function createIfMissing(client: KubeClient, ref: ResourceRef<Unstructured>, body: Unstructured): Promise<Unstructured | undefined> {
  try {
    return await client.create(ref, body);
  } catch (e) {
    if (isAlreadyExists(e)) return undefined;
    throw e;
  }
}

/** The condition of `type` in an object's status.conditions (any kind's). */
function condition(object: unknown, type: string): Condition | undefined {
  const conditions = (object as { status?: { conditions?: Condition[] } } | undefined)?.status?.conditions;
  return (conditions ?? []).find((c) => c.type === type);
}

/** Waits for the kinds the CVO gates on; other kinds are done once written. */
async function waitForHealth(m: Manifest, ref: ResourceRef<Unstructured>, live: Unstructured, required: Unstructured, ctx: ApplyContext): Promise<void> {
  const kind = m.gvk.kind;
  if (kind !== 'CustomResourceDefinition' && kind !== 'Job' && kind !== 'ClusterOperator') return;
  const deadline = Date.now() + ctx.waitTimeoutMs;
  let current: Unstructured | undefined = live;
  for (;;) {
    const verdict = kind === 'CustomResourceDefinition' ? crdReady(current) : kind === 'Job' ? jobDone(current, m) : clusterOperatorReady(current as unknown as api.ClusterOperator | undefined, required as unknown as api.ClusterOperator, ctx.mode);
    if (verdict === true) return;
    if (Date.now() > deadline || ctx.signal?.aborted) {
      throw new UpdateError({ ...verdict, manifest: m, ...(kind === 'ClusterOperator' ? { operator: String(required.metadata.name) } : {}) });
    }
    await sleep(250, ctx.signal);
    current = await ctx.client.read(ref, required.metadata.name, required.metadata.namespace);
  }
}

type Verdict = true | { reason: string; message: string; effect: UpdateEffect };

function crdReady(crd: Unstructured | undefined): Verdict {
  return isCrdEstablished(crd as unknown as api.CustomResourceDefinition | undefined) ? true : { reason: 'UpdatePayloadResourceNotEstablished', message: `customresourcedefinition "${crd?.metadata?.name}" is not Established yet`, effect: 'fail' };
}

function jobDone(job: Unstructured | undefined, m: Manifest): Verdict {
  if (condition(job, 'Failed')?.status === 'True') return { reason: 'UpdatePayloadJobFailed', message: `job ${describeManifest(m)} failed: ${condition(job, 'Failed')?.message ?? ''}`, effect: 'fail' };
  return condition(job, 'Complete')?.status === 'True' ? true : { reason: 'UpdatePayloadJobNotComplete', message: `Waiting for job ${describeManifest(m)} to complete`, effect: 'fail' };
}

/**
 * A ClusterOperator gates its part of the graph: Available=True, Degraded not True, and — except
 * while Initializing — every version the manifest lists reported by the operator. The effect of
 * each verdict follows the mode: during an update, an operator not yet Available or not yet at
 * the new version is progress (`none`), a Degraded one is tolerated for an interval
 * (`fail-after-interval`); while Initializing a Degraded operator is only reported; otherwise an
 * unavailable operator fails the pass.
 */
export function clusterOperatorReady(co: api.ClusterOperator | undefined, required: api.ClusterOperator, mode: GraphMode): Verdict {
  const name = required.metadata.name;
  const available = condition(co, 'Available');
  if (available?.status !== 'True') {
    return { reason: 'ClusterOperatorNotAvailable', message: `Cluster operator ${name} is not available${available?.message ? `: ${available.message}` : ''}`, effect: mode === 'Updating' ? 'none' : 'fail' };
  }
  const degraded = condition(co, 'Degraded');
  if (degraded?.status === 'True') {
    return { reason: 'ClusterOperatorDegraded', message: `Cluster operator ${name} is degraded${degraded.message ? `: ${degraded.message}` : ''}`, effect: mode === 'Initializing' ? 'report' : 'fail-after-interval' };
  }
  if (mode !== 'Initializing') {
    const reported = new Map<string, string>((co?.status?.versions ?? []).map((v) => [v.name, v.version]));
    for (const want of required.status?.versions ?? []) {
      if (reported.get(want.name) !== want.version) {
        return {
          reason: 'ClusterOperatorUpdating',
          message: `Cluster operator ${name} is updating versions: ${want.name} is ${reported.get(want.name) ?? 'not reported'}, waiting for ${want.version}`,
          effect: 'none',
        };
      }
    }
  }
  return true;
}
