// OLM's components as OLM splits them, each added to a component's manager, and each in a module
// of its own so that each process loads only its own controllers:
//   - the catalog operator (catalog-operator.ts): CatalogSources, Subscriptions and InstallPlans;
//   - the OLM operator (olm-operator.ts): OperatorGroups and ClusterServiceVersions, copied into
//     their target namespaces;
//   - the package server (package-server.ts): PackageManifests behind an APIService.
export { addCatalogOperator } from './catalog-operator.js';
export { addOlmOperator } from './olm-operator.js';
export { addPackageServer } from './package-server.js';
export type { OlmSettings } from './context.js';
