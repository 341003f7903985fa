// The Cluster controller (the part of Cluster API's cluster controller bosun needs): the
// infrastructure cluster spec.infrastructureRef names is made the Cluster's; once it reports
// status.initialization.provisioned the Cluster is Provisioned, with its failure domains and
// control plane endpoint copied from it; status.controlPlane and status.workers count the
// Cluster's Machines (control plane: the cluster.x-k8s.io/control-plane label), desired being the
// sum of its MachineDeployments' and MachineSets' replicas for workers.
// Phases: Pending → Provisioning (infrastructure named) → Provisioned; Deleting.
import type * as api from '../api/index.js';
import { Controller, controllerOf } from '../kube/index.js';
import { API_VERSION, CLUSTERS, CONDITION, type InfraCluster, LABEL, conditionIs, desiredReplicas, isControlPlane, isDeleting, setCapiCondition } from './api.js';
import { type CapiContext, informers } from './context.js';
import { sameStatus } from './machine-status.js';

type Cluster = api.Cluster;
type ClusterStatus = NonNullable<Cluster['status']>;

/** Counts of a group of Machines, as the Cluster reports them. */
function counts(machines: api.Machine[], desired: number): NonNullable<ClusterStatus['workers']> {
  const has = (type: string) => machines.filter((m) => conditionIs(m, type, 'True')).length;
  return {
    desiredReplicas: desired,
    replicas: machines.length,
    readyReplicas: has(CONDITION.ready),
    availableReplicas: has(CONDITION.available),
    upToDateReplicas: machines.filter((m) => !conditionIs(m, CONDITION.upToDate, 'False')).length,
  };
}

export function clusterController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const clusters = inf.clusters();
  const machines = inf.machines();
  const controller = new Controller({
    name: 'cluster-controller',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async (key) => {
      const cluster = clusters.getByKey(key);
      if (!cluster) return;
      const ns = cluster.metadata.namespace;
      const name = cluster.metadata.name;
      const now = new Date(ctx.clock.now());
      const ref = cluster.spec?.infrastructureRef;
      let infra: InfraCluster | undefined;
      if (ref?.name) {
        const resource = await ctx.resolve<InfraCluster>(ref);
        infra = await ctx.client.read(resource, ref.name, ns);
        if (infra && !(infra.metadata.ownerReferences ?? []).some((o) => o.uid === cluster.metadata.uid)) {
          const owner = { apiVersion: cluster.apiVersion ?? API_VERSION, kind: 'Cluster', name, uid: cluster.metadata.uid! };
          infra = await ctx.client.update(resource, { ...infra, metadata: { ...infra.metadata, ownerReferences: [...(infra.metadata.ownerReferences ?? []), owner], labels: { ...(infra.metadata.labels ?? {}), [LABEL.clusterName]: name } } });
        }
      }
      const provisioned = infra?.status?.initialization?.provisioned === true;
      const endpoint = cluster.spec?.controlPlaneEndpoint?.host ? undefined : infra?.spec?.controlPlaneEndpoint;
      if (endpoint?.host) {
        await ctx.client.update(CLUSTERS, { ...cluster, spec: { ...cluster.spec, controlPlaneEndpoint: endpoint } });
        return;
      }
      const own = machines.list().filter((m) => m.metadata.namespace === ns && m.spec?.clusterName === name);
      const workers = own.filter((m) => !isControlPlane(m));
      const workerSets = [...inf.machineDeployments().list(), ...inf.machineSets().list().filter((s) => controllerOf(s)?.kind !== 'MachineDeployment')].filter((o) => o.metadata.namespace === ns && o.spec?.clusterName === name);
      const status: ClusterStatus = {
        ...(cluster.status ?? {}),
        initialization: { ...(cluster.status?.initialization ?? {}), infrastructureProvisioned: provisioned },
        controlPlane: counts(own.filter(isControlPlane), own.filter(isControlPlane).length),
        workers: counts(workers, workerSets.reduce((n, o) => n + desiredReplicas(o), 0)),
        phase: isDeleting(cluster) ? 'Deleting' : provisioned ? 'Provisioned' : ref?.name ? 'Provisioning' : 'Pending',
        observedGeneration: cluster.metadata.generation,
        conditions: setCapiCondition(cluster.status?.conditions, provisioned
          ? { type: CONDITION.infrastructureReady, status: 'True', reason: 'Ready', message: '' }
          : { type: CONDITION.infrastructureReady, status: 'False', reason: infra ? 'NotReady' : 'DoesNotExist', message: ref?.name ? `${ref.kind} ${ref.name} ${infra ? 'is not provisioned yet' : 'does not exist'}` : 'spec.infrastructureRef is not set' }, now),
      };
      if (infra?.status?.failureDomains) status.failureDomains = infra.status.failureDomains;
      if (!sameStatus(status, cluster.status)) await ctx.client.update(CLUSTERS, { ...cluster, status }, 'status');
      if (!provisioned) return { requeueAfterMs: 5_000 };
    },
  });
  controller.watch(clusters);
  controller.watch(machines, (m) => (m.spec?.clusterName ? `${m.metadata.namespace}/${m.spec.clusterName}` : undefined));
  controller.watch(inf.localClusters(), (lc) => (lc.metadata.labels?.[LABEL.clusterName] ? `${lc.metadata.namespace}/${lc.metadata.labels[LABEL.clusterName]}` : undefined));
  return controller;
}
