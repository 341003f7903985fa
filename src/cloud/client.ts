// A client of the local cloud's HTTP API, for the `bosun cloud` command and the components that
// use the cloud (the cloud provider, Cluster API's local provider). An error answer becomes the
// CloudError it describes; a cloud that cannot be reached says where it was looked for.
import { CloudError } from './errors.js';
import type { Operation } from './lifecycle.js';
import type { InstanceFilter } from './cloud.js';
import type { Instance, LoadBalancer, Route } from './types.js';

export class CloudClient {
  private readonly base: string;

  constructor(url: string) {
    this.base = url.replace(/\/+$/, '');
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
      throw new Error(`cannot reach the local cloud at ${this.base}: ${cause}`);
    }
    const text = await res.text();
    let parsed: unknown;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
    if (!res.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new CloudError(res.status, error?.code ?? 'Error', error?.message ?? `${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    }
    return parsed as T;
  }

  async listInstances(filter: InstanceFilter = {}): Promise<Instance[]> {
    const q = new URLSearchParams();
    if (filter.states?.length) q.set('state', filter.states.join(','));
    if (filter.names?.length) q.set('name', filter.names.join(','));
    if (filter.ids?.length) q.set('id', filter.ids.join(','));
    const query = q.toString();
    return (await this.request<{ instances: Instance[] }>('GET', `/v1/instances${query ? `?${query}` : ''}`)).instances;
  }

  getInstance(id: string): Promise<Instance> {
    return this.request('GET', `/v1/instances/${encodeURIComponent(id)}`);
  }

  createInstance(spec: { name: string; type?: string; zone?: string; userData?: string }): Promise<Instance> {
    return this.request('POST', '/v1/instances', spec);
  }

  operate(op: Operation, id: string): Promise<Instance> {
    return this.request('POST', `/v1/instances/${encodeURIComponent(id)}/${op}`);
  }

  async listLoadBalancers(): Promise<LoadBalancer[]> {
    return (await this.request<{ loadBalancers: LoadBalancer[] }>('GET', '/v1/loadbalancers')).loadBalancers;
  }

  ensureLoadBalancer(name: string, spec: Omit<LoadBalancer, 'name' | 'address' | 'createdAt' | 'updatedAt'> & { address?: string }): Promise<LoadBalancer> {
    return this.request('PUT', `/v1/loadbalancers/${encodeURIComponent(name)}`, spec);
  }

  deleteLoadBalancer(name: string): Promise<LoadBalancer> {
    return this.request('DELETE', `/v1/loadbalancers/${encodeURIComponent(name)}`);
  }

  async listRoutes(): Promise<Route[]> {
    return (await this.request<{ routes: Route[] }>('GET', '/v1/routes')).routes;
  }

  createRoute(spec: { name: string; destinationCidr: string; targetInstance: string }): Promise<Route> {
    return this.request('POST', '/v1/routes', spec);
  }

  deleteRoute(name: string): Promise<Route> {
    return this.request('DELETE', `/v1/routes/${encodeURIComponent(name)}`);
  }
}
