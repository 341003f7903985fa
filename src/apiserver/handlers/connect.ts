// The pods' connect subresources, `exec`, `attach` and `portforward` (GET or POST, as upgrades):
// exec is proxied to the kubelet of the pod's node over a WebSocket (nodes/pod-exec.ts), as
// kubectl 1.30 and newer make it; SPDY, which older kubectls speak (and newer ones fall back to when
// the WebSocket is refused), is refused with a Status saying so. attach and portforward are not
// served: a container is processes on its machine, whose output `kubectl logs -f` follows, and a
// pod's IP is a loopback address this machine reaches directly.
import { errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { podExecLocation, proxyUpgrade } from '../nodes/pod-exec.js';
import { upgradeOf } from '../http/upgrade.js';
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
  if (subresource === 'portforward') {
    throw errors.badRequest(`bosun does not serve pods/portforward: pod ${name}'s IP ${pod.status?.podIP ?? '(none yet)'} is reached directly from the machine its node runs on, and a Service by its ClusterIP or a NodePort`);
  }
  if (subresource === 'attach') {
    throw errors.badRequest(`bosun does not serve pods/attach: a container's output is followed with \`kubectl logs -f\`, and \`kubectl exec\` runs a command beside it`);
  }
  const stored = pod.spec?.nodeName ? state.storage.get(`/core/nodes//${pod.spec.nodeName}`)?.object : undefined;
  const url = podExecLocation(pod, stored && asKind<api.Node>(stored), new URL(request.url, 'https://apiserver').searchParams);
  const upgrade = upgradeOf(request.raw);
  if (!upgrade) throw errors.badRequest('Upgrade request required');
  const protocol = String(request.headers.upgrade ?? '');
  if (protocol.toLowerCase() !== 'websocket') {
    throw errors.badRequest(`bosun serves pods/exec over WebSocket (kubectl 1.30 and newer; 1.29 with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true), and this client asked for ${protocol || 'no protocol'}`);
  }
  await proxyUpgrade(url, { clientCert: state.kubeletClientCert }, request.raw, upgrade, () => reply.hijack());
}
