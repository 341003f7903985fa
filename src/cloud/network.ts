// The local cloud's load balancers and routes: stored and served, for the cloud provider of the
// cloud-controller-manager (which keys balancers by name and routes by name). A balancer holds a
// virtual IP in 127.0.200.0/24 — the one it asks for, or one derived from its name so that it is
// stable — until it is deleted; its targets and a route's target must be live instances.
import { createHash } from 'node:crypto';
import { allocateAddress } from './addresses.js';
import { INTERNAL_LOAD_BALANCER_ADDRESS_PREFIX, LOAD_BALANCER_ADDRESS_PREFIX } from './catalogue.js';
import { isAddressTarget } from './requests.js';
import { conflict, invalid, notFound } from './errors.js';
import { cidrsOverlap, parseCidr } from '../common/ipv4.js';
import { parseLoadBalancer, parseRoute } from './requests.js';
import type { CloudStore } from './store.js';
import type { LoadBalancer, LoadBalancerEngineInfo, Route } from './types.js';

export class Network {
  private lastChange: Promise<void> = Promise.resolve();

  /** `onChange` runs after every stored change to the balancers (the data plane follows them); it
   *  resolves once the change is carried (it never rejects). */
  constructor(
    private readonly store: CloudStore,
    private readonly onChange: () => Promise<void> | void = () => undefined,
    private readonly engine: () => LoadBalancerEngineInfo | undefined = () => undefined,
  ) {}

  /** A balancer as the API answers it: with the engine that carries it. */
  describe(lb: LoadBalancer): LoadBalancer {
    const engine = this.engine();
    return engine ? { ...lb, engine } : lb;
  }

  /** Resolves once the data plane carries the last stored change. */
  applied(): Promise<void> {
    return this.lastChange;
  }

  private changed(): void {
    this.lastChange = Promise.resolve(this.onChange());
  }

  listLoadBalancers(): LoadBalancer[] {
    return this.store.loadBalancers.list();
  }

  getLoadBalancer(name: string): LoadBalancer {
    const lb = this.store.loadBalancers.get(name);
    if (!lb) throw notFound('LoadBalancerNotFound', `load balancer "${name}" does not exist`);
    return lb;
  }

  /** Creates or replaces the balancer `name`; `created` tells which. Its address never changes. */
  ensureLoadBalancer(name: string, body: unknown): { loadBalancer: LoadBalancer; created: boolean } {
    const request = parseLoadBalancer(body, name);
    const result = this.store.transaction(() => {
      this.requireLiveInstances(request.targets, 'targets');
      request.ports.forEach((p, i) => this.requireLiveInstances((p.targets ?? []).filter((t) => !isAddressTarget(t)), `ports[${i}].targets`));
      const existing = this.store.loadBalancers.get(name);
      const others = this.store.loadBalancers.list().filter((lb) => lb.name !== name);
      if (existing && Boolean(existing.internal) !== Boolean(request.internal)) {
        throw conflict('SchemeChange', `load balancer "${name}" is ${existing.internal ? 'internal' : 'internet-facing'}; delete it to change that`);
      }
      if (existing && request.address && request.address !== existing.address) {
        throw conflict('AddressChange', `load balancer "${name}" has address ${existing.address}; delete it to get ${request.address}`);
      }
      const holder = others.find((lb) => lb.address === request.address);
      if (request.address && holder) throw conflict('AddressInUse', `address ${request.address} is held by load balancer "${holder.name}"`);
      const prefix = request.internal ? INTERNAL_LOAD_BALANCER_ADDRESS_PREFIX : LOAD_BALANCER_ADDRESS_PREFIX;
      const address = existing?.address ?? request.address ?? allocateAddress(prefix, others.map((lb) => lb.address), request.internal ? 'internal load balancers' : 'load balancers', preferredHost(name));
      const now = new Date().toISOString();
      const loadBalancer: LoadBalancer = {
        name, address, ...(request.internal ? { internal: true } : {}), ports: request.ports, targets: request.targets, sourceRanges: request.sourceRanges,
        ...(request.healthCheck ? { healthCheck: request.healthCheck } : {}),
        createdAt: existing?.createdAt ?? now, updatedAt: now,
      };
      this.store.loadBalancers.put(name, loadBalancer);
      return { loadBalancer, created: !existing };
    });
    this.changed();
    return result;
  }

  deleteLoadBalancer(name: string): LoadBalancer {
    const deleted = this.store.transaction(() => {
      const lb = this.getLoadBalancer(name);
      this.store.loadBalancers.delete(name);
      return lb;
    });
    this.changed();
    return deleted;
  }

  listRoutes(): Route[] {
    return this.store.routes.list();
  }

  getRoute(name: string): Route {
    const route = this.store.routes.get(name);
    if (!route) throw notFound('RouteNotFound', `route "${name}" does not exist`);
    return route;
  }

  createRoute(body: unknown): Route {
    const request = parseRoute(body);
    return this.store.transaction(() => {
      this.requireLiveInstances([request.targetInstance], 'targetInstance');
      if (this.store.routes.get(request.name)) throw conflict('RouteAlreadyExists', `route "${request.name}" already exists`);
      const wanted = parseCidr(request.destinationCidr)!;
      const overlapping = this.store.routes.list().find((r) => cidrsOverlap(parseCidr(r.destinationCidr)!, wanted));
      if (overlapping) throw conflict('RouteAlreadyExists', `destination ${request.destinationCidr} overlaps route "${overlapping.name}" (${overlapping.destinationCidr})`);
      const route: Route = { ...request, createdAt: new Date().toISOString() };
      this.store.routes.put(route.name, route);
      return route;
    });
  }

  deleteRoute(name: string): Route {
    return this.store.transaction(() => {
      const route = this.getRoute(name);
      this.store.routes.delete(name);
      return route;
    });
  }

  private requireLiveInstances(ids: string[], field: string): void {
    for (const id of ids) {
      const instance = this.store.instances.get(id);
      if (!instance || instance.state === 'terminated') throw invalid('InvalidInstanceID.NotFound', `${field}: instance ${id} ${instance ? 'is terminated' : 'does not exist'}`);
    }
  }
}

/** A host number 1–254 from the balancer's name, so the same name gets the same address. */
function preferredHost(name: string): number {
  return (createHash('sha256').update(name).digest().readUInt32BE(0) % 254) + 1;
}
