// ClusterOperator/cluster-api: how the CVO sees Cluster API. Available once every Cluster API and
// local provider CRD is served and this replica leads (it is a leader runnable, so a report comes
// only from the controllers that act); the release's version (RELEASE_VERSION, as OpenShift's
// operators read it) is reported once available, which is what the CVO waits for at run level 30.
// Not Available while a CRD is missing, saying which. Progressing=False and Upgradeable=True: the
// controllers hold no state an upgrade could break. Degraded=False unless one of the controllers
// keeps failing (degraded-on-error, controllers.ts). Written by the operator-status library
// (kube/operator-status.ts), as every operator's ClusterOperator is.
// On a platform with no infrastructure provider (a cluster without a cloud: platform None) only
// this report runs, Available with that said, as OpenShift's cluster-capi-operator reports on a
// platform it does not support; a process reporting on the payload Deployment's behalf (the
// install without machines, where no pod ever runs it) follows that Deployment's RELEASE_VERSION,
// so an update moves the report too.
import { ClusterOperatorStatus, Controller, isCrdEstablished, releaseVersion, resources } from '../kube/index.js';
import { CLUSTER_API_NAMESPACE, GROUP, INFRA_GROUP } from './api.js';
import type { CapiContext } from './context.js';
import { CLUSTER_API_CRDS } from './crds.js';

export const CLUSTER_OPERATOR = 'cluster-api';
/** The payload's Deployment of the controllers. */
export const CONTROLLERS_DEPLOYMENT = 'cluster-api-controllers';
const CRD_NAMES = CLUSTER_API_CRDS.map(({ crd }) => crd.metadata.name);

export interface ClusterOperatorOptions {
  /** The release these controllers belong to (RELEASE_VERSION). */
  version?: string;
  /** Report the RELEASE_VERSION of Deployment openshift-cluster-api/cluster-api-controllers once
   *  the CVO has applied it (for a process reporting on that Deployment's behalf). */
  followDeployment?: boolean;
  /** No infrastructure provider runs: Cluster API manages no machines on this platform. */
  noProvider?: boolean;
}

/** The ClusterOperator the controllers report on; each controller's failures go on it as Degraded
 *  (degraded-on-error, after 5 consecutive failures of a key) once the report is added. */
export function clusterApiStatus(ctx: CapiContext): ClusterOperatorStatus {
  return new ClusterOperatorStatus({
    client: ctx.client,
    name: CLUSTER_OPERATOR,
    clock: ctx.clock,
    informer: ctx.informer(resources.clusterOperators, { fieldSelector: `metadata.name=${CLUSTER_OPERATOR}` }),
    relatedObjects: [
      { group: '', resource: 'namespaces', name: CLUSTER_API_NAMESPACE },
      ...CLUSTER_API_CRDS.map(({ crd }) => ({ group: crd.spec.group === GROUP ? GROUP : INFRA_GROUP, resource: crd.spec.names.plural as string, name: '' })),
    ],
  });
}

export function clusterOperatorController(ctx: CapiContext, o: ClusterOperatorOptions = {}, status: ClusterOperatorStatus = clusterApiStatus(ctx)): Controller {
  const operators = ctx.informer(resources.clusterOperators, { fieldSelector: `metadata.name=${CLUSTER_OPERATOR}` });
  const crds = ctx.informer(resources.customResourceDefinitions);
  const deployments = o.followDeployment ? ctx.informer(resources.deployments, { namespace: CLUSTER_API_NAMESPACE, fieldSelector: `metadata.name=${CONTROLLERS_DEPLOYMENT}` }) : undefined;
  const version = releaseVersion({ version: o.version, deployment: deployments && { informer: deployments, namespace: CLUSTER_API_NAMESPACE, name: CONTROLLERS_DEPLOYMENT } });

  const controller = new Controller({
    name: 'cluster-operator-status',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async () => {
      const missing = CRD_NAMES.filter((name) => !isCrdEstablished(crds.get(name)));
      const available = missing.length === 0;
      const v = version();
      const conditions = status.conditions([
        available
          ? o.noProvider
            ? { type: 'Available', status: 'True', reason: 'UnsupportedPlatform', message: 'Cluster API manages no machines here: no infrastructure provider for this platform' }
            : { type: 'Available', status: 'True', reason: 'AsExpected', message: `Cluster API is available${v ? ` at ${v}` : ''}` }
          : { type: 'Available', status: 'False', reason: 'CustomResourceDefinitionsMissing', message: `CRDs not established: ${missing.join(', ')}` },
        { type: 'Progressing', status: 'False', reason: 'AsExpected', message: '' },
        { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
        { type: 'Upgradeable', status: 'True', reason: 'AsExpected', message: '' },
      ]);
      await status.write({ conditions, versions: status.versions(available, v) }, { from: 'cluster-operator-status' });
    },
  });
  // A controller starting or stopping to fail is reported at once.
  status.onFailureChange(() => controller.enqueue(CLUSTER_OPERATOR));
  controller.watch(operators, () => CLUSTER_OPERATOR);
  controller.watch(crds, (crd) => (CRD_NAMES.includes(crd.metadata?.name) ? CLUSTER_OPERATOR : undefined));
  if (deployments) controller.watch(deployments, () => CLUSTER_OPERATOR);
  return controller;
}
