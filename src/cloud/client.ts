// A client of the local cloud's HTTP API, for the `bosun cloud` command and the components that
// use the cloud (the cloud provider, Cluster API's local provider). An error answer becomes the
// CloudError it describes; a cloud that cannot be reached says where it was looked for. It sends
// its credential (credentials.ts: `<key id>.<secret>`) as a bearer token; components read theirs
// from the file their CredentialsRequest's Secret is mounted as (--cloud-credentials-file).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { httpCall, type HttpAnswer } from '../common/http-client.js';
import { CloudError } from './errors.js';
import type { Operation } from './lifecycle.js';
import type { InstanceFilter } from './cloud.js';
import type { Instance, LoadBalancer, Route } from './types.js';

/** How long a call to the cloud may take: five minutes, fetch's own limits (which this client
 *  used before), far beyond any of the cloud's answers. */
const REQUEST_TIMEOUT_MS = 300_000;

/** The key of a CredentialsRequest's Secret that holds the credential (the file, once mounted). */
export const CREDENTIAL_KEY = 'credential';

/** The root credential of the cloud serving `dataDir` (what `bosun cloud serve` and the install made). */
export function rootCredentialPath(dataDir: string): string {
  return join(dataDir, 'cloud', 'root.credential');
}

/** The credential in `file`: a mounted Secret's key, or the root's file. */
export function readCredentialFile(file: string): string {
  let text: string;
  try { text = readFileSync(file, 'utf8').trim(); } catch (e) {
    throw new Error(`cannot read the cloud credential ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  if (!/^BCK[0-9A-F]{16}\.\S+$/.test(text)) throw new Error(`${file} does not hold a local cloud credential (<key id>.<secret>)`);
  return text;
}

export interface CloudIdentityView { name: string; actions: string[]; keyId: string; createdAt: string; updatedAt: string }

export class CloudClient {
  private readonly base: string;

  private readonly credential: () => string | undefined;

  /** credential: sent as `Authorization: Bearer …`; without one the cloud answers 401 to all but /healthz. */
  constructor(url: string, credential?: string | (() => string | undefined)) {
    this.base = url.replace(/\/+$/, '');
    this.credential = typeof credential === 'function' ? credential : () => credential;
  }

  /** A client with the credential read from `file` (a mounted Secret's key, or the root's file):
   *  read now (a missing or bad file is an error at once) and again whenever the file changes, so a
   *  rotated credential the node agent writes into the volume is used without a restart. */
  static withCredentialFile(url: string, file: string): CloudClient {
    let cached = { mtimeMs: statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0, credential: readCredentialFile(file) };
    return new CloudClient(url, () => {
      const mtimeMs = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
      if (mtimeMs !== undefined && mtimeMs !== cached.mtimeMs) {
        try { cached = { mtimeMs, credential: readCredentialFile(file) }; } catch { /* half-written: keep the last good one */ }
      }
      return cached.credential;
    });
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: HttpAnswer;
    const credential = this.credential();
    try {
      res = await httpCall(`${this.base}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
      throw new Error(`cannot reach the local cloud at ${this.base}: ${cause}`);
    }
    const text = res.text();
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

  /** A client of the same cloud with another credential. */
  as(credential: string): CloudClient {
    return new CloudClient(this.base, credential);
  }

  /** Who the cloud takes this client's credential for. */
  identity(): Promise<CloudIdentityView> {
    return this.request('GET', '/v1/identity');
  }

  /** Creates the identity (answering its new credential) or sets its actions (no credential: it keeps its own). */
  putIdentity(name: string, actions: string[]): Promise<{ identity: CloudIdentityView; credential?: string }> {
    return this.request('PUT', `/v1/credentials/${encodeURIComponent(name)}`, { actions });
  }

  getIdentity(name: string): Promise<CloudIdentityView> {
    return this.request('GET', `/v1/credentials/${encodeURIComponent(name)}`);
  }

  async listIdentities(): Promise<CloudIdentityView[]> {
    return (await this.request<{ identities: CloudIdentityView[] }>('GET', '/v1/credentials')).identities;
  }

  /** A new credential for the identity; its old one stops working. */
  rotateCredential(name: string): Promise<{ identity: CloudIdentityView; credential: string }> {
    return this.request('POST', `/v1/credentials/${encodeURIComponent(name)}/rotate`);
  }

  deleteIdentity(name: string): Promise<CloudIdentityView> {
    return this.request('DELETE', `/v1/credentials/${encodeURIComponent(name)}`);
  }
}
