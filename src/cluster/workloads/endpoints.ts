// The Endpoints of a Service as kube's endpoint controller computes them: the pods its selector
// matches that have an IP and may still serve (not deleting, not finished for their restart
// policy), ready ones under `addresses` and the others under `notReadyAddresses` (all under
// `addresses` with publishNotReadyAddresses), each port resolved against the pod (a numbered
// targetPort, or a named container port), and addresses with the same ports packed into one
// subset. Labels are the Service's, plus `service.kubernetes.io/headless` for a headless one. Pure.
import type * as api from '../../api/index.js';
import { isReady } from './pods.js';

export const HEADLESS = 'service.kubernetes.io/headless';

export type EndpointSubset = NonNullable<api.Endpoints['subsets']>[number];
export type EndpointAddress = NonNullable<EndpointSubset['addresses']>[number];
export type EndpointPort = NonNullable<EndpointSubset['ports']>[number];

/** kube's ShouldPodBeInEndpoints. */
export function servesEndpoints(pod: api.Pod, includeTerminating = false): boolean {
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).length) return false;
  if (!includeTerminating && pod.metadata?.deletionTimestamp) return false;
  const phase = pod.status?.phase;
  const restart = pod.spec?.restartPolicy ?? 'Always';
  if (restart === 'Never') return phase !== 'Failed' && phase !== 'Succeeded';
  if (restart === 'OnFailure') return phase !== 'Succeeded';
  return true;
}

/** The pod's port for a Service port (kube's FindPort), undefined when a named port is missing. */
export function podPort(pod: api.Pod, servicePort: api.ServicePort): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(String(target))) return Number(target);
  const protocol = servicePort.protocol ?? 'TCP';
  for (const container of pod.spec?.containers ?? []) {
    for (const port of container.ports ?? []) if (port.name === target && (port.protocol ?? 'TCP') === protocol) return port.containerPort;
  }
  return undefined;
}

function address(pod: api.Pod, service: api.Service): EndpointAddress {
  const a: EndpointAddress = {
    // servesEndpoints let only pods with an IP through.
    ip: pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip ?? '',
    ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
  };
  if (pod.spec?.hostname && pod.spec?.subdomain === service.metadata.name && pod.metadata.namespace === service.metadata.namespace) a.hostname = pod.spec.hostname;
  return a;
}

const portKey = (p: EndpointPort) => `${p.name ?? ''}/${p.port}/${p.protocol}`;
const byIp = (a: EndpointAddress, b: EndpointAddress) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : String(a.targetRef?.uid).localeCompare(String(b.targetRef?.uid)));

/** The subsets for `service` over the namespace's pods its selector matches. */
export function endpointSubsets(service: api.Service, pods: api.Pod[]): EndpointSubset[] {
  const publishNotReady = Boolean(service.spec?.publishNotReadyAddresses);
  // Per address (ready or not): the ports it serves.
  const entries = new Map<string, { address: EndpointAddress; ready: boolean; ports: Map<string, EndpointPort> }>();
  for (const pod of pods) {
    if (!servesEndpoints(pod, publishNotReady)) continue;
    const ready = publishNotReady || isReady(pod);
    const entry = { address: address(pod, service), ready, ports: new Map<string, EndpointPort>() };
    const servicePorts: api.ServicePort[] = service.spec?.ports ?? [];
    if (servicePorts.length === 0 && service.spec?.clusterIP !== 'None') continue;
    for (const sp of servicePorts) {
      const port = podPort(pod, sp);
      if (port === undefined) continue;
      const ep: EndpointPort = { ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) };
      entry.ports.set(portKey(ep), ep);
    }
    if (servicePorts.length && entry.ports.size === 0) continue;
    entries.set(`${entry.address.targetRef?.uid}/${ready}`, entry);
  }
  // Pack: addresses with the same set of ports share a subset (kube's RepackSubsets).
  const subsets = new Map<string, { ports: EndpointPort[]; addresses: EndpointAddress[]; notReadyAddresses: EndpointAddress[] }>();
  for (const entry of entries.values()) {
    const ports = [...entry.ports.values()].sort((a, b) => portKey(a).localeCompare(portKey(b)));
    const key = ports.map(portKey).join(',');
    const subset = subsets.get(key) ?? { ports, addresses: [], notReadyAddresses: [] };
    (entry.ready ? subset.addresses : subset.notReadyAddresses).push(entry.address);
    subsets.set(key, subset);
  }
  return [...subsets.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, s]) => ({
      ...(s.addresses.length ? { addresses: s.addresses.sort(byIp) } : {}),
      ...(s.notReadyAddresses.length ? { notReadyAddresses: s.notReadyAddresses.sort(byIp) } : {}),
      ...(s.ports.length ? { ports: s.ports } : {}),
    }));
}

/** The Endpoints' labels: the Service's, with the headless marker as kube sets it. */
export function endpointLabels(service: api.Service): Record<string, string> {
  const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
  delete labels[HEADLESS];
  if (!service.spec?.clusterIP || service.spec.clusterIP === 'None') labels[HEADLESS] = '';
  return labels;
}
