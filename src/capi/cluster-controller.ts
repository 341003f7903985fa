// The Cluster controller, after Cluster API's (internal/controllers/cluster):
//   - the infrastructure cluster (spec.infrastructureRef) and the control plane
//     (spec.controlPlaneRef, e.g. a KubeadmControlPlane) are made the Cluster's: owned by it and
//     labelled cluster.x-k8s.io/cluster-name;
//   - spec.controlPlaneEndpoint is copied from the infrastructure cluster, else from the control
//     plane, once one of them has it;
//   - phase Pending → Provisioning (a ref is set) → Provisioned (infrastructure provisioned and the
//     endpoint set); Deleting;
//   - status.initialization: infrastructureProvisioned, and controlPlaneInitialized — from the
//     control plane's status.initialization.controlPlaneInitialized, or without a control plane
//     object, once a control-plane Machine has a Node — which never goes back to false;
//   - status.controlPlane from the control plane's replica counts (or its Machines' without one),
//     status.workers from the worker Machines, desired being the MachineDeployments' and
//     MachineSets' replicas;
//   - conditions InfrastructureReady, ControlPlaneInitialized, ControlPlaneAvailable,
//     WorkersAvailable, RemoteConnectionProbe (the workload API answering through the
//     `<cluster>-kubeconfig` Secret — for the cluster bosun runs in, which has neither that Secret
//     nor a controlPlaneRef, its own API: remote.ts; False only after 50 s of failures, as Cluster
//     API's grace period) and Available, their conjunction; each False one says what it waits on;
//   - deletion in Cluster API's order, behind the finalizer cluster.cluster.x-k8s.io: the
//     MachineDeployments, MachineSets and worker Machines, then the control plane (and its
//     Machines), then the infrastructure cluster; the Deleting condition names what is still there.
import type * as api from '../api/index.js';
import { Controller, controllerOf, isNotFound, type ResourceRef } from '../kube/index.js';
import { API_VERSION, CLUSTERS, CONDITION, type CapiCondition, type InfraCluster, LABEL, MACHINES, MACHINE_DEPLOYMENTS, MACHINE_SETS, type NewCapiCondition, conditionIs, desiredReplicas, isControlPlane, isDeleting, setCapiCondition } from './api.js';
import { type CapiContext, type ContractRef, informers } from './context.js';
import { sameStatus } from './machine-status.js';
import { RemoteUnavailable, remoteClusters } from './remote.js';

type Cluster = api.Cluster;
type ClusterStatus = NonNullable<Cluster['status']>;
type Counts = NonNullable<ClusterStatus['workers']>;

export const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';
/** How long the workload API may fail to answer before RemoteConnectionProbe turns False. */
export const REMOTE_CONNECTION_GRACE_MS = 50_000;
const POLL_MS = 5_000;

export const CLUSTER_CONDITION = {
  controlPlaneInitialized: 'ControlPlaneInitialized',
  controlPlaneAvailable: 'ControlPlaneAvailable',
  workersAvailable: 'WorkersAvailable',
  remoteConnectionProbe: 'RemoteConnectionProbe',
} as const;

/** What Cluster API's control-plane contract promises of a control plane object, whatever its kind. */
export type ControlPlaneContract = api.KubeObject & {
  spec?: { replicas?: number; version?: string; controlPlaneEndpoint?: { host?: string; port?: number } };
  status?: {
    initialization?: { controlPlaneInitialized?: boolean };
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    upToDateReplicas?: number;
    version?: string;
    conditions?: CapiCondition[];
  };
};

/** Counts of a group of Machines, as the Cluster reports them. */
function machineCounts(machines: api.Machine[], desired: number): Counts {
  const has = (type: string) => machines.filter((m) => conditionIs(m, type, 'True')).length;
  return {
    desiredReplicas: desired,
    replicas: machines.length,
    readyReplicas: has(CONDITION.ready),
    availableReplicas: has(CONDITION.available),
    upToDateReplicas: machines.filter((m) => !conditionIs(m, CONDITION.upToDate, 'False')).length,
  };
}

