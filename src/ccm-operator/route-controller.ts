// The route controller (k8s.io/cloud-provider's): every node's podCIDRs get a cloud route to the
// node (name hint: the node's UID), routes inside the cluster CIDR that no node's podCIDR
// explains are removed, and each node's NetworkUnavailable condition says whether its routes
// exist (False / RouteCreated, or True / NoRouteCreated with a FailedToCreateRoute event).
// Level-triggered on one key: the whole route table, on node changes and every 10 s.
import type * as api from '../api/index.js';
import { Controller, isConflict, isNotFound, rfc3339 } from '../kube/index.js';
import { parseCidr } from '../common/ipv4.js';
import type { Route } from './cloud-provider.js';
import { asNode, type CcmContext, NODES } from './context.js';

/** Upstream's --route-reconciliation-period default. */
export const ROUTE_RECONCILIATION_MS = 10_000;
const KEY = 'routes';

/** True when `cidr` lies inside `outer` (both IPv4 networks). */
export function cidrWithin(cidr: string, outer: string): boolean {
  const a = parseCidr(cidr);
  const b = parseCidr(outer);
  if (!a || !b || a.bits < b.bits) return false;
  const size = 2 ** (32 - b.bits);
  return Math.floor(a.base / size) === Math.floor(b.base / size);
}

export const podCidrsOf = (node: api.Node): string[] => node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);

/** What to create and delete so that the routes match the nodes' podCIDRs. */
export function planRoutes(nodes: api.Node[], routes: Route[], clusterCidr: string | undefined): { create: Array<{ node: api.Node; cidr: string; hint: string }>; remove: Route[] } {
  const have = new Set(routes.map((r) => `${r.targetNode} ${r.destinationCIDR}`));
  const want = new Set<string>();
  const create: Array<{ node: api.Node; cidr: string; hint: string }> = [];
  for (const node of nodes) {
    podCidrsOf(node).forEach((cidr, i) => {
      want.add(`${node.metadata.name} ${cidr}`);
      // One route per (node, CIDR); a dual-stack node's second CIDR needs a name of its own.
      if (!have.has(`${node.metadata.name} ${cidr}`)) create.push({ node, cidr, hint: i === 0 ? node.metadata.uid! : `${node.metadata.uid}-${i}` });
    });
  }
  const remove = routes.filter((r) => !want.has(`${r.targetNode} ${r.destinationCIDR}`) && (clusterCidr === undefined || cidrWithin(r.destinationCIDR, clusterCidr)));
  return { create, remove };
}

export function routeController(ctx: CcmContext, clusterCidr: string | undefined, periodMs = ROUTE_RECONCILIATION_MS): Controller {
  const routes = ctx.cloud.routes();
  if (!routes) throw new Error(`cloud provider "${ctx.cloud.providerName()}" does not support routes; run with --configure-cloud-routes=false`);
  const events = ctx.events('route_controller');
  const controller = new Controller({
    clock: ctx.clock, name: 'route-controller', sync: () => sync() });
  controller.watch(ctx.nodes, () => KEY);

  async function sync(): Promise<{ requeueAfterMs: number }> {
    const nodes = ctx.nodes.list().filter((n) => !n.metadata.deletionTimestamp);
    const { create, remove } = planRoutes(nodes, await routes!.listRoutes(ctx.clusterName), clusterCidr);
    for (const route of remove) await routes!.deleteRoute(ctx.clusterName, route);
    const failed = new Set<string>();
    for (const { node, cidr, hint } of create) {
      try {
        await routes!.createRoute(ctx.clusterName, hint, { targetNode: node.metadata.name, destinationCIDR: cidr }, node);
      } catch (e) {
        failed.add(node.metadata.name);
        void events.event(asNode(node), 'Warning', 'FailedToCreateRoute', `Could not create route ${hint} ${cidr} for node ${node.metadata.name}: ${(e as Error).message}`);
      }
    }
    for (const node of nodes) {
      if (podCidrsOf(node).length === 0) continue;
      await setNetworkUnavailable(node, failed.has(node.metadata.name));
    }
    return { requeueAfterMs: periodMs };
  }

  async function setNetworkUnavailable(node: api.Node, unavailable: boolean): Promise<void> {
    const [status, reason, message] = unavailable ? ['True', 'NoRouteCreated', 'RouteController failed to create a route'] : ['False', 'RouteCreated', 'RouteController created a route'];
    const conditions = node.status?.conditions ?? [];
    const old = conditions.find((c) => c.type === 'NetworkUnavailable');
    if (old?.status === status && old.reason === reason) return;
    const now = rfc3339(new Date(ctx.clock.now()));
    const next = { type: 'NetworkUnavailable', status, reason, message, lastTransitionTime: now, lastHeartbeatTime: now };
    try {
      // The whole list under the read resourceVersion: a merge patch replaces lists, so it must
      // not drop a condition the kubelet wrote meanwhile (a conflict retries the sync).
      await ctx.client.mergePatch(NODES, node.metadata.name, undefined, {
        metadata: { resourceVersion: node.metadata.resourceVersion },
        status: { conditions: [...conditions.filter((c) => c.type !== 'NetworkUnavailable'), next] },
      }, 'status');
    } catch (e) {
      if (isNotFound(e)) return;
      if (isConflict(e)) controller.enqueue(KEY, 200);
      else throw e;
    }
  }

  return controller;
}
