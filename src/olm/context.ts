// What the OLM controllers of one process share: the API client, the manager's shared informers and
// the clock every time rule runs on. The catalogs read from their sources are the catalog
// context's (catalogs.ts), which only the components that read catalogs load.
import type * as api from '../api/index.js';
import { type Clock, type Informer, type InformerOptions, type KubeClient, type Manager, type ResourceRef, realClock } from '../kube/index.js';

export interface OlmContext {
  client: KubeClient;
  informer<T extends api.KubeObject>(resource: ResourceRef<T>, options?: InformerOptions): Informer<T>;
  clock: Clock;
}

/** What each OLM component is started with. */
export interface OlmSettings {
  clock?: Clock;
  /** Report on the component's ClusterOperator with this release's version (RELEASE_VERSION);
   *  undefined: no report (a component run by hand, tests of the controllers alone). */
  releaseVersion?: string;
}

export function olmContext(manager: Manager, clock: Clock = realClock): OlmContext {
  return {
    client: manager.client,
    clock,
    informer: (resource, options) => manager.informers.forResource(resource, options),
  };
}

/** OLM's API group. */
export const OLM_GROUP = 'operators.coreos.com';
