// The `local` cloud provider: the cloud-controller-manager's view of bosun's local cloud
// (src/cloud) through its HTTP API. Instances are found by providerID `local://<instance-id>`
// (or, before a node has one, by instance name = node name); a LoadBalancer Service becomes one
// cloud balancer named from a hash of cluster/namespace/name — so its virtual IP, which the cloud
// derives from the name, stays the same across restarts — listening on the Service's TCP ports and
// forwarding to the nodes' NodePorts (the cloud runs the proxies; they carry TCP only, so UDP and
// SCTP ports are left out and reported per port as local.bosun.io/ProtocolNotSupported, and a
// Service with no TCP port gets no balancer but an UnsupportedPortsError; with
// externalTrafficPolicy Local the balancer health-checks spec.healthCheckNodePort on every node and
// sends only to nodes that pass, as Kubernetes' cloud balancers do); a node's podCIDR becomes a
// cloud route named `<cluster>-<node UID>`.
//
// Cloud config (--cloud-config), INI, YAML or JSON: `url` (the cloud's API) or `dataDir` (a data
// directory whose running cloud is found through its endpoint file), and optionally
// `credentialsFile`; the provider's credential (instances:describe, loadbalancers:*, routes:*) comes
// from --cloud-credentials-file, in the cluster Secret cloud-controller-manager-cloud-credentials.
import { createHash } from 'node:crypto';
import { CloudClient, rootCredentialPath } from '../cloud/client.js';
import { readEndpoint } from '../cloud/endpoint.js';
import type { CloudError } from '../cloud/errors.js';
import type { Instance, LoadBalancerPort } from '../cloud/types.js';
import type * as api from '../api/index.js';
import {
  type CloudProvider, type EnsuredLoadBalancer, type InstanceMetadata, type InstancesV2, type LoadBalancer, type LoadBalancerStatus, type PortStatus, type Route, type Routes,
  type ProviderOptions, parseCloudConfig, registerCloudProvider, UnsupportedPortsError,
} from './cloud-provider.js';

export const LOCAL_PROVIDER = 'local';
const PREFIX = `${LOCAL_PROVIDER}://`;
/** The annotation older clients use for loadBalancerSourceRanges; upstream honours both. */
const SOURCE_RANGES_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-source-ranges';

const isNotFound = (e: unknown) => (e as CloudError).status === 404;

/** The provider's client of the cloud: the URL from the config, the credential from
 *  --cloud-credentials-file, else the config's `credentialsFile`, else — with `dataDir`, a developer
 *  running against their own cloud — that cloud's root credential. */
export function cloudClientFromConfig(config: string | undefined, options: ProviderOptions = {}): CloudClient {
  const url = cloudUrlFromConfig(config);
  const values = parseCloudConfig(config ?? '');
  const file = options.credentialsFile ?? values.credentialsFile ?? (values.dataDir ? rootCredentialPath(values.dataDir) : undefined);
  if (!file) throw new Error('the local cloud provider needs a cloud credential: --cloud-credentials-file <file> (in the cluster, the mounted Secret of its CredentialsRequest), or "credentialsFile = <file>" in --cloud-config');
  return CloudClient.withCredentialFile(url, file);
}

/** The cloud's URL from the config text; an error naming the two keys when neither is there. */
export function cloudUrlFromConfig(config: string | undefined): string {
  const values = parseCloudConfig(config ?? '');
  if (values.url) return values.url;
  if (values.dataDir) return readEndpoint(values.dataDir);
  throw new Error('the local cloud provider needs --cloud-config with "url = <the local cloud\'s API URL>" or "dataDir = <its data directory>"');
}

/** The instance ID in a `local://` providerID, or undefined for another provider's. */
export function instanceIdOf(providerID: string | undefined): string | undefined {
  return providerID?.startsWith(PREFIX) ? providerID.slice(PREFIX.length) : undefined;
}

/** The balancer's name: the cluster's name and a hash of cluster/namespace/name, so it is stable
 *  and tells the cluster's balancers apart from others in the same cloud. */
export function balancerName(clusterName: string, service: api.Service): string {
  const hash = createHash('sha256').update(`${clusterName}/${service.metadata.namespace}/${service.metadata.name}`).digest('hex').slice(0, 16);
  return `${clusterName}-lb-${hash}`;
}

