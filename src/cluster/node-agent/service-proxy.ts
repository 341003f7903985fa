// The node's part of kube-proxy, in userspace: for every Service port with a NodePort, a TCP
// listener on <nodeIP>:<nodePort> that forwards each connection to a ready endpoint, round-robin.
// Endpoints come from EndpointSlices when the API server serves them, else from the Ready pods
// the Service's selector matches (what the EndpointSlice controller would have put there).
// ClusterIPs are not proxied: a Service's cluster IP is not an address of this host's loopback.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../common/log.js';
import { Informer, keyOf, type KubeClient, type Obj } from '../../kube/index.js';
import { resolvePort } from './pod-spec.js';
import { ENDPOINT_SLICES, PODS, SERVICES } from './resources.js';

export interface Endpoint { ip: string; port: number }

/** Whether a label selector (a Service's map) matches the labels. */
function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

const podReady = (pod: Obj) => (pod.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True') && pod.status?.podIP && !pod.metadata.deletionTimestamp;

/** Ready endpoints of a Service port from the pods its selector matches. Pure. */
export function endpointsFromPods(service: Obj, servicePort: Obj, pods: Obj[]): Endpoint[] {
  const out: Endpoint[] = [];
  for (const pod of pods) {
    if (pod.metadata.namespace !== service.metadata.namespace || !matches(service.spec.selector, pod.metadata.labels) || !podReady(pod)) continue;
    const target = servicePort.targetPort ?? servicePort.port;
    const port = (pod.spec.containers as Obj[]).map((c) => resolvePort(target, c)).find((p) => p !== undefined);
    if (port) out.push({ ip: pod.status.podIP, port });
  }
  return out;
}

/** Ready endpoints of a Service port from its EndpointSlices. Pure. */
export function endpointsFromSlices(service: Obj, servicePort: Obj, slices: Obj[]): Endpoint[] {
  const out: Endpoint[] = [];
  for (const slice of slices) {
    if (slice.metadata.namespace !== service.metadata.namespace || slice.metadata.labels?.['kubernetes.io/service-name'] !== service.metadata.name) continue;
    const port = (slice.ports ?? []).find((p: Obj) => (p.name ?? '') === (servicePort.name ?? ''))?.port;
    if (!port) continue;
    for (const ep of slice.endpoints ?? []) if (ep.conditions?.ready !== false) for (const ip of ep.addresses ?? []) out.push({ ip, port });
  }
  return out;
}

export class ServiceProxy {
  private readonly services: Informer;
  private endpoints?: Informer;
  private useSlices = false;
  private readonly listeners = new Map<number, { server: Server; service: string; portName: string; next: number }>();
  private readonly sockets = new Set<Socket>();

  constructor(private readonly client: KubeClient, private readonly nodeIP: string, private readonly log: Logger) {
    this.services = new Informer(client, SERVICES);
  }

  async start(signal: AbortSignal): Promise<void> {
    this.useSlices = await this.client.resourceFor('discovery.k8s.io/v1', 'EndpointSlice').then(() => true, () => false);
    // Without EndpointSlices the Ready pods are the endpoints — when this node may list them all
    // (a node's own credentials may not: the Node authorizer gives it only its own pods).
    const podsAllowed = this.useSlices || await this.mayListPods();
    // Stopped meanwhile: an informer started on an aborted signal would never stop.
    signal.throwIfAborted();
    if (podsAllowed) this.endpoints = new Informer(this.client, this.useSlices ? ENDPOINT_SLICES : PODS);
    else this.log.warn('the API server serves no EndpointSlices and this node may not list pods: NodePorts are listened on but have no endpoints');
    this.services.on(() => this.reconcile());
    this.services.start(signal);
    this.endpoints?.start(signal);
    await Promise.all([this.services.waitForSync(signal), this.endpoints?.waitForSync(signal)]);
    this.reconcile();
  }

  private async mayListPods(): Promise<boolean> {
    const review = await this.client.request<Obj>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'watch', resource: 'pods', version: 'v1' } } },
    }).catch(() => undefined);
    return review?.status?.allowed === true;
  }

  private endpointsOf(service: Obj, servicePort: Obj): Endpoint[] {
    const objects = this.endpoints?.list() ?? [];
    return this.useSlices ? endpointsFromSlices(service, servicePort, objects) : endpointsFromPods(service, servicePort, objects);
  }

  /** Listens on every NodePort there is, and on no other. */
  private reconcile(): void {
    const wanted = new Map<number, { service: string; portName: string }>();
    for (const svc of this.services.list()) {
      if (svc.spec?.type !== 'NodePort' && svc.spec?.type !== 'LoadBalancer') continue;
      for (const p of svc.spec.ports ?? []) if (p.nodePort && (p.protocol ?? 'TCP') === 'TCP') wanted.set(p.nodePort, { service: keyOf(svc), portName: p.name ?? '' });
    }
    for (const [port, l] of this.listeners) {
      if (!wanted.has(port)) {
        l.server.close();
        this.listeners.delete(port);
      }
    }
    for (const [port, w] of wanted) {
      const existing = this.listeners.get(port);
      if (existing) {
        Object.assign(existing, w);
        continue;
      }
      const entry = { ...w, next: 0, server: createServer((socket) => this.forward(port, socket)) };
      entry.server.on('error', (e) => this.log.warn({ port, err: e.message }, 'cannot listen on the NodePort'));
      entry.server.listen(port, this.nodeIP);
      this.listeners.set(port, entry);
    }
  }

  private forward(nodePort: number, socket: Socket): void {
    const l = this.listeners.get(nodePort);
    const svc = l && this.services.getByKey(l.service);
    const servicePort = svc?.spec.ports?.find((p: Obj) => (p.name ?? '') === l!.portName);
    const endpoints = servicePort ? this.endpointsOf(svc!, servicePort) : [];
    if (!l || endpoints.length === 0) {
      socket.destroy();
      return;
    }
    const ep = endpoints[l.next++ % endpoints.length];
    const upstream = connect({ host: ep.ip, port: ep.port });
    this.sockets.add(socket).add(upstream);
    const drop = () => {
      socket.destroy();
      upstream.destroy();
      this.sockets.delete(socket);
      this.sockets.delete(upstream);
    };
    socket.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    socket.pipe(upstream).pipe(socket);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await Promise.all([...this.listeners.values()].map((l) => new Promise((r) => l.server.close(r))));
    this.listeners.clear();
    await Promise.all([this.services.stop(), this.endpoints?.stop()]);
  }
}
