// The resource types the API server serves: the built-in kinds, and the custom resources of
// every Established CustomResourceDefinition. Discovery, routing, storage keys and validation all
// look types up here.
import { createHash } from 'node:crypto';
import type { JSONSchemaProps } from './crd-schema.js';
import type { PrinterColumn } from './tables.js';

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  status: boolean;
  scale?: ScaleSubresource;
  /** Field selectors beyond metadata.name and metadata.namespace. */
  fieldSelectors: string[];
  /** Built-ins take strategic merge patches; custom resources do not. */
  builtin: boolean;
  /** For custom resources: the version objects are stored at, its schema and columns. */
  custom?: {
    storageVersion: string;
    schema?: JSONSchemaProps;
    printerColumns?: PrinterColumn[];
  };
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** The storage prefix for every object of a type (shared by all versions of it). */
export function storagePrefix(t: { group: string; resource: string }): string {
  return `/${t.group || 'core'}/${t.resource}/`;
}

export function storageKey(t: ResourceType, namespace: string | undefined, name: string): string {
  return `${storagePrefix(t)}${t.namespaced ? (namespace ?? '') : ''}/${name}`;
}

/** base64 of the first 8 bytes of sha256("group/version/kind"), as discovery reports it. */
export function storageVersionHash(t: ResourceType): string {
  return createHash('sha256').update(`${t.group}/${t.version}/${t.kind}`).digest().subarray(0, 8).toString('base64');
}

function builtin(
  group: string,
  version: string,
  resource: string,
  kind: string,
  options: Partial<Pick<ResourceType, 'namespaced' | 'shortNames' | 'categories' | 'status' | 'scale' | 'fieldSelectors' | 'singular'>> = {},
): ResourceType {
  return {
    group,
    version,
    resource,
    kind,
    listKind: `${kind}List`,
    singular: options.singular ?? kind.toLowerCase(),
    namespaced: options.namespaced ?? true,
    shortNames: options.shortNames ?? [],
    categories: options.categories ?? [],
    status: options.status ?? false,
    scale: options.scale,
    fieldSelectors: options.fieldSelectors ?? [],
    builtin: true,
  };
}

const replicasScale: ScaleSubresource = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' };
const ALL = ['all'];

export const BUILTIN_TYPES: ResourceType[] = [
  builtin('', 'v1', 'namespaces', 'Namespace', { namespaced: false, shortNames: ['ns'], status: true, fieldSelectors: ['status.phase'] }),
  builtin('', 'v1', 'nodes', 'Node', { namespaced: false, shortNames: ['no'], status: true, fieldSelectors: ['spec.unschedulable'] }),
  builtin('', 'v1', 'pods', 'Pod', {
    shortNames: ['po'],
    categories: ALL,
    status: true,
    fieldSelectors: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  }),
  builtin('', 'v1', 'services', 'Service', { shortNames: ['svc'], categories: ALL, status: true }),
  builtin('', 'v1', 'endpoints', 'Endpoints', { shortNames: ['ep'], singular: 'endpoints' }),
  builtin('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice'),
  builtin('', 'v1', 'configmaps', 'ConfigMap', { shortNames: ['cm'] }),
  builtin('', 'v1', 'secrets', 'Secret', { fieldSelectors: ['type'] }),
  builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', { shortNames: ['sa'] }),
  builtin('', 'v1', 'events', 'Event', {
    shortNames: ['ev'],
    fieldSelectors: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
  }),
  builtin('events.k8s.io', 'v1', 'events', 'Event', { shortNames: ['ev'] }),
  builtin('coordination.k8s.io', 'v1', 'leases', 'Lease'),
  builtin('apps', 'v1', 'deployments', 'Deployment', { shortNames: ['deploy'], categories: ALL, status: true, scale: replicasScale }),
  builtin('apps', 'v1', 'replicasets', 'ReplicaSet', { shortNames: ['rs'], categories: ALL, status: true, scale: replicasScale }),
  builtin('apps', 'v1', 'daemonsets', 'DaemonSet', { shortNames: ['ds'], categories: ALL, status: true }),
  builtin('apps', 'v1', 'statefulsets', 'StatefulSet', { shortNames: ['sts'], categories: ALL, status: true, scale: replicasScale }),
  builtin('batch', 'v1', 'jobs', 'Job', { categories: ALL, status: true }),
  builtin('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', { shortNames: ['pdb'], status: true }),
  builtin('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', { namespaced: false, shortNames: ['crd', 'crds'], status: true }),
  builtin('rbac.authorization.k8s.io', 'v1', 'roles', 'Role'),
  builtin('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding'),
  builtin('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', { namespaced: false }),
  builtin('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', { namespaced: false }),
];

/** Preferred order of groups in discovery (built-ins first, as kube-apiserver lists them). */
const GROUP_ORDER = ['', 'apps', 'events.k8s.io', 'batch', 'policy', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io'];

export class Registry {
  private readonly byGroupVersion = new Map<string, Map<string, ResourceType>>();
  private customByCrd = new Map<string, ResourceType[]>();

  constructor() {
    for (const t of BUILTIN_TYPES) this.add(t);
  }

  private add(t: ResourceType): void {
    const gv = apiVersionOf(t);
    let resources = this.byGroupVersion.get(gv);
    if (!resources) this.byGroupVersion.set(gv, (resources = new Map()));
    resources.set(t.resource, t);
  }

  private remove(t: ResourceType): void {
    const gv = apiVersionOf(t);
    const resources = this.byGroupVersion.get(gv);
    resources?.delete(t.resource);
    if (resources && resources.size === 0) this.byGroupVersion.delete(gv);
  }

  /** Replaces the types served for one CRD (an empty list stops serving it). */
  setCustom(crdName: string, types: ResourceType[]): void {
    for (const t of this.customByCrd.get(crdName) ?? []) this.remove(t);
    this.customByCrd.delete(crdName);
    if (types.length === 0) return;
    for (const t of types) this.add(t);
    this.customByCrd.set(crdName, types);
  }

  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byGroupVersion.get(group ? `${group}/${version}` : version)?.get(resource);
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.byGroupVersion.has(group ? `${group}/${version}` : version);
  }

  resources(group: string, version: string): ResourceType[] {
    return [...(this.byGroupVersion.get(group ? `${group}/${version}` : version)?.values() ?? [])];
  }

  /** Groups (other than core) with their versions, preferred version first. */
  groups(): Array<{ name: string; versions: string[] }> {
    const groups = new Map<string, string[]>();
    for (const gv of this.byGroupVersion.keys()) {
      if (!gv.includes('/')) continue;
      const [group, version] = gv.split('/');
      const versions = groups.get(group) ?? [];
      versions.push(version);
      groups.set(group, versions);
    }
    const rank = (g: string) => {
      const i = GROUP_ORDER.indexOf(g);
      return i < 0 ? GROUP_ORDER.length : i;
    };
    return [...groups.entries()]
      .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
      .map(([name, versions]) => ({ name, versions: versions.sort(compareKubeVersions) }));
  }

  /** The custom types currently served for a CRD. */
  customTypes(crdName: string): ResourceType[] {
    return this.customByCrd.get(crdName) ?? [];
  }
}

/** Orders versions as Kubernetes prefers them: GA before beta before alpha, higher first. */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v] as const;
    return [m[2] === 'alpha' ? 2 : m[2] === 'beta' ? 1 : 0, -Number(m[1]), -Number(m[3] ?? 0), v] as const;
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] as number) - (pb[i] as number);
  return a.localeCompare(b);
}
