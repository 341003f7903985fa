// A CatalogSource's catalog, read from where its sourceType says: a ConfigMap whose keys are the
// catalog's files (sourceType configmap, or internal as OLM treats it). One parse per ConfigMap
// revision, shared by every controller of the process. A source bosun cannot read (grpc: a catalog
// image or an address) is reported as such, not guessed at.
import type * as api from '../api/index.js';
import type { Clock, Manager } from '../kube/index.js';
import { olmContext, type OlmContext } from './context.js';
import { InvalidCatalogError, loadCatalog, type Catalog } from './fbc.js';

/** The OLM context of the components that read catalogs (the catalog operator, the package
 *  server): with the catalogs, parsed once per ConfigMap revision for all their controllers. */
export interface CatalogContext extends OlmContext {
  catalogs: CatalogCache;
}

export function catalogContext(manager: Manager, clock?: Clock): CatalogContext {
  return { ...olmContext(manager, clock), catalogs: new CatalogCache() };
}

/** What a CatalogSource offers now: its catalog, or why there is none (a reason and a message). */
export type CatalogState =
  | { ready: true; catalog: Catalog; configMap: api.ConfigMap }
  | { ready: false; reason: string; message: string; configMap?: api.ConfigMap };

export class CatalogCache {
  private readonly parsed = new Map<string, { revision: string; state: CatalogState }>();

  /** The catalog of `source`, given the ConfigMaps of its namespace (a lookup by name). */
  state(source: api.CatalogSource, configMap: (name: string) => api.ConfigMap | undefined): CatalogState {
    const { sourceType } = source.spec;
    if (sourceType === 'grpc') {
      return { ready: false, reason: 'UnsupportedSourceType', message: `sourceType grpc (${source.spec.image ? `image ${source.spec.image}` : `address ${source.spec.address ?? 'none'}`}) is not served by bosun: give the catalog as a ConfigMap (spec.sourceType: configmap, spec.configMap: NAME)` };
    }
    const name = source.spec.configMap;
    if (!name) return { ready: false, reason: 'InvalidSpec', message: `sourceType ${sourceType} needs spec.configMap: the ConfigMap holding the catalog's files` };
    const cm = configMap(name);
    if (!cm) return { ready: false, reason: 'ConfigMapNotFound', message: `ConfigMap ${source.metadata.namespace}/${name} not found` };
    const key = `${source.metadata.namespace}/${name}`;
    const revision = `${cm.metadata.uid}/${cm.metadata.resourceVersion}`;
    const known = this.parsed.get(key);
    if (known?.revision === revision) return known.state;
    let state: CatalogState;
    try {
      const files = { ...(cm.data ?? {}), ...Object.fromEntries(Object.entries(cm.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])) };
      if (Object.keys(files).length === 0) throw new InvalidCatalogError([`ConfigMap ${key} has no files`]);
      state = { ready: true, catalog: loadCatalog(files), configMap: cm };
    } catch (e) {
      state = { ready: false, reason: e instanceof InvalidCatalogError ? e.reason : 'InvalidCatalog', message: `ConfigMap ${key}: ${(e as Error).message}`, configMap: cm };
    }
    this.parsed.set(key, { revision, state });
    return state;
  }
}