/** The reason of the Warning event a Service gets when the cloud carries its balancer on the Node proxy. */
export const LOAD_BALANCER_ENGINE_FALLBACK = 'LoadBalancerEngineFallback';

/** The error a port the local cloud cannot carry gets in status.loadBalancer.ingress[].ports. */
export const PROTOCOL_NOT_SUPPORTED = 'local.bosun.io/ProtocolNotSupported';

/** The Service's ports the local cloud cannot carry (its balancers are TCP proxies), as messages. */
export function unsupportedPorts(service: api.Service): string[] {
  return (service.spec?.ports ?? []).filter((p) => (p.protocol ?? 'TCP') !== 'TCP')
    .map((p) => `port ${p.port}/${p.protocol}: protocol ${p.protocol} is not supported by the local cloud provider (its load balancers carry TCP only)`);
}

/**
 * The balancer's listeners from the Service's TCP ports; ports of other protocols are left out
 * (reported per port in the status). An UnsupportedPortsError when no port is TCP.
 */
export function balancerPorts(service: api.Service): LoadBalancerPort[] {
  const ports = service.spec?.ports ?? [];
  if (ports.length === 0) throw new Error('the Service has no ports');
  const tcp = ports.filter((p) => (p.protocol ?? 'TCP') === 'TCP');
  if (tcp.length === 0) throw new UnsupportedPortsError(unsupportedPorts(service).join('; '));
  return tcp.map((p) => {
    if (!p.nodePort) throw new Error(`port ${p.port} has no nodePort yet`);
    return { ...(p.name ? { name: p.name } : {}), protocol: 'TCP', port: p.port, targetPort: p.nodePort };
  });
}

/** Per Service port: served, or the error of a protocol the cloud cannot carry. */
function portStatuses(service: api.Service): PortStatus[] {
  return (service.spec?.ports ?? []).map((p) => {
    const protocol = p.protocol ?? 'TCP';
    return { port: p.port, protocol, ...(protocol === 'TCP' ? {} : { error: PROTOCOL_NOT_SUPPORTED }) };
  });
}

/**
 * externalTrafficPolicy Local: the balancer checks each node's spec.healthCheckNodePort (kube-proxy
 * answers 200 there only on nodes with a ready local endpoint) and sends only to those, as cloud
 * balancers do. Without a healthCheckNodePort there is nothing to check: every node gets traffic.
 */
export function healthCheckOf(service: api.Service): { port: number; path: string } | undefined {
  const port = service.spec?.healthCheckNodePort;
  return service.spec?.externalTrafficPolicy === 'Local' && port !== undefined && Number.isInteger(port) && port > 0 ? { port, path: '/healthz' } : undefined;
}

