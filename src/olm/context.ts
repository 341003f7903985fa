// What the OLM controllers of one process share: the API client, the manager's shared informers,
// the clock every time rule runs on, and the catalogs read from their sources (one parse per
// ConfigMap revision).
import type * as api from '../api/index.js';
import { type Clock, type Informer, type InformerOptions, type KubeClient, type Manager, type ResourceRef, realClock } from '../kube/index.js';
import { CatalogCache } from './catalogs.js';

export interface OlmContext {
  client: KubeClient;
  informer<T extends api.KubeObject>(resource: ResourceRef<T>, options?: InformerOptions): Informer<T>;
  clock: Clock;
  catalogs: CatalogCache;
}

export function olmContext(manager: Manager, clock: Clock = realClock): OlmContext {
  return {
    client: manager.client,
    clock,
    informer: (resource, options) => manager.informers.forResource(resource, options),
    catalogs: new CatalogCache(),
  };
}

/** OLM's API group. */
export const OLM_GROUP = 'operators.coreos.com';
