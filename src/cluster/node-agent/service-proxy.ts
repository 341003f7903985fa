// The node's part of kube-proxy, in userspace: for every Service port with a NodePort, a TCP
// listener on <nodeIP>:<nodePort>, and for every Service port a listener on <clusterIP>:<port>,
// each forwarding every connection to a ready endpoint, round-robin; a connection with no ready
// endpoint is closed at once (kube-proxy rejects it). Endpoints come from EndpointSlices when the
// API server serves them, else from the Ready pods the Service's selector matches (what the
// EndpointSlice controller would have put there).
// externalTrafficPolicy Local: a NodePort sends only to endpoints on this node (none here: closed),
// and the Service's healthCheckNodePort is served on <nodeIP> over HTTP, as kube-proxy's health
// check server: 200 with the count of ready local endpoints when there is one, 503 otherwise —
// what a cloud load balancer checks to send only to nodes that have one. Cluster IPs use every
// endpoint, whatever the policy.
// Cluster IPs: kube-proxy intercepts them with netfilter, which needs root; here a cluster IP is
// served only when it is a loopback address (127.0.0.0/8, every one of which is this host's: the
// local cluster's service network is 127.30.0.0/16), and skipped otherwise (logged once) — a
// service network such as 172.30.0.0/16 is not routed on loopback. All machines share the host's
// loopback, so one cluster IP is one listener on the host: the first node to bind it serves it for
// every node; the others find it in use and try again every CLUSTER_IP_RETRY_MS, so that it moves
// to another node within seconds of the holder stopping.
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { REQUEST_LIMITS } from '../../common/http-limits.js';
import { closeServer } from '../../common/http-server.js';
import type { Logger } from '../../common/log.js';
import type * as api from '../../api/index.js';
import { Informer, keyOf, type KubeClient } from '../../kube/index.js';
import { resolvePort } from './pod-spec.js';
import { ENDPOINT_SLICES, PODS, SERVICES } from './resources.js';
import { isPodReady } from '../../kube/readiness.js';

export interface Endpoint { ip: string; port: number; nodeName?: string }

/** Whether a label selector (a Service's map) matches the labels. */
function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

const podReady = (pod: api.Pod) => isPodReady(pod) && pod.status?.podIP && !pod.metadata.deletionTimestamp;

/** Ready endpoints of a Service port from the pods its selector matches. Pure. */
export function endpointsFromPods(service: api.Service, servicePort: api.ServicePort, pods: api.Pod[]): Endpoint[] {
  const out: Endpoint[] = [];
  for (const pod of pods) {
    if (pod.metadata.namespace !== service.metadata.namespace || !matches(service.spec?.selector, pod.metadata.labels) || !podReady(pod)) continue;
    const target = servicePort.targetPort ?? servicePort.port;
    const port = (pod.spec?.containers ?? []).map((c) => resolvePort(target, c)).find((p) => p !== undefined);
    // podReady let only pods with an IP through.
    if (port) out.push({ ip: pod.status?.podIP ?? '', port, ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}) });
  }
  return out;
}

/** Ready endpoints of a Service port from its EndpointSlices. Pure. */
export function endpointsFromSlices(service: api.Service, servicePort: api.ServicePort, slices: api.EndpointSlice[]): Endpoint[] {
  const out: Endpoint[] = [];
  for (const slice of slices) {
    if (slice.metadata.namespace !== service.metadata.namespace || slice.metadata.labels?.['kubernetes.io/service-name'] !== service.metadata.name) continue;
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === (servicePort.name ?? ''))?.port;
    if (!port) continue;
    for (const ep of slice.endpoints ?? []) if (ep.conditions?.ready !== false) for (const ip of ep.addresses ?? []) out.push({ ip, port, ...(ep.nodeName ? { nodeName: ep.nodeName } : {}) });
  }
  return out;
}

interface Listener { server: Server; kind: ProxiedAddress['kind']; service: string; portName: string; next: number }

/** How often a node tries again to serve a cluster IP another node on this host holds. */
const CLUSTER_IP_RETRY_MS = 2000;

