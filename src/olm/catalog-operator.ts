// OLM's catalog operator, as the `catalog-operator` process runs it: CatalogSources
// (catalog-source-controller.ts), Subscriptions (subscription-controller.ts) and InstallPlans
// (install-plan-controller.ts), over the catalogs its sources hold.
import type { Controller, Manager } from '../kube/index.js';
import { catalogContext } from './catalogs.js';
import { catalogSourceController } from './catalog-source-controller.js';
import { CLUSTER_OPERATORS, olmClusterOperatorController } from './cluster-operator.js';
import type { OlmSettings } from './context.js';
import { installPlanController } from './install-plan-controller.js';
import { subscriptionController } from './subscription-controller.js';

export function addCatalogOperator(manager: Manager, settings: OlmSettings = {}): Controller[] {
  const ctx = catalogContext(manager, settings.clock);
  const controllers = [catalogSourceController(ctx), subscriptionController(ctx), installPlanController(ctx)];
  if (settings.releaseVersion !== undefined) controllers.push(olmClusterOperatorController(ctx, { name: CLUSTER_OPERATORS.catalog, version: settings.releaseVersion, crds: ['catalogsources', 'subscriptions', 'installplans'], controllers: [...controllers] }));
  manager.add(...controllers);
  return controllers;
}
