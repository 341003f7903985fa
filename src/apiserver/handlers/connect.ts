// The pods' connect subresources, `exec`, `attach` and `portforward` (GET or POST, as upgrades):
// exec and portforward are proxied to the kubelet of the pod's node (nodes/pod-exec.ts), over
// whichever upgrade the client asked for — a WebSocket (exec from kubectl 1.30, port-forward's
// tunnel from 1.31) or SPDY/3.1 (older kubectls, and newer ones' port-forward fallback); the node
// agent speaks both. attach is not served: a container is processes on its machine, whose output
// `kubectl logs -f` follows, and which `kubectl exec` runs a command beside.
import { errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { podExecLocation, podPortForwardLocation, proxyUpgrade } from '../nodes/pod-exec.js';
import { upgradeOf } from '../http/upgrade.js';
import { nodeOf } from './logs.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { ServerState } from './state.js';
import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

export const CONNECT_SUBRESOURCES = ['exec', 'attach', 'portforward'];

export async function serveConnect(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name: string, subresource: string): Promise<void> {
  const { request, reply } = ctx;
  if ((request.method !== 'GET' && request.method !== 'POST') || name === '') throw errors.methodNotAllowed(request.method, ctx.path);
  // As kube-apiserver 1.31+ does: a WebSocket upgrade (a GET) needs `create` on the subresource too.
  if (request.method === 'GET') {
    const refusal = state.authorize({ ...ctx.attributes, verb: 'create' });
    if (refusal !== undefined) throw errors.forbidden(refusal);
  }
  const pod = asKind<api.Pod>(state.resources.get(type, namespace, name));
  if (subresource === 'attach') {
    throw errors.badRequest(`bosun does not serve pods/attach: a container's output is followed with \`kubectl logs -f\`, and \`kubectl exec\` runs a command beside it`);
  }
  const node = nodeOf(state, pod);
  const url = subresource === 'exec' ? podExecLocation(pod, node, new URL(request.url, 'https://apiserver').searchParams) : podPortForwardLocation(pod, node);
  const upgrade = upgradeOf(request.raw);
  if (!upgrade) throw errors.badRequest('Upgrade request required');
  const protocol = String(request.headers.upgrade ?? '').toLowerCase();
  if (protocol !== 'websocket' && protocol !== 'spdy/3.1') throw errors.badRequest(`pods/${subresource} is served over a WebSocket or SPDY/3.1, not ${request.headers.upgrade}`);
  await proxyUpgrade(url, { clientCert: state.kubeletClientCert }, request.raw, upgrade, () => {
    // Audit and the request metrics record the switch, as kube-apiserver's do.
    reply.raw.statusCode = 101;
    reply.hijack();
  });
}
