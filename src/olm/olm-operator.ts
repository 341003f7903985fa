// OLM's operator, as the `olm-operator` process runs it: OperatorGroups (operator-group-controller.ts)
// and ClusterServiceVersions (csv-controller.ts), copied into their target namespaces
// (copied-csv-controller.ts). It reads no catalog: the catalogs' code (File-Based Catalog parsing,
// YAML, semver) is not loaded in its process.
import type { Controller, Manager } from '../kube/index.js';
import { CLUSTER_OPERATORS, olmClusterOperatorController } from './cluster-operator.js';
import { olmContext, type OlmSettings } from './context.js';
import { copiedCsvController } from './copied-csv-controller.js';
import { csvController } from './csv-controller.js';
import { operatorGroupController } from './operator-group-controller.js';

export function addOlmOperator(manager: Manager, settings: OlmSettings = {}): Controller[] {
  const ctx = olmContext(manager, settings.clock);
  const controllers = [operatorGroupController(ctx), csvController(ctx), copiedCsvController(ctx)];
  if (settings.releaseVersion !== undefined) controllers.push(olmClusterOperatorController(ctx, { name: CLUSTER_OPERATORS.olm, version: settings.releaseVersion, crds: ['clusterserviceversions', 'operatorgroups'], controllers: [...controllers] }));
  manager.add(...controllers);
  return controllers;
}
