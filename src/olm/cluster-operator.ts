// How the CVO sees OLM: each of its components reports on its own ClusterOperator, as OpenShift's
// do —
//   operator-lifecycle-manager                 the OLM operator (CSVs, OperatorGroups)
//   operator-lifecycle-manager-catalog         the catalog operator (CatalogSources, Subscriptions,
//                                              InstallPlans)
//   operator-lifecycle-manager-packageserver   the package server (PackageManifests)
// Available once the CRDs the component serves are Established (the package server: once it
// listens); the release's version (RELEASE_VERSION) is reported once available, which is what the
// CVO waits for. Degraded when one of the component's controllers keeps failing
// (degraded-on-error after 5 failures of a key). Progressing=False, Upgradeable=True: the
// components hold no state an upgrade could break; installed add-ons keep running through it.
import { ClusterOperatorStatus, Controller, isCrdEstablished, resources } from '../kube/index.js';
import type { OlmContext } from './context.js';
import { OLM_GROUP } from './context.js';

export const OLM_NAMESPACE = 'openshift-operator-lifecycle-manager';

export const CLUSTER_OPERATORS = {
  olm: 'operator-lifecycle-manager',
  catalog: 'operator-lifecycle-manager-catalog',
  packageServer: 'operator-lifecycle-manager-packageserver',
} as const;

export interface OlmClusterOperatorOptions {
  name: string;
  /** The release (RELEASE_VERSION); without it the versions are not reported. */
  version?: string;
  /** The plural names of the operators.coreos.com CRDs the component serves. */
  crds: string[];
  /** More to be available (the package server listening); a message when not. */
  ready?: () => string | undefined;
  /** The controllers whose failures make it Degraded. */
  controllers?: Controller[];
}

export function olmClusterOperatorController(ctx: OlmContext, o: OlmClusterOperatorOptions): Controller {
  const operators = ctx.informer(resources.clusterOperators, { fieldSelector: `metadata.name=${o.name}` });
  const crds = ctx.informer(resources.customResourceDefinitions);
  const crdNames = o.crds.map((plural) => `${plural}.${OLM_GROUP}`);
  const status = new ClusterOperatorStatus({
    client: ctx.client,
    name: o.name,
    clock: ctx.clock,
    informer: operators,
    relatedObjects: [
      { group: '', resource: 'namespaces', name: OLM_NAMESPACE },
      ...o.crds.map((plural) => ({ group: OLM_GROUP, resource: plural, name: '' })),
    ],
  });
  for (const c of o.controllers ?? []) c.reportTo(status.degradedOnError(c.name, { after: 5 }));
  const controller = new Controller({
    name: 'cluster-operator-status',
    clock: ctx.clock,
    keys: [o.name],
    resyncPeriodMs: 30_000,
    sync: async () => {
      const missing = crdNames.filter((name) => !isCrdEstablished(crds.get(name)));
      const notReady = missing.length > 0 ? `CRDs not established: ${missing.join(', ')}` : o.ready?.();
      const available = !notReady;
      const failure = status.failure();
      const conditions = status.conditions([
        available
          ? { type: 'Available', status: 'True', reason: 'AsExpected', message: `${o.name} is available${o.version ? ` at ${o.version}` : ''}` }
          : { type: 'Available', status: 'False', reason: missing.length > 0 ? 'CustomResourceDefinitionsMissing' : 'NotServing', message: notReady },
        { type: 'Progressing', status: 'False', reason: 'AsExpected', message: '' },
        failure ? { type: 'Degraded', status: 'True', reason: failure.reason, message: failure.message } : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
        { type: 'Upgradeable', status: 'True', reason: 'AsExpected', message: '' },
      ]);
      await status.write({ conditions, versions: status.versions(available, o.version) }, { from: 'cluster-operator-status' });
      return available ? undefined : { requeueAfterMs: 2_000 };
    },
  });
  status.onFailureChange(() => controller.enqueue(o.name));
  controller.watch(operators, () => o.name);
  controller.watch(crds, (crd) => (crdNames.includes(crd.metadata?.name) ? o.name : undefined));
  return controller;
}