/** Whether an address is IPv4 loopback (127.0.0.0/8): bindable on this host without root. */
export function isLoopback(ip: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/** An address the node serves: a NodePort or health-check node port on the node's IP, or a Service port on its loopback cluster IP. */
export interface ProxiedAddress { kind: 'nodePort' | 'clusterIP' | 'healthCheck'; ip: string; port: number; service: string; portName: string }

/** Whether a Service's NodePorts send only to endpoints on the node they are reached on. */
export const externalTrafficLocal = (service: api.Service): boolean => service.spec?.externalTrafficPolicy === 'Local';

/** The endpoints a connection to `kind` may go to on `nodeName`. Pure. */
export function endpointsFor(kind: ProxiedAddress['kind'], service: api.Service, endpoints: Endpoint[], nodeName: string): Endpoint[] {
  return kind === 'nodePort' && externalTrafficLocal(service) ? endpoints.filter((e) => e.nodeName === nodeName) : endpoints;
}

/** kube-proxy's health check answer for a Service on a node: 200 with its ready local endpoints, 503 with none. Pure. */
/** What kube-proxy's health check server answers. */
export interface HealthCheckBody {
  service?: { namespace?: string; name: string };
  localEndpoints?: number;
  serviceProxyHealthy?: boolean;
}

export function healthCheckAnswer(service: api.Service, endpoints: Endpoint[], nodeName: string): { status: number; body: HealthCheckBody } {
  const localEndpoints = new Set(endpoints.filter((e) => e.nodeName === nodeName).map((e) => e.ip)).size;
  return {
    status: localEndpoints > 0 ? 200 : 503,
    body: { service: { namespace: service.metadata.namespace, name: service.metadata.name }, localEndpoints, serviceProxyHealthy: true },
  };
}

/** Every TCP address the node's proxy listens on for these Services (kube-proxy's service map). Pure. */
export function proxiedAddresses(services: api.Service[], nodeIP: string): ProxiedAddress[] {
  const out: ProxiedAddress[] = [];
  for (const svc of services) {
    const type = svc.spec?.type ?? 'ClusterIP';
    if (type === 'ExternalName') continue;
    const ips = (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP]).filter((ip): ip is string => Boolean(ip) && ip !== 'None' && isLoopback(ip!));
    for (const p of svc.spec?.ports ?? []) {
      if ((p.protocol ?? 'TCP') !== 'TCP') continue;
      const base = { service: keyOf(svc), portName: p.name ?? '' };
      if (p.nodePort && (type === 'NodePort' || type === 'LoadBalancer')) out.push({ kind: 'nodePort', ip: nodeIP, port: p.nodePort, ...base });
      for (const ip of ips) out.push({ kind: 'clusterIP', ip, port: p.port, ...base });
    }
    const healthCheck = svc.spec?.healthCheckNodePort;
    if (type === 'LoadBalancer' && externalTrafficLocal(svc) && healthCheck !== undefined && Number.isInteger(healthCheck) && healthCheck > 0) {
      out.push({ kind: 'healthCheck', ip: nodeIP, port: healthCheck, service: keyOf(svc), portName: '' });
    }
  }
  return out;
}

