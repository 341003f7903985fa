// The local infrastructure provider's LocalCluster controller, following Cluster API's
// InfraCluster contract. Its failure domains are the cloud's zones (each may hold control-plane
// machines). Its control-plane endpoint is either the user's (spec.controlPlaneEndpoint given, as
// bosun's own cluster gives its API server's address) or, when the spec leaves it empty, a load
// balancer of the local cloud, as CAPD runs an haproxy `<cluster>-lb` and CAPA an ELB:
//   - the balancer `<namespace>-<name>-apiserver` listens on its own VIP, port 6443, and forwards to
//     port 6443 of the cluster's control-plane machines — the instances of the LocalMachines behind
//     the cluster's Machines labelled cluster.x-k8s.io/control-plane, except those being deleted, so
//     that traffic leaves a machine before it goes; its targets follow the machines as they come
//     and go (a terminated instance is left out), and it health-checks them (HTTPS GET /readyz),
//     so new connections go only to API servers that are ready;
//   - spec.controlPlaneEndpoint is set to the balancer's address and port, and only then is the
//     LocalCluster provisioned (status.initialization.provisioned), so the Cluster copies a
//     reachable endpoint;
//   - deleting the LocalCluster deletes the balancer first (its finalizer), so the cloud keeps
//     nothing of the cluster.
// A LocalCluster that is not provisioned says why in its Ready condition.
import type { CloudClient } from '../../cloud/client.js';
import { CloudError } from '../../cloud/errors.js';
import type * as api from '../../api/index.js';
import { Controller } from '../../kube/index.js';
import { LABEL, LOCAL_CLUSTERS, isControlPlane, isDeleting, setCapiCondition } from '../api.js';
import { type CapiContext, informers, onUnpause, pausedCheck } from '../context.js';
import { sameStatus } from '../machine-status.js';
import { PROVIDER_ID_PREFIX } from './localmachine-controller.js';

export const LOCAL_CLUSTER_FINALIZER = 'localcluster.infrastructure.cluster.x-k8s.io';
/** The port the control-plane endpoint listens on, and that the API servers on the machines serve. */
export const API_SERVER_PORT = 6443;

/** The cloud balancer in front of a LocalCluster's control plane. */
export const loadBalancerName = (lc: { metadata: { name: string; namespace?: string } }) => `${lc.metadata.namespace ?? 'default'}-${lc.metadata.name}-apiserver`;

/** Set when the controller wrote the endpoint from its balancer, to tell it from a user's. */
const BALANCER_ANNOTATION = 'infrastructure.cluster.x-k8s.io/control-plane-load-balancer';

/** Whether the LocalCluster asks for a balancer: it names no endpoint of its own, or the one it names is its balancer's. */
function wantsBalancer(lc: api.LocalCluster): boolean {
  return !lc.spec?.controlPlaneEndpoint?.host || lc.metadata.annotations?.[BALANCER_ANNOTATION] === loadBalancerName(lc);
}

