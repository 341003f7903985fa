// OLM's two operators as OLM splits them, each added to a component's manager:
//   - the catalog operator: CatalogSources (catalog-source-controller.ts), Subscriptions
//     (subscription-controller.ts) and InstallPlans (install-plan-controller.ts);
//   - the OLM operator: OperatorGroups (operator-group-controller.ts) and ClusterServiceVersions
//     (csv-controller.ts).
import type { Clock, Controller, Manager } from '../kube/index.js';
import { catalogSourceController } from './catalog-source-controller.js';
import { olmContext } from './context.js';
import { csvController } from './csv-controller.js';
import { installPlanController } from './install-plan-controller.js';
import { operatorGroupController } from './operator-group-controller.js';
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
