// OLM's components as OLM splits them, each added to a component's manager:
//   - the catalog operator: CatalogSources (catalog-source-controller.ts), Subscriptions
//     (subscription-controller.ts) and InstallPlans (install-plan-controller.ts);
//   - the OLM operator: OperatorGroups (operator-group-controller.ts) and ClusterServiceVersions
//     (csv-controller.ts);
//   - the package server (package-server.ts): PackageManifests behind an APIService.
import type * as api from '../api/index.js';
import { type Logger, logger } from '../common/log.js';
import { type Clock, type Controller, type Informer, type Manager, resources } from '../kube/index.js';
import { catalogSourceController } from './catalog-source-controller.js';
import { olmContext } from './context.js';
import { csvController } from './csv-controller.js';
import { installPlanController } from './install-plan-controller.js';
import { operatorGroupController } from './operator-group-controller.js';
import { PackageServer, type PackageServerOptions } from './package-server.js';
import { subscriptionController } from './subscription-controller.js';

export interface OlmSettings {
  clock?: Clock;
}

export function addCatalogOperator(manager: Manager, settings: OlmSettings = {}): Controller[] {
  const ctx = olmContext(manager, settings.clock);
  const controllers = [catalogSourceController(ctx), subscriptionController(ctx), installPlanController(ctx)];
  manager.add(...controllers);
  return controllers;
}

export function addOlmOperator(manager: Manager, settings: OlmSettings = {}): Controller[] {
  const ctx = olmContext(manager, settings.clock);
  const controllers = [operatorGroupController(ctx), csvController(ctx)];
  manager.add(...controllers);
  return controllers;
}

/** The package server over the manager's CatalogSource and ConfigMap informers. */
export function addPackageServer(manager: Manager, options: Omit<PackageServerOptions, 'log'> & { log?: Logger }): PackageServer {
  const ctx = olmContext(manager);
  const sources = ctx.informer(resources.catalogSources);
  const configMaps = ctx.informer(resources.configMaps);
  const catalogs = () => sources.list().flatMap((source) => {
    const state = ctx.catalogs.state(source, (cm) => configMaps.get(cm, source.metadata.namespace));
    return state.ready ? [{ source, catalog: state.catalog }] : [];
  });
  const server = new PackageServer(ctx.client, catalogs, [sources, configMaps] as Informer<api.KubeObject>[], { ...options, log: options.log ?? logger('package-server') });
  manager.add(server);
  return server;
}