/** The control plane object's counts, as its contract names them. */
function controlPlaneCounts(cp: ControlPlaneContract): Counts {
  return {
    desiredReplicas: cp.spec?.replicas ?? 1,
    replicas: cp.status?.replicas ?? 0,
    readyReplicas: cp.status?.readyReplicas ?? 0,
    availableReplicas: cp.status?.availableReplicas ?? 0,
    upToDateReplicas: cp.status?.upToDateReplicas ?? 0,
  };
}

const refText = (ref: { kind: string; name: string }) => `${ref.kind} ${ref.name}`;

export function clusterController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const clusters = inf.clusters();
  const machines = inf.machines();
  const machineSets = inf.machineSets();
  const machineDeployments = inf.machineDeployments();
  const remote = remoteClusters(ctx);
  /** When the workload API last answered, and since when it has not, per Cluster. */
  const probes = new Map<string, { lastSuccess?: number; failingSince?: number; message?: string }>();

  /** Reads a referenced object, making it the Cluster's (owner reference and cluster-name label). */
  async function adopt<T extends api.KubeObject>(cluster: Cluster, ref: ContractRef): Promise<{ resource: ResourceRef<T>; object?: T }> {
    const resource = await ctx.resolve<T>(ref);
    const ns = cluster.metadata.namespace;
    let object = await ctx.client.read(resource, ref.name, ns);
    if (object && !isDeleting(object) && !(object.metadata.ownerReferences ?? []).some((o) => o.uid === cluster.metadata.uid)) {
      const owner = { apiVersion: cluster.apiVersion ?? API_VERSION, kind: 'Cluster', name: cluster.metadata.name, uid: cluster.metadata.uid! };
      object = await ctx.client.update(resource, {
        ...object,
        metadata: { ...object.metadata, ownerReferences: [...(object.metadata.ownerReferences ?? []), owner], labels: { ...(object.metadata.labels ?? {}), [LABEL.clusterName]: cluster.metadata.name } },
      } as T);
    }
    return { resource, object };
  }

  /** The RemoteConnectionProbe condition: the workload API through the kubeconfig Secret. */
  async function probe(cluster: Cluster, key: string, initialized: boolean): Promise<NewCapiCondition> {
    const type = CLUSTER_CONDITION.remoteConnectionProbe;
    if (!initialized) return { type, status: 'False', reason: 'ProbeFailed', message: 'the control plane is not initialized yet: no workload API to connect to' };
    const now = ctx.clock.now();
    const state = probes.get(key) ?? {};
    probes.set(key, state);
    try {
      // The cluster bosun runs in is its own workload cluster: its API is the one these controllers use (remote.ts).
      const client = (await remote.isLocal(cluster)) ? ctx.client : await remote.client(cluster);
      await client.request('GET', '/api', { signal: AbortSignal.timeout(5_000) });
      state.lastSuccess = now;
      state.failingSince = undefined;
      return { type, status: 'True', reason: 'ProbeSucceeded', message: '' };
    } catch (e) {
      state.failingSince ??= now;
      state.message = e instanceof RemoteUnavailable ? e.message : `the workload API does not answer: ${(e as Error).message}`;
      if (now - state.failingSince < REMOTE_CONNECTION_GRACE_MS && state.lastSuccess !== undefined) return { type, status: 'True', reason: 'ProbeSucceeded', message: '' };
      if (now - state.failingSince < REMOTE_CONNECTION_GRACE_MS) return { type, status: 'Unknown', reason: 'ProbeFailed', message: state.message };
      return { type, status: 'False', reason: 'ProbeFailed', message: `${state.message} (for ${Math.round((now - state.failingSince) / 1000)} s)` };
    }
  }

  /** Deletes the cluster's descendants in Cluster API's order; undefined once nothing is left, else what it waits on. */
  async function deleteDescendants(cluster: Cluster, cp?: { resource: ResourceRef<ControlPlaneContract>; object?: ControlPlaneContract }, infra?: { resource: ResourceRef<InfraCluster>; object?: InfraCluster }): Promise<string | undefined> {
    const ns = cluster.metadata.namespace;
    const name = cluster.metadata.name;
    const mine = <T extends { metadata: { namespace?: string }; spec?: { clusterName?: string } }>(o: T) => o.metadata.namespace === ns && o.spec?.clusterName === name;
    const deleteAll = async (resource: ResourceRef<api.KubeObject>, objects: api.KubeObject[]) => {
      for (const o of objects) {
        if (isDeleting(o)) continue;
        await ctx.client.delete(resource, o.metadata.name, ns).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
      }
    };
    // 1. Workers: MachineDeployments, MachineSets, and Machines that are not the control plane's.
    const deployments = machineDeployments.list().filter(mine);
    const sets = machineSets.list().filter(mine);
    const controlPlaneOwned = (m: api.Machine) => Boolean(cp?.object && controllerOf(m)?.uid === cp.object.metadata.uid);
    // Every Machine its control plane does not own (a control plane without an object of its own
    // is a set of Machines, deleted as descendants too).
    const workers = machines.list().filter((m) => mine(m) && !controlPlaneOwned(m));
    await deleteAll(MACHINE_DEPLOYMENTS, deployments);
    await deleteAll(MACHINE_SETS, sets);
    await deleteAll(MACHINES, workers);
    const left = [...deployments.map((d) => `MachineDeployment ${d.metadata.name}`), ...sets.map((s) => `MachineSet ${s.metadata.name}`), ...workers.map((m) => `Machine ${m.metadata.name}`)];
    if (left.length) return `waiting for ${left.slice(0, 5).join(', ')}${left.length > 5 ? ` and ${left.length - 5} more` : ''} to be deleted`;
    // 2. The control plane; its provider (or the garbage collector) deletes its Machines.
    const cpMachinesLeft = machines.list().filter((m) => mine(m) && controllerOf(m) !== undefined && isControlPlane(m));
    if (!cp?.object && cpMachinesLeft.length) return `waiting for ${cpMachinesLeft.length} control-plane Machine${cpMachinesLeft.length === 1 ? '' : 's'} of the deleted ${cluster.spec?.controlPlaneRef?.kind ?? 'control plane'} to be deleted`;
    if (cp?.object) {
      if (!isDeleting(cp.object)) await ctx.client.delete(cp.resource, cp.object.metadata.name, ns).catch((e) => { if (!isNotFound(e)) throw e; });
      const cpMachines = machines.list().filter((m) => mine(m) && isControlPlane(m)).length;
      return `waiting for ${cp.object.kind ?? cluster.spec?.controlPlaneRef?.kind} ${cp.object.metadata.name} to be deleted${cpMachines ? ` (${cpMachines} control-plane Machine${cpMachines === 1 ? '' : 's'} left)` : ''}`;
    }
    // 3. The infrastructure cluster (its provider removes what it made in the cloud).
    if (infra?.object) {
      if (!isDeleting(infra.object)) await ctx.client.delete(infra.resource, infra.object.metadata.name, ns).catch((e) => { if (!isNotFound(e)) throw e; });
      return `waiting for ${infra.object.kind ?? cluster.spec?.infrastructureRef?.kind} ${infra.object.metadata.name} to be deleted`;
    }
    return undefined;
  }

  const controller = new Controller({
    name: 'cluster-controller',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async (key) => {
      const cluster = clusters.getByKey(key);
      if (!cluster) {
        probes.delete(key);
        return;
      }
      const ns = cluster.metadata.namespace;
      const name = cluster.metadata.name;
      const now = new Date(ctx.clock.now());
      const finalizers = cluster.metadata.finalizers ?? [];
      if (!isDeleting(cluster) && !finalizers.includes(CLUSTER_FINALIZER)) {
        await ctx.client.update(CLUSTERS, { ...cluster, metadata: { ...cluster.metadata, finalizers: [...finalizers, CLUSTER_FINALIZER] } });
        return;
      }
      if (cluster.spec?.paused && !isDeleting(cluster)) return;

      const infraRef = cluster.spec?.infrastructureRef;
      const cpRef = cluster.spec?.controlPlaneRef;
      let infra: { resource: ResourceRef<InfraCluster>; object?: InfraCluster } | undefined;
      let cp: { resource: ResourceRef<ControlPlaneContract>; object?: ControlPlaneContract } | undefined;
      let refError: string | undefined;
      try {
        if (infraRef?.name) infra = await adopt<InfraCluster>(cluster, infraRef);
        if (cpRef?.name) cp = await adopt<ControlPlaneContract>(cluster, cpRef);
      } catch (e) {
        refError = (e as Error).message;
      }

      if (isDeleting(cluster)) {
        if (!finalizers.includes(CLUSTER_FINALIZER)) return;
        const waiting = refError ?? (await deleteDescendants(cluster, cp, infra));
        if (waiting) {
          const status: ClusterStatus = {
            ...(cluster.status ?? {}), phase: 'Deleting',
            conditions: setCapiCondition(cluster.status?.conditions, { type: CONDITION.deleting, status: 'True', reason: 'WaitingForDescendants', message: waiting }, now),
          };
          if (!sameStatus(status, cluster.status)) await ctx.client.update(CLUSTERS, { ...cluster, status }, 'status');
          return { requeueAfterMs: POLL_MS };
        }
        remote.forget(cluster);
        probes.delete(key);
        await ctx.client.update(CLUSTERS, { ...cluster, metadata: { ...cluster.metadata, finalizers: finalizers.filter((f) => f !== CLUSTER_FINALIZER) } });
        return;
      }

      // The endpoint: the infrastructure cluster's, else the control plane's.
      if (!cluster.spec?.controlPlaneEndpoint?.host) {
        const endpoint = infra?.object?.spec?.controlPlaneEndpoint?.host ? infra.object.spec.controlPlaneEndpoint : cp?.object?.spec?.controlPlaneEndpoint;
        if (endpoint?.host) {
          await ctx.client.update(CLUSTERS, { ...cluster, spec: { ...cluster.spec, controlPlaneEndpoint: { host: endpoint.host, port: endpoint.port ?? 6443 } } });
          return;
        }
      }

      const provisioned = infra?.object?.status?.initialization?.provisioned === true;
      const own = machines.list().filter((m) => m.metadata.namespace === ns && m.spec?.clusterName === name);
      const controlPlaneMachines = own.filter(isControlPlane);
      const workers = own.filter((m) => !isControlPlane(m));
      const workerSets = [...machineDeployments.list(), ...machineSets.list().filter((s) => controllerOf(s)?.kind !== 'MachineDeployment')].filter((o) => o.metadata.namespace === ns && o.spec?.clusterName === name);
      const wasInitialized = cluster.status?.initialization?.controlPlaneInitialized === true;
      const initialized = wasInitialized || (cpRef?.name
        ? cp?.object?.status?.initialization?.controlPlaneInitialized === true
        : controlPlaneMachines.some((m) => Boolean(m.status?.nodeRef?.name)));
      const endpointSet = Boolean(cluster.spec?.controlPlaneEndpoint?.host);

      const conditions: NewCapiCondition[] = [];
      conditions.push(provisioned
        ? { type: CONDITION.infrastructureReady, status: 'True', reason: 'Ready', message: '' }
        : {
          type: CONDITION.infrastructureReady, status: 'False', reason: infra?.object ? 'NotReady' : 'DoesNotExist',
          message: refError ?? (infraRef?.name ? `${refText(infraRef)} ${infra?.object ? `is not provisioned yet${firstFalse(infra.object.status?.conditions)}` : 'does not exist'}` : 'spec.infrastructureRef is not set'),
        });
      conditions.push(initialized
        ? { type: CLUSTER_CONDITION.controlPlaneInitialized, status: 'True', reason: 'Initialized', message: '' }
        : {
          type: CLUSTER_CONDITION.controlPlaneInitialized, status: 'False', reason: 'NotInitialized',
          message: cpRef?.name
            ? (cp?.object ? `waiting for ${refText(cpRef)} to initialize the control plane${firstFalse(cp.object.status?.conditions)}` : `${refText(cpRef)} does not exist`)
            : controlPlaneMachines.length ? 'waiting for a control-plane Machine to have a Node' : 'waiting for control-plane Machines (labelled cluster.x-k8s.io/control-plane)',
        });
      const cpAvailable = cpRef?.name ? cp?.object?.status?.conditions?.find((c) => c.type === CONDITION.available) : undefined;
      conditions.push(cpRef?.name
        ? (cpAvailable?.status === 'True'
          ? { type: CLUSTER_CONDITION.controlPlaneAvailable, status: 'True', reason: 'Available', message: '' }
          : { type: CLUSTER_CONDITION.controlPlaneAvailable, status: cpAvailable ? 'False' : 'Unknown', reason: cpAvailable?.reason || 'NotAvailable', message: cpAvailable?.message || `${refText(cpRef)} reports no Available condition yet` })
        : (controlPlaneMachines.some((m) => conditionIs(m, CONDITION.available, 'True'))
          ? { type: CLUSTER_CONDITION.controlPlaneAvailable, status: 'True', reason: 'Available', message: '' }
          : { type: CLUSTER_CONDITION.controlPlaneAvailable, status: 'False', reason: 'NotAvailable', message: 'no control-plane Machine is Available' }));
      const unavailable = machineDeployments.list().filter((d) => d.metadata.namespace === ns && d.spec?.clusterName === name && !conditionIs(d, CONDITION.available, 'True'));
      conditions.push(unavailable.length
        ? { type: CLUSTER_CONDITION.workersAvailable, status: 'False', reason: 'NotAvailable', message: unavailable.map((d) => `MachineDeployment ${d.metadata.name}: ${d.status?.conditions?.find((c) => c.type === CONDITION.available)?.message || 'not available yet'}`).join('; ') }
        : { type: CLUSTER_CONDITION.workersAvailable, status: 'True', reason: 'Available', message: '' });
      conditions.push(await probe(cluster, key, initialized));
      const notTrue = conditions.filter((c) => c.status !== 'True');
      conditions.push(notTrue.length
        ? { type: CONDITION.available, status: 'False', reason: 'NotAvailable', message: notTrue.map((c) => `${c.type}: ${c.message || c.reason}`).join('\n') }
        : { type: CONDITION.available, status: 'True', reason: 'Available', message: '' });

      let merged = cluster.status?.conditions;
      for (const c of conditions) merged = setCapiCondition(merged, c, now);
      const status: ClusterStatus = {
        ...(cluster.status ?? {}),
        initialization: { ...(cluster.status?.initialization ?? {}), infrastructureProvisioned: provisioned, controlPlaneInitialized: initialized },
        controlPlane: cp?.object ? controlPlaneCounts(cp.object) : machineCounts(controlPlaneMachines, controlPlaneMachines.length),
        workers: machineCounts(workers, workerSets.reduce((n, o) => n + desiredReplicas(o), 0)),
        phase: provisioned && endpointSet ? 'Provisioned' : infraRef?.name || cpRef?.name ? 'Provisioning' : 'Pending',
        observedGeneration: cluster.metadata.generation,
        conditions: merged,
      };
      if (infra?.object?.status?.failureDomains) status.failureDomains = infra.object.status.failureDomains;
      if (!sameStatus(status, cluster.status)) await ctx.client.update(CLUSTERS, { ...cluster, status }, 'status');
      // Poll while anything is still coming (providers' objects are read, not watched), and keep probing.
      return { requeueAfterMs: notTrue.length ? POLL_MS : 30_000 };
    },
  });
  controller.watch(clusters);
  const byClusterName = (o: { metadata: { namespace?: string }; spec?: { clusterName?: string } }) => (o.spec?.clusterName ? `${o.metadata.namespace}/${o.spec.clusterName}` : undefined);
  controller.watch(machines, byClusterName);
  controller.watch(machineDeployments, byClusterName);
  controller.watch(machineSets, byClusterName);
  controller.watch(inf.localClusters(), (lc) => (lc.metadata.labels?.[LABEL.clusterName] ? `${lc.metadata.namespace}/${lc.metadata.labels[LABEL.clusterName]}` : undefined));
  return controller;
}

/** ": <the first False condition's message>", to say what an object waits on. */
function firstFalse(conditions: readonly CapiCondition[] | undefined): string {
  const c = (conditions ?? []).find((x) => x.status === 'False' && x.message);
  return c ? `: ${c.type} ${c.message}` : '';
}