export function localClusterController(ctx: CapiContext, cloud: CloudClient): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const localClusters = inf.localClusters();
  const machines = inf.machines();
  const localMachines = inf.localMachines();

  /** A LocalMachine's instance: as its status has it, else as spec.providerID names it (a LocalMachine `bosun cluster move` just made has no status yet). */
  const instanceOf = (lm: api.LocalMachine | undefined) =>
    lm?.status?.instanceID ?? (lm?.spec?.providerID?.startsWith(PROVIDER_ID_PREFIX) ? lm.spec.providerID.slice(PROVIDER_ID_PREFIX.length) : undefined);

  /**
   * The cluster's control-plane instances: `want`, those of its control-plane Machines not being
   * deleted; `going`, those whose Machine or LocalMachine is being deleted.
   */
  function controlPlaneInstances(clusterName: string, namespace: string): { want: string[]; going: Set<string> } {
    const want: string[] = [];
    const going = new Set<string>();
    for (const m of machines.list()) {
      if (m.metadata.namespace !== namespace || m.spec?.clusterName !== clusterName || !isControlPlane(m)) continue;
      const ref = m.spec?.infrastructureRef;
      if (ref?.kind !== 'LocalMachine') continue;
      const lm = localMachines.get(ref.name, namespace);
      const id = instanceOf(lm);
      if (!id) continue;
      if (isDeleting(m) || isDeleting(lm!)) going.add(id);
      else want.push(id);
    }
    return { want: want.sort(), going };
  }

  async function writeStatus(lc: api.LocalCluster, status: NonNullable<api.LocalCluster['status']>): Promise<void> {
    if (!sameStatus(status, lc.status)) await ctx.client.update(LOCAL_CLUSTERS, { ...lc, status }, 'status');
  }

  const controller = new Controller({
    name: 'localcluster-controller',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async (key) => {
      const lc = localClusters.getByKey(key);
      if (!lc || paused(lc)) return;
      const now = new Date(ctx.clock.now());
      const finalizers = lc.metadata.finalizers ?? [];
      const balanced = wantsBalancer(lc);

      if (isDeleting(lc)) {
        if (!finalizers.includes(LOCAL_CLUSTER_FINALIZER)) return;
        try {
          await cloud.deleteLoadBalancer(loadBalancerName(lc));
        } catch (e) {
          if (!(e instanceof CloudError && e.status === 404)) throw e;
        }
        await ctx.client.update(LOCAL_CLUSTERS, { ...lc, metadata: { ...lc.metadata, finalizers: finalizers.filter((f) => f !== LOCAL_CLUSTER_FINALIZER) } });
        return;
      }
      if (balanced && !finalizers.includes(LOCAL_CLUSTER_FINALIZER)) {
        await ctx.client.update(LOCAL_CLUSTERS, { ...lc, metadata: { ...lc.metadata, finalizers: [...finalizers, LOCAL_CLUSTER_FINALIZER] } });
        return;
      }

      let zones: string[];
      try {
        zones = (await cloud.request<{ zones: string[] }>('GET', '/v1/zones')).zones;
      } catch (e) {
        await writeStatus(lc, { ...(lc.status ?? {}), conditions: setCapiCondition(lc.status?.conditions, { type: 'Ready', status: 'False', reason: 'CloudUnreachable', message: `the local cloud does not answer: ${(e as Error).message}` }, now) });
        throw e;
      }
      const failureDomains = zones.map((name) => ({ name, controlPlane: true }));

      if (balanced) {
        const clusterName = lc.metadata.labels?.[LABEL.clusterName];
        if (!clusterName) {
          // The Cluster controller labels its infrastructure cluster when it adopts it.
          await writeStatus(lc, {
            ...(lc.status ?? {}), failureDomains,
            conditions: setCapiCondition(lc.status?.conditions, { type: 'Ready', status: 'False', reason: 'WaitingForCluster', message: `waiting for a Cluster to name LocalCluster ${lc.metadata.name} in spec.infrastructureRef` }, now),
          });
          return;
        }
        // The targets: the control-plane instances, plus those the balancer has already whose
        // Machine this controller does not see (yet) — right after a `bosun cluster move` the
        // target's caches fill in their own order, and a balancer emptied for that moment would
        // fail the workload API's clients; a Machine leaves the balancer when it is being deleted,
        // and before its object is gone. A terminated instance (one the cloud lost, or a user
        // terminated, before its Machine is remediated) is no target: the cloud refuses it, and it
        // serves nothing anyway.
        const { want, going } = controlPlaneInstances(clusterName, lc.metadata.namespace ?? 'default');
        const existing = (await cloud.listLoadBalancers()).find((b) => b.name === loadBalancerName(lc));
        const candidates = [...new Set([...want, ...(existing?.targets ?? []).filter((id) => !going.has(id))])];
        const alive = candidates.length ? new Set((await cloud.listInstances({ ids: candidates })).filter((i) => i.state !== 'terminated').map((i) => i.id)) : new Set<string>();
        const targets = candidates.filter((id) => alive.has(id)).sort();
        const lb = await cloud.ensureLoadBalancer(loadBalancerName(lc), {
          ports: [{ name: 'apiserver', protocol: 'TCP', port: API_SERVER_PORT, targetPort: API_SERVER_PORT }],
          targets,
          sourceRanges: [],
          // New connections only to API servers that are ready, as CAPD's haproxy checks /healthz
          // and an ELB its target port: a joining machine gets traffic once it serves, not before.
          healthCheck: { protocol: 'HTTPS', port: API_SERVER_PORT, path: '/readyz' },
        });
        const endpoint = { host: lb.address, port: API_SERVER_PORT };
        const current = lc.spec?.controlPlaneEndpoint;
        if (current?.host !== endpoint.host || current?.port !== endpoint.port) {
          await ctx.client.update(LOCAL_CLUSTERS, {
            ...lc,
            metadata: { ...lc.metadata, annotations: { ...(lc.metadata.annotations ?? {}), [BALANCER_ANNOTATION]: loadBalancerName(lc) } },
            spec: { ...(lc.spec ?? {}), controlPlaneEndpoint: endpoint },
          });
          return;
        }
        await writeStatus(lc, {
          ...(lc.status ?? {}),
          initialization: { provisioned: true },
          failureDomains,
          conditions: setCapiCondition(lc.status?.conditions, {
            type: 'Ready', status: 'True', reason: 'LoadBalancerReady',
            message: targets.length ? '' : `load balancer ${lb.name} at ${lb.address}:${API_SERVER_PORT} has no control-plane machine behind it yet`,
          }, now),
        });
        return;
      }

      await writeStatus(lc, {
        ...(lc.status ?? {}),
        initialization: { provisioned: true },
        failureDomains,
        conditions: setCapiCondition(lc.status?.conditions, { type: 'Ready', status: 'True', reason: 'CloudReachable', message: '' }, now),
      });
    },
  });
  controller.watch(localClusters);
  controller.watch(inf.clusters(), onUnpause(localClusters));
  // A control-plane machine coming, going or getting its instance changes the balancer's targets.
  const clusterOf = (namespace: string | undefined, clusterName: string | undefined): string[] =>
    clusterName ? localClusters.list().filter((lc) => lc.metadata.namespace === namespace && lc.metadata.labels?.[LABEL.clusterName] === clusterName).map((lc) => `${namespace}/${lc.metadata.name}`) : [];
  controller.watch(machines, (m) => (isControlPlane(m) ? clusterOf(m.metadata.namespace, m.spec?.clusterName) : undefined));
  controller.watch(localMachines, (lm) => clusterOf(lm.metadata.namespace, lm.metadata.labels?.[LABEL.clusterName]));
  return controller;
}