export function sourceRanges(service: api.Service): string[] {
  const ranges = service.spec?.loadBalancerSourceRanges ?? [];
  if (ranges.length) return ranges;
  const annotation = service.metadata?.annotations?.[SOURCE_RANGES_ANNOTATION];
  return annotation ? annotation.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

export class LocalCloudProvider implements CloudProvider {
  private readonly client: CloudClient;

  constructor(client: CloudClient) {
    this.client = client;
  }

  initialize(): void { /* nothing to start: every call goes to the cloud's API */ }
  providerName(): string { return LOCAL_PROVIDER; }
  hasClusterID(): boolean { return true; }
  instances(): undefined { return undefined; }
  zones(): undefined { return undefined; }
  clusters(): undefined { return undefined; }

  instancesV2(): InstancesV2 {
    return {
      instanceExists: async (node) => {
        const i = await this.instanceOf(node);
        return i !== undefined && i.state !== 'terminated';
      },
      instanceShutdown: async (node) => {
        const i = await this.instanceOf(node);
        return i?.state === 'stopped' || i?.state === 'stopping';
      },
      instanceMetadata: async (node): Promise<InstanceMetadata> => {
        const i = await this.instanceOf(node);
        if (!i || i.state === 'terminated') throw new Error(`node ${node.metadata.name}: no instance in the local cloud`);
        return {
          providerID: `${PREFIX}${i.id}`,
          instanceType: i.type,
          nodeAddresses: [{ type: 'InternalIP', address: i.privateIp }, { type: 'Hostname', address: i.name }],
          zone: i.zone,
          region: i.region,
        };
      },
    };
  }

  loadBalancer(): LoadBalancer {
    return {
      getLoadBalancerName: balancerName,
      getLoadBalancer: async (cluster, service) => {
        try {
          return statusOf(await this.client.request<{ address: string }>('GET', `/v1/loadbalancers/${balancerName(cluster, service)}`));
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      },
      ensureLoadBalancer: (cluster, service, nodes) => this.ensure(cluster, service, nodes),
      updateLoadBalancer: async (cluster, service, nodes) => { await this.ensure(cluster, service, nodes); },
      ensureLoadBalancerDeleted: (cluster, service) => this.deleteBalancer(balancerName(cluster, service)),
      listLoadBalancerNames: async (cluster) => (await this.client.listLoadBalancers()).map((lb) => lb.name).filter((n) => n.startsWith(`${cluster}-lb-`)),
      deleteLoadBalancerByName: (name) => this.deleteBalancer(name),
    };
  }

  routes(): Routes {
    const prefix = (cluster: string) => `${cluster}-`;
    return {
      listRoutes: async (cluster) => {
        const names = new Map((await this.client.listInstances()).map((i) => [i.id, i.name]));
        return (await this.client.listRoutes()).filter((r) => r.name.startsWith(prefix(cluster)))
          .map((r): Route => ({ name: r.name, targetNode: names.get(r.targetInstance) ?? r.targetInstance, destinationCIDR: r.destinationCidr }));
      },
      createRoute: async (cluster, nameHint, route, node) => {
        const instance = await this.instanceOf(node);
        if (!instance || instance.state === 'terminated') throw new Error(`node ${route.targetNode}: no instance in the local cloud`);
        await this.client.createRoute({ name: `${prefix(cluster)}${nameHint}`, destinationCidr: route.destinationCIDR, targetInstance: instance.id });
      },
      deleteRoute: async (_cluster, route) => {
        try {
          await this.client.deleteRoute(route.name);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      },
    };
  }

  private async ensure(cluster: string, service: api.Service, nodes: api.Node[]): Promise<EnsuredLoadBalancer> {
    const name = balancerName(cluster, service);
    const ports = balancerPorts(service);
    const wanted = nodes.map((n) => instanceIdOf(n.spec?.providerID)).filter((id): id is string => id !== undefined);
    // Only live instances: a node whose instance just went is dropped rather than failing the balancer.
    const live = new Set(wanted.length ? (await this.client.listInstances({ ids: wanted, states: ['pending', 'running', 'stopping', 'stopped'] })).map((i) => i.id) : []);
    const check = healthCheckOf(service);
    const spec = { ports, targets: wanted.filter((id) => live.has(id)), sourceRanges: sourceRanges(service), ...(check ? { healthCheck: check } : {}) };
    const requested = service.spec?.loadBalancerIP || undefined;
    let existing: { address: string } | undefined;
    try {
      existing = await this.client.request('GET', `/v1/loadbalancers/${name}`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    // A new spec.loadBalancerIP: the cloud never moves a balancer, so it is made again there.
    if (existing && requested && existing.address !== requested) await this.deleteBalancer(name);
    const lb = await this.client.ensureLoadBalancer(name, { ...spec, ...(requested ? { address: requested } : {}) });
    const served = portStatuses(service);
    // The cloud carrying its balancers on its Node proxy (haproxy missing there): said on the Service.
    const warnings = lb.engine?.name === 'node' ? [{ reason: LOAD_BALANCER_ENGINE_FALLBACK, message: `the local cloud carries this load balancer on its Node proxy: ${lb.engine.reason ?? 'haproxy is not used'}` }] : [];
    return { ingress: [{ ip: lb.address, ...(served.some((p) => p.error) ? { ports: served } : {}) }], ...(warnings.length ? { warnings } : {}) };
  }

  private async deleteBalancer(name: string): Promise<void> {
    try {
      await this.client.deleteLoadBalancer(name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** The node's instance: by providerID, else by name (a node not yet initialised). */
  private async instanceOf(node: api.Node): Promise<Instance | undefined> {
    const id = instanceIdOf(node.spec?.providerID);
    if (id) {
      try {
        return await this.client.getInstance(id);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    }
    const found = await this.client.listInstances({ names: [node.metadata.name] });
    return found.find((i) => i.state !== 'terminated') ?? found[0];
  }
}

function statusOf(lb: { address: string }): LoadBalancerStatus {
  return { ingress: [{ ip: lb.address }] };
}

registerCloudProvider(LOCAL_PROVIDER, (config, options) => new LocalCloudProvider(cloudClientFromConfig(config, options)));
