// OLM's components as OLM splits them, each added to a component's manager:
//   - the catalog operator: CatalogSources (catalog-source-controller.ts), Subscriptions
//     (subscription-controller.ts) and InstallPlans (install-plan-controller.ts);
//   - the OLM operator: OperatorGroups (operator-group-controller.ts) and ClusterServiceVersions
//     (csv-controller.ts), copied into their target namespaces (copied-csv-controller.ts);
//   - the package server (package-server.ts): PackageManifests behind an APIService.
import type * as api from '../api/index.js';
import { type Logger, logger } from '../common/log.js';
import { type Clock, type Controller, type Informer, type Manager, resources } from '../kube/index.js';
import { catalogSourceController } from './catalog-source-controller.js';
import { CLUSTER_OPERATORS, olmClusterOperatorController } from './cluster-operator.js';
import { olmContext } from './context.js';
import { copiedCsvController } from './copied-csv-controller.js';
import { csvController } from './csv-controller.js';
import { installPlanController } from './install-plan-controller.js';
import { operatorGroupController } from './operator-group-controller.js';
import { PackageServer, type PackageServerOptions } from './package-server.js';
import { subscriptionController } from './subscription-controller.js';

export interface OlmSettings {
  clock?: Clock;
  /** Report on the component's ClusterOperator with this release's version (RELEASE_VERSION);
   *  undefined: no report (a component run by hand, tests of the controllers alone). */
  releaseVersion?: string;
}

export function addCatalogOperator(manager: Manager, settings: OlmSettings = {}): Controller[] {
  const ctx = olmContext(manager, settings.clock);
  const controllers = [catalogSourceController(ctx), subscriptionController(ctx), installPlanController(ctx)];
  if (settings.releaseVersion !== undefined) controllers.push(olmClusterOperatorController(ctx, { name: CLUSTER_OPERATORS.catalog, version: settings.releaseVersion, crds: ['catalogsources', 'subscriptions', 'installplans'], controllers: [...controllers] }));
  manager.add(...controllers);
  return controllers;
}

export function addOlmOperator(manager: Manager, settings: OlmSettings = {}): Controller[] {
  const ctx = olmContext(manager, settings.clock);
  const controllers = [operatorGroupController(ctx), csvController(ctx), copiedCsvController(ctx)];
  if (settings.releaseVersion !== undefined) controllers.push(olmClusterOperatorController(ctx, { name: CLUSTER_OPERATORS.olm, version: settings.releaseVersion, crds: ['clusterserviceversions', 'operatorgroups'], controllers: [...controllers] }));
  manager.add(...controllers);
  return controllers;
}

/** The package server over the manager's CatalogSource and ConfigMap informers. */
export function addPackageServer(manager: Manager, options: Omit<PackageServerOptions, 'log'> & { log?: Logger }, settings: OlmSettings = {}): PackageServer {
  const ctx = olmContext(manager, settings.clock);
  const sources = ctx.informer(resources.catalogSources);
  const configMaps = ctx.informer(resources.configMaps);
  const catalogs = () => sources.list().flatMap((source) => {
    const state = ctx.catalogs.state(source, (cm) => configMaps.get(cm, source.metadata.namespace));
    return state.ready ? [{ source, catalog: state.catalog }] : [];
  });
  const server = new PackageServer(ctx.client, catalogs, [sources, configMaps] as Informer<api.KubeObject>[], { ...options, log: options.log ?? logger('package-server') });
  manager.add(server);
  if (settings.releaseVersion !== undefined) manager.add(olmClusterOperatorController(ctx, { name: CLUSTER_OPERATORS.packageServer, version: settings.releaseVersion, crds: ['catalogsources'], ready: () => (server.port ? undefined : 'the package server is not listening yet') }));
  return server;
}
