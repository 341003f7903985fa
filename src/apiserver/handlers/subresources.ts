// Subresources served beside the object store: `scale` (autoscaling/v1 Scale over the paths the
// type declares), `pods/binding` (the scheduler's write of spec.nodeName), and POSTs answered by
// handlers other parts of bosun add (eviction, TokenRequest, access reviews).
import { errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { decodeBody, decodeObject, patchTypeOf, requestBody } from '../http/body.js';
import { sendJson } from '../http/respond.js';
import { applyJsonPatch, applyMergePatch } from '../apply/patch.js';
import type { ResourceType } from '../registry/resource-type.js';
import { scaleOf, withSpecReplicas, type Scale } from '../registry/scale.js';
import { rfc3339 } from '../../common/time.js';
import type { PostRequest } from '../types.js';
import type { ServerState } from './state.js';

import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

async function updateScale(ctx: AuthorizedContext, state: ServerState, type: ResourceType, ns: string | undefined, name: string, body: unknown, dryRun: boolean, fieldManager: string): Promise<Scale> {
  // The Scale sent (or patched): its replicas are checked here.
  const scale = body as { spec?: { replicas?: unknown }; metadata?: { resourceVersion?: string } } | undefined;
  const replicas = scale?.spec?.replicas;
  if (!Number.isInteger(replicas) || (replicas as number) < 0) {
    throw errors.invalid('Scale', 'autoscaling', name, [{ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
  }
  // A merge patch holding only the replicas, at the path the type declares.
  const patch: Record<string, unknown> = withSpecReplicas(type, {} as api.Unstructured, replicas as number);
  if (scale?.metadata?.resourceVersion) patch.metadata = { resourceVersion: scale.metadata.resourceVersion };
  const updated = await state.resources.patch(type, ns, name, 'merge', patch, { dryRun, fieldManager, managedSubresource: 'scale', user: ctx.user, viaApi: true });
  return scaleOf(type, updated);
}

/** GET, PUT and PATCH of `<resource>/scale`. */
export async function serveScale(ctx: AuthorizedContext, state: ServerState, type: ResourceType, ns: string | undefined, name: string, dryRun: boolean, fieldManager: string): Promise<void> {
  const { request, reply } = ctx;
  const contentType = request.headers['content-type'];
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      sendJson(reply, 200, scaleOf(type, state.resources.get(type, ns, name)));
      return;
    case 'PUT':
      sendJson(reply, 200, await updateScale(ctx, state, type, ns, name, decodeObject(await requestBody(request), contentType), dryRun, fieldManager));
      return;
    case 'PATCH': {
      const patchType = patchTypeOf(contentType);
      const patch = decodeBody(await requestBody(request), contentType);
      const current = scaleOf(type, state.resources.get(type, ns, name));
      const next = patchType === 'json' ? applyJsonPatch(current, patch) : applyMergePatch(current, patch);
      sendJson(reply, 200, await updateScale(ctx, state, type, ns, name, next, dryRun, fieldManager));
      return;
    }
    default:
      throw errors.methodNotAllowed(request.method, ctx.path);
  }
}

/**
 * POST `pods/<name>/binding`: sets spec.nodeName once, copies the Binding's annotations onto the
 * pod, and marks it `PodScheduled=True`, as kube-apiserver's binding storage does (a pod the
 * scheduler once found unschedulable must not keep saying so once bound).
 */
export async function serveBinding(ctx: AuthorizedContext, state: ServerState, type: ResourceType, ns: string | undefined, name: string, dryRun: boolean): Promise<void> {
  if (ctx.request.method !== 'POST') throw errors.methodNotAllowed(ctx.request.method, ctx.path);
  // A Binding: its target and annotations are all that is read.
  const binding = decodeObject(await requestBody(ctx.request), ctx.request.headers['content-type']) as { target?: { name?: string }; metadata?: { annotations?: Record<string, string> } };
  const node = binding?.target?.name;
  if (!node) throw errors.invalid('Binding', '', name, [{ type: 'FieldValueRequired', field: 'target.name', message: 'Required value' }]);
  const pod = asKind<api.Pod>(state.resources.get(type, ns, name));
  if (pod.metadata?.deletionTimestamp) throw errors.conflict('pods/binding', '', name);
  if (pod.spec?.nodeName) throw errors.conflict('pods/binding', '', name);
  const annotations = binding?.metadata?.annotations;
  await state.resources.patch(type, ns, name, 'merge', { metadata: annotations ? { annotations } : {}, spec: { nodeName: node } }, { dryRun, managedSubresource: 'binding' });
  const conditions = Array.isArray(pod.status?.conditions) ? pod.status.conditions : [];
  const scheduled = conditions.find((c) => c?.type === 'PodScheduled');
  if (scheduled?.status !== 'True') {
    const others = conditions.filter((c) => c?.type !== 'PodScheduled');
    const condition = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339() };
    await state.resources.patch(type, ns, name, 'merge', { status: { conditions: [...others, condition] } }, { dryRun, subresource: 'status' });
  }
  sendJson(ctx.reply, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

/** Offers a POST to the added handlers; 404 when none answers it. */
export async function servePost(ctx: AuthorizedContext, state: ServerState, dryRun: boolean): Promise<void> {
  const { info } = ctx;
  if (ctx.request.method === 'POST' && state.postHandlers.length > 0) {
    // The body is decoded when a handler reads it: one that is not for this endpoint never does, so
    // a POST to a resource nobody serves is a 404 whatever its body (a protobuf Ingress included).
    const raw = await requestBody(ctx.request);
    let body: Record<string, unknown> | undefined;
    const post: PostRequest = {
      user: ctx.user, group: info.apiGroup, version: info.apiVersion,
      namespace: info.namespace || undefined, resource: info.resource, name: info.pathName || undefined, subresource: info.subresource || undefined,
      get body() {
        return (body ??= decodeObject(raw, ctx.request.headers['content-type']));
      },
      dryRun,
    };
    for (const handler of state.postHandlers) {
      const answer = await handler(post);
      if (answer) {
        sendJson(ctx.reply, answer.code, answer.body);
        return;
      }
    }
  }
  throw errors.pathNotFound(ctx.path);
}
