// The cloud provider interface of the cloud-controller-manager, as k8s.io/cloud-provider defines
// it: a provider says which parts it supports (each accessor returns the implementation, or
// undefined for "not supported"), and providers register by name with a factory that takes the
// cloud config (the text of --cloud-config, INI or YAML as the provider likes).
import type * as api from '../api/index.js';
import { BosunError } from '../common/errors.js';

export interface NodeAddress {
  type: 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

/** What InstancesV2.instanceMetadata answers for a node. */
export interface InstanceMetadata {
  /** `<provider>://<id>` */
  providerID: string;
  instanceType: string;
  nodeAddresses: NodeAddress[];
  zone: string;
  region: string;
  additionalLabels?: Record<string, string>;
}

export interface InstancesV2 {
  instanceExists(node: api.Node): Promise<boolean>;
  instanceShutdown(node: api.Node): Promise<boolean>;
  instanceMetadata(node: api.Node): Promise<InstanceMetadata>;
}

/** One Service port as the balancer serves it; `error` (a CamelCase reason, or domain/CamelCase
 *  for a provider's own) when it cannot. */
export interface PortStatus {
  port: number;
  protocol: string;
  error?: string;
}

/** The balancer's address as status.loadBalancer writes it. */
export interface LoadBalancerStatus {
  ingress: Array<{ ip?: string; hostname?: string; ports?: PortStatus[] }>;
}

/** What ensureLoadBalancer answers: the status, and what the Service should be told beside it
 *  (Warning events; not part of its status), e.g. that the cloud carries it on a fallback engine. */
export interface EnsuredLoadBalancer extends LoadBalancerStatus {
  warnings?: Array<{ reason: string; message: string }>;
}

/** A Service none of whose ports the cloud can carry (e.g. UDP only on a TCP-only cloud): retrying
 *  cannot help, so the controller waits for the Service to change. */
export class UnsupportedPortsError extends BosunError {
  constructor(message: string) {
    super('UnsupportedPorts', message);
  }
}

/** A cloud that cannot finish now but will: the controller retries after `retryAfterMs`. */
export class RetryError extends BosunError {
  constructor(message: string, readonly retryAfterMs: number) {
    super('CloudRetry', message);
  }
}

export interface LoadBalancer {
  getLoadBalancerName(clusterName: string, service: api.Service): string;
  /** The balancer's status, or undefined when it does not exist. */
  getLoadBalancer(clusterName: string, service: api.Service): Promise<LoadBalancerStatus | undefined>;
  ensureLoadBalancer(clusterName: string, service: api.Service, nodes: api.Node[]): Promise<EnsuredLoadBalancer>;
  updateLoadBalancer(clusterName: string, service: api.Service, nodes: api.Node[]): Promise<void>;
  ensureLoadBalancerDeleted(clusterName: string, service: api.Service): Promise<void>;
  /** The names of this cluster's balancers in the cloud (for removing orphans at start). */
  listLoadBalancerNames?(clusterName: string): Promise<string[]>;
  /** Deletes a balancer by name (an orphan, whose Service is gone). */
  deleteLoadBalancerByName?(name: string): Promise<void>;
}

export interface Route {
  name: string;
  /** The node's name. */
  targetNode: string;
  destinationCIDR: string;
}

export interface Routes {
  listRoutes(clusterName: string): Promise<Route[]>;
  /** `nameHint` is the node's UID, as upstream passes it. */
  createRoute(clusterName: string, nameHint: string, route: Omit<Route, 'name'>, node: api.Node): Promise<void>;
  deleteRoute(clusterName: string, route: Route): Promise<void>;
}

/** The legacy Instances and the Zones and Clusters interfaces: bosun's provider supports none of
 *  them (InstancesV2 replaces the first two), so only their existence is part of the contract. */
export type Instances = object;
export type Zones = object;
export type Clusters = object;

export interface CloudProvider {
  /** Runs once before any controller starts; `stop` aborts when the CCM stops. */
  initialize(stop: AbortSignal): void | Promise<void>;
  loadBalancer(): LoadBalancer | undefined;
  instances(): Instances | undefined;
  instancesV2(): InstancesV2 | undefined;
  zones(): Zones | undefined;
  clusters(): Clusters | undefined;
  routes(): Routes | undefined;
  providerName(): string;
  hasClusterID(): boolean;
}

/** What the provider is given besides its config: where its cloud credential is (--cloud-credentials-file). */
export interface ProviderOptions { credentialsFile?: string }

export type ProviderFactory = (config: string | undefined, options: ProviderOptions) => CloudProvider | Promise<CloudProvider>;

const providers = new Map<string, ProviderFactory>();

export function registerCloudProvider(name: string, factory: ProviderFactory): void {
  if (providers.has(name)) throw new Error(`cloud provider "${name}" is registered twice`);
  providers.set(name, factory);
}

export function cloudProviderNames(): string[] {
  return [...providers.keys()].sort();
}

/** The provider `name` made from `config`; an error naming the known providers when unknown. */
export async function initCloudProvider(name: string, config: string | undefined, options: ProviderOptions = {}): Promise<CloudProvider> {
  const factory = providers.get(name);
  if (!factory) throw new Error(`unknown cloud provider "${name}" (known: ${cloudProviderNames().join(', ') || 'none'})`);
  return factory(config, options);
}

/**
 * Reads a cloud config in the shapes providers use: INI (`[Global]` then `key = value`, as gcfg
 * files), flat YAML (`key: value`) or a JSON object (as OpenShift's installer writes some).
 * Keys of the `[Global]` section (or outside any section) come back as they are; other
 * sections' (or nested objects') keys as `section.key`. Comments (#, ;) skipped.
 */
export function parseCloudConfig(text: string): Record<string, string> {
  if (text.trimStart().startsWith('{')) return parseJsonCloudConfig(text);
  const out: Record<string, string> = {};
  let section = '';
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';') || line === '---') return;
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header) {
      section = header[1].toLowerCase() === 'global' ? '' : header[1];
      return;
    }
    const kv = /^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$/.exec(line);
    if (!kv) throw new Error(`cloud config line ${i + 1}: "${raw}" is neither a [section] nor key = value`);
    const value = kv[2].replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
    out[section ? `${section}.${kv[1]}` : kv[1]] = value;
  });
  return out;
}

function parseJsonCloudConfig(text: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`cloud config: not a JSON object: ${(e as Error).message}`);
  }
  const out: Record<string, string> = {};
  const flatten = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, `${prefix}${k}.`);
      else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[`${prefix}${k}`] = String(v);
      else throw new Error(`cloud config: "${prefix}${k}" must be a string, number, boolean or object`);
    }
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('cloud config: the JSON is not an object');
  flatten(value as Record<string, unknown>, '');
  return out;
}