export class ServiceProxy {
  private readonly services: Informer<api.Service>;
  /** The EndpointSlices when the API server serves them, else the pods. */
  private slices?: Informer<api.EndpointSlice>;
  private pods?: Informer<api.Pod>;
  private useSlices = false;
  /** By `<ip>:<port>`. */
  private readonly listeners = new Map<string, Listener>();
  private readonly sockets = new Set<Socket>();
  private readonly skipped = new Set<string>();
  private retry?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly client: KubeClient, private readonly nodeName: string, private readonly nodeIP: string, private readonly log: Logger) {
    this.services = new Informer(client, SERVICES);
  }

  async start(signal: AbortSignal): Promise<void> {
    this.useSlices = await this.client.resourceFor('discovery.k8s.io/v1', 'EndpointSlice').then(() => true, () => false);
    // Without EndpointSlices the Ready pods are the endpoints — when this node may list them all
    // (a node's own credentials may not: the Node authorizer gives it only its own pods).
    const podsAllowed = this.useSlices || await this.mayListPods();
    // Stopped meanwhile: an informer started on an aborted signal would never stop.
    signal.throwIfAborted();
    if (podsAllowed) {
      if (this.useSlices) this.slices = new Informer(this.client, ENDPOINT_SLICES);
      else this.pods = new Informer(this.client, PODS);
    } else this.log.warn('the API server serves no EndpointSlices and this node may not list pods: NodePorts are listened on but have no endpoints');
    this.services.on(() => this.reconcile());
    this.services.start(signal);
    this.slices?.start(signal);
    this.pods?.start(signal);
    await Promise.all([this.services.waitForSync(signal), this.slices?.waitForSync(signal), this.pods?.waitForSync(signal)]);
    this.reconcile();
  }

  private async mayListPods(): Promise<boolean> {
    const review = await this.client.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'watch', resource: 'pods', version: 'v1' } } },
    }).catch(() => undefined);
    return review?.status?.allowed === true;
  }

  private endpointsOf(service: api.Service, servicePort: api.ServicePort): Endpoint[] {
    return this.useSlices ? endpointsFromSlices(service, servicePort, this.slices?.list() ?? []) : endpointsFromPods(service, servicePort, this.pods?.list() ?? []);
  }

  /** Listens on every NodePort, health-check node port and loopback cluster IP there is, and on no other. */
  private reconcile(): void {
    // Stopped (or stopping): a listener opened now would outlive the node agent.
    if (this.stopped) return;
    const wanted = new Map(proxiedAddresses(this.services.list(), this.nodeIP).map((a) => [`${a.ip}:${a.port}`, a]));
    for (const svc of this.services.list()) {
      const ip = svc.spec?.clusterIP;
      if (ip && ip !== 'None' && !isLoopback(ip) && !this.skipped.has(keyOf(svc))) {
        this.skipped.add(keyOf(svc));
        this.log.info({ service: keyOf(svc), clusterIP: ip }, 'the cluster IP is not a loopback address: not proxied on this host');
      }
    }
    for (const [address, l] of this.listeners) {
      if (!wanted.has(address)) {
        l.server.close();
        this.listeners.delete(address);
      }
    }
    for (const [address, w] of wanted) {
      const existing = this.listeners.get(address);
      if (existing && existing.kind === w.kind) {
        Object.assign(existing, { service: w.service, portName: w.portName });
        continue;
      }
      existing?.server.close();
      const server = w.kind === 'healthCheck'
        ? createHttpServer(REQUEST_LIMITS, (_request, response) => this.answerHealthCheck(address, response))
        : createServer((socket) => this.forward(address, socket));
      const entry: Listener = { kind: w.kind, service: w.service, portName: w.portName, next: 0, server };
      entry.server.on('error', (e: NodeJS.ErrnoException) => {
        if (this.listeners.get(address) === entry) this.listeners.delete(address);
        // A cluster IP another node on this host already serves: taken over when it is freed.
        if (e.code === 'EADDRINUSE' && w.kind === 'clusterIP') this.scheduleRetry();
        else {
          // Ports below 1024 need root, or net.ipv4.ip_unprivileged_port_start lowered to them.
          const hint = e.code === 'EACCES' ? ' (a port below 1024 needs root or sysctl net.ipv4.ip_unprivileged_port_start)' : '';
          this.log.warn({ address, service: w.service, err: e.message }, `cannot listen on the ${{ nodePort: 'NodePort', clusterIP: 'cluster IP', healthCheck: 'health-check node port' }[w.kind]}${hint}`);
        }
      });
      entry.server.listen(w.port, w.ip);
      this.listeners.set(address, entry);
    }
  }

  private scheduleRetry(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.stopped) this.reconcile();
    }, CLUSTER_IP_RETRY_MS);
  }

  /** kube-proxy's health check server for one Service: any path, JSON, 200 or 503. */
  private answerHealthCheck(address: string, response: ServerResponse): void {
    const svc = this.services.getByKey(this.listeners.get(address)?.service ?? '');
    const endpoints = (svc?.spec?.ports ?? []).flatMap((p) => this.endpointsOf(svc!, p));
    const { status, body } = svc ? healthCheckAnswer(svc, endpoints, this.nodeName) : { status: 503, body: {} as HealthCheckBody };
    response.writeHead(status, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', 'X-Load-Balancing-Endpoint-Weight': String(body.localEndpoints ?? 0) });
    response.end(JSON.stringify(body));
  }

  private forward(address: string, socket: Socket): void {
    const l = this.listeners.get(address);
    const svc = l && this.services.getByKey(l.service);
    const servicePort = svc?.spec?.ports?.find((p) => (p.name ?? '') === l!.portName);
    const endpoints = servicePort ? endpointsFor(l!.kind, svc!, this.endpointsOf(svc!, servicePort), this.nodeName) : [];
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
    this.stopped = true;
    clearTimeout(this.retry);
    for (const s of this.sockets) s.destroy();
    // closeServer ends a health check server's kept-alive connections, which would hold its close back.
    await Promise.all([...this.listeners.values()].map((l) => closeServer(l.server)));
    this.listeners.clear();
    await Promise.all([this.services.stop(), this.slices?.stop(), this.pods?.stop()]);
  }
}
