// The local infrastructure provider's LocalCluster controller, following Cluster API's
// InfraCluster contract: the local cloud is always there, so a LocalCluster is provisioned as
// soon as the cloud answers; its failure domains are the cloud's zones (each may hold control
// plane machines); spec.controlPlaneEndpoint is the user's (the API server's address), which the
// Cluster controller copies to the Cluster.
import type { CloudClient } from '../../cloud/client.js';
import type * as api from '../../api/index.js';
import { Controller } from '../../kube/index.js';
import { LOCAL_CLUSTERS, isDeleting, setCapiCondition } from '../api.js';
import { type CapiContext, informers } from '../context.js';
import { sameStatus } from '../machine-status.js';

export function localClusterController(ctx: CapiContext, cloud: CloudClient): Controller {
  const localClusters = informers(ctx).localClusters();
  const controller = new Controller({
    name: 'localcluster-controller',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async (key) => {
      const lc = localClusters.getByKey(key);
      if (!lc || isDeleting(lc)) return;
      const now = new Date(ctx.clock.now());
      let status: NonNullable<api.LocalCluster['status']>;
      try {
        const { zones } = await cloud.request<{ zones: string[] }>('GET', '/v1/zones');
        status = {
          ...(lc.status ?? {}),
          initialization: { provisioned: true },
          failureDomains: zones.map((name) => ({ name, controlPlane: true })),
          conditions: setCapiCondition(lc.status?.conditions, { type: 'Ready', status: 'True', reason: 'CloudReachable', message: '' }, now),
        };
      } catch (e) {
        status = { ...(lc.status ?? {}), conditions: setCapiCondition(lc.status?.conditions, { type: 'Ready', status: 'False', reason: 'CloudUnreachable', message: (e as Error).message }, now) };
        if (!sameStatus(status, lc.status)) await ctx.client.update(LOCAL_CLUSTERS, { ...lc, status }, 'status');
        throw e;
      }
      if (!sameStatus(status, lc.status)) await ctx.client.update(LOCAL_CLUSTERS, { ...lc, status }, 'status');
    },
  });
  controller.watch(localClusters);
  return controller;
}
