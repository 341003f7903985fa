// The EndpointSlices of a Service as kube's EndpointSlice controller computes them: one endpoint
// per pod that may serve (terminating ones included, marked so), with kube's conditions — serving
// = the pod is ready, ready = serving and not terminating (always ready with
// publishNotReadyAddresses) — its node and zone, the ports resolved against the pod, endpoints
// with the same ports and address type grouped, at most 100 to a slice. Pure.
import type * as api from '../../api/index.js';
import { canonicalJson } from '../../kube/canonical.js';
import { HEADLESS, podPort, servesEndpoints } from './endpoints.js';
import { isReady } from './pods.js';

export const SERVICE_NAME = 'kubernetes.io/service-name';
export const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const MAX_ENDPOINTS_PER_SLICE = 100;
const ZONE = 'topology.kubernetes.io/zone';

export type SliceEndpoint = api.EndpointSlice['endpoints'][number];
export type SlicePort = NonNullable<api.EndpointSlice['ports']>[number];

export interface SliceContent {
  addressType: 'IPv4' | 'IPv6';
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

function endpointFor(pod: api.Pod, service: api.Service, ip: string, node: api.Node | undefined): SliceEndpoint {
  const terminating = Boolean(pod.metadata.deletionTimestamp);
  const serving = isReady(pod);
  const endpoint: SliceEndpoint = {
    addresses: [ip],
    conditions: { ready: Boolean(service.spec?.publishNotReadyAddresses) || (serving && !terminating), serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
  };
  if (pod.spec?.nodeName) endpoint.nodeName = pod.spec.nodeName;
  if (node?.metadata?.labels?.[ZONE]) endpoint.zone = node.metadata.labels[ZONE];
  if (pod.spec?.hostname && pod.spec?.subdomain === service.metadata.name) endpoint.hostname = pod.spec.hostname;
  return endpoint;
}

/** What the Service's slices should hold, in a stable order. */
export function desiredSlices(service: api.Service, pods: api.Pod[], nodeOf: (name: string) => api.Node | undefined): SliceContent[] {
  const groups = new Map<string, SliceContent>();
  for (const pod of pods) {
    if (!servesEndpoints(pod, true)) continue;
    // servesEndpoints let only pods with an IP through.
    const ip: string = pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip ?? '';
    const ports: SlicePort[] = [];
    for (const sp of service.spec?.ports ?? []) {
      const port = podPort(pod, sp);
      if (port !== undefined) ports.push({ name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    if ((service.spec?.ports ?? []).length && !ports.length) continue;
    const addressType = ip.includes(':') ? 'IPv6' : 'IPv4';
    const key = `${addressType} ${canonicalJson(ports)}`;
    const group = groups.get(key) ?? { addressType, ports, endpoints: [] };
    group.endpoints.push(endpointFor(pod, service, ip, pod.spec?.nodeName ? nodeOf(pod.spec.nodeName) : undefined));
    groups.set(key, group);
  }
  const slices: SliceContent[] = [];
  for (const [, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const endpoints = group.endpoints.sort((a, b) => (a.addresses[0] < b.addresses[0] ? -1 : a.addresses[0] > b.addresses[0] ? 1 : 0));
    for (let i = 0; i < endpoints.length; i += MAX_ENDPOINTS_PER_SLICE) slices.push({ ...group, endpoints: endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE) });
  }
  return slices;
}

/** The slices' labels: the Service's, the service name, who manages them, and headless as kube marks it. */
export function sliceLabels(service: api.Service): Record<string, string> {
  const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}), [SERVICE_NAME]: service.metadata.name, [MANAGED_BY]: CONTROLLER_NAME };
  delete labels[HEADLESS];
  if (!service.spec?.clusterIP || service.spec.clusterIP === 'None') labels[HEADLESS] = '';
  return labels;
}
