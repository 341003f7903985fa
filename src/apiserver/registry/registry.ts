// The resource types the API server serves: the built-in kinds (declared by their strategies in
// kinds/), and the custom resources of every Established CustomResourceDefinition. Discovery,
// routing, storage keys and validation all look types up here. What a type is, and the keys of
// its objects, are in resource-type.ts (a leaf every strategy can import).
//
// registry/ holds what kube-apiserver's generic registry does: the types served (this file,
// resource-type.ts), the object store over storage (resources.ts, with patches in
// resource-patch.ts and deletion in resource-delete.ts and graceful-deletion.ts), and the write
// context and hooks other parts attach (write-context.ts).
import { createHash } from 'node:crypto';
import { STRATEGIES } from '../kinds/index.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';

/** base64 of the first 8 bytes of sha256("group/version/kind"), as discovery reports it. */
export function storageVersionHash(t: ResourceType): string {
  return createHash('sha256').update(`${t.group}/${t.version}/${t.kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * The built-in types, in the order discovery lists them (each kind's strategy in kinds/ declares its
 * own): one per version each kind is served at (its stored one, and those it converts to).
 */
export const BUILTIN_TYPES: ResourceType[] = STRATEGIES.flatMap((s) => [s.type, ...Object.keys(s.conversions ?? {}).map((version) => ({ ...s.type, version }))]);

/** Preferred order of groups in discovery (built-ins first, as kube-apiserver lists them). */
const GROUP_ORDER = ['', 'apps', 'events.k8s.io', 'autoscaling', 'batch', 'policy', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io'];

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
