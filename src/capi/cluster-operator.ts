// ClusterOperator/cluster-api: how the CVO sees Cluster API. Available once every Cluster API and
// local provider CRD is served and this replica leads (it is a leader runnable, so a report comes
// only from the controllers that act); the release's version (RELEASE_VERSION, as OpenShift's
// operators read it) is reported once available, which is what the CVO waits for at run level 30.
// Not Available while a CRD is missing, saying which. Progressing=False and Upgradeable=True: the
// controllers hold no state an upgrade could break.
// On a platform with no infrastructure provider (a cluster without a cloud: platform None) only
// this report runs, Available with that said, as OpenShift's cluster-capi-operator reports on a
// platform it does not support; a process reporting on the payload Deployment's behalf (the
// install without machines, where no pod ever runs it) follows that Deployment's RELEASE_VERSION,
// so an update moves the report too.
import type * as api from '../api/index.js';
import { Controller, type Condition, isConflict, resources, sameConditions, setCondition } from '../kube/index.js';
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

export function clusterOperatorController(ctx: CapiContext, o: ClusterOperatorOptions = {}): Controller {
  const operators = ctx.informer(resources.clusterOperators, { fieldSelector: `metadata.name=${CLUSTER_OPERATOR}` });
  const crds = ctx.informer(resources.customResourceDefinitions);
  const deployments = o.followDeployment ? ctx.informer(resources.deployments, { namespace: CLUSTER_API_NAMESPACE, fieldSelector: `metadata.name=${CONTROLLERS_DEPLOYMENT}` }) : undefined;
  const releaseVersion = (): string | undefined => {
    const env = deployments?.get(CONTROLLERS_DEPLOYMENT, CLUSTER_API_NAMESPACE)?.spec?.template?.spec?.containers?.[0]?.env ?? [];
    return env.find((e) => e.name === 'RELEASE_VERSION')?.value ?? o.version;
  };

  async function write(conditions: Condition[], versions: api.OperandVersion[] | undefined): Promise<void> {
    let current = operators.get(CLUSTER_OPERATOR) ?? (await ctx.client.read(resources.clusterOperators, CLUSTER_OPERATOR));
    if (!current) {
      current = await ctx.client.create(resources.clusterOperators, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: CLUSTER_OPERATOR }, spec: {} }).catch((e) => {
        if (!isConflict(e)) throw e;
        return ctx.client.get(resources.clusterOperators, CLUSTER_OPERATOR);
      });
    }
    const status = {
      conditions,
      ...(versions ? { versions } : {}),
      relatedObjects: [
        { group: '', resource: 'namespaces', name: CLUSTER_API_NAMESPACE },
        ...CLUSTER_API_CRDS.map(({ crd }) => ({ group: crd.spec.group === GROUP ? GROUP : INFRA_GROUP, resource: crd.spec.names.plural, name: '' })),
      ],
    };
    const rest = (s: object | undefined) => JSON.stringify({ ...s, conditions: undefined });
    if (sameConditions(current!.status?.conditions, conditions) && rest(current!.status) === rest(status)) return;
    await ctx.client.mergePatch(resources.clusterOperators, CLUSTER_OPERATOR, undefined, { metadata: { resourceVersion: current!.metadata.resourceVersion }, status }, 'status');
  }

  const controller = new Controller({
    name: 'cluster-operator-status',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async () => {
      const now = new Date(ctx.clock.now());
      const established = (name: string) => (crds.get(name)?.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
      const missing = CRD_NAMES.filter((name) => !established(name));
      const current = operators.get(CLUSTER_OPERATOR);
      let conditions: Condition[] = current?.status?.conditions ?? [];
      const available = missing.length === 0;
      const version = releaseVersion();
      conditions = setCondition(conditions, available
        ? o.noProvider
          ? { type: 'Available', status: 'True', reason: 'UnsupportedPlatform', message: 'Cluster API manages no machines here: no infrastructure provider for this platform' }
          : { type: 'Available', status: 'True', reason: 'AsExpected', message: `Cluster API is available${version ? ` at ${version}` : ''}` }
        : { type: 'Available', status: 'False', reason: 'CustomResourceDefinitionsMissing', message: `CRDs not established: ${missing.join(', ')}` }, now);
      conditions = setCondition(conditions, { type: 'Progressing', status: 'False', reason: 'AsExpected', message: '' }, now);
      conditions = setCondition(conditions, { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' }, now);
      conditions = setCondition(conditions, { type: 'Upgradeable', status: 'True', reason: 'AsExpected', message: '' }, now);
      const versions = available && version ? [{ name: 'operator', version }] : current?.status?.versions;
      await write(conditions, versions);
    },
  });
  controller.watch(operators, () => CLUSTER_OPERATOR);
  controller.watch(crds, (crd) => (CRD_NAMES.includes(crd.metadata?.name) ? CLUSTER_OPERATOR : undefined));
  if (deployments) controller.watch(deployments, () => CLUSTER_OPERATOR);
  return controller;
}
