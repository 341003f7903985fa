// `pods/<name>/log` (GET): found where the pod's kubelet serves it and streamed through from
// there, as kube-apiserver proxies it (nodes/pod-logs.ts has the location and the stream).
import { errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { podLogLocation, streamPodLogs } from '../nodes/pod-logs.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { ServerState } from './state.js';
import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

/** The Node `pod` is bound to, when it is bound and the Node exists (whose kubelet pods/log, exec and portforward reach). */
export function nodeOf(state: ServerState, pod: api.Pod): api.Node | undefined {
  const stored = pod.spec?.nodeName ? state.storage.get(`/core/nodes//${pod.spec.nodeName}`)?.object : undefined;
  return stored && asKind<api.Node>(stored);
}

export async function serveLogs(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string): Promise<void> {
  const { request, reply } = ctx;
  if (request.method !== 'GET' || name === '') throw errors.methodNotAllowed(request.method, ctx.path);
  const pod = asKind<api.Pod>(state.resources.get(type, namespace, name));
  const node = nodeOf(state, pod);
  const query = Object.fromEntries(['container', 'follow', 'previous', 'timestamps', 'tailLines', 'limitBytes', 'sinceSeconds', 'sinceTime'].map((k) => [k, ctx.query.string(k)]));
  await streamPodLogs(podLogLocation(pod, node, query), { clientCert: state.kubeletClientCert }, () => {
    reply.hijack();
    return reply.raw;
  }, (listener) => request.raw.on('close', listener));
}
