// The cloud node lifecycle controller (k8s.io/cloud-provider's): every few seconds, each node
// that is not Ready is checked against the cloud — an instance that no longer exists means the
// Node goes (event `DeletingNode`), one that is shut down gets the shutdown taint (NoSchedule) so
// nothing new lands there; a node Ready again loses that taint.
import type * as api from '../api/index.js';
import { Controller, isNotFound } from '../kube/index.js';
import { asNode, type CcmContext, hasTaint, isReady, NODES, SHUTDOWN_TAINT } from './context.js';

/** Upstream's --node-monitor-period default. */
export const NODE_MONITOR_PERIOD_MS = 5_000;

export function cloudNodeLifecycleController(ctx: CcmContext, periodMs = NODE_MONITOR_PERIOD_MS): Controller {
  const instances = ctx.cloud.instancesV2();
  if (!instances) throw new Error(`cloud provider "${ctx.cloud.providerName()}" does not support InstancesV2, which the node lifecycle controller needs`);
  const events = ctx.events('cloud-node-lifecycle-controller');
  const controller = new Controller({
    clock: ctx.clock, name: 'cloud-node-lifecycle-controller', workers: 2, resyncPeriodMs: periodMs, sync: (name) => sync(name) });
  controller.watch(ctx.nodes);

  async function setShutdownTaint(node: api.Node, on: boolean): Promise<void> {
    const others = (node.spec?.taints ?? []).filter((t) => t.key !== SHUTDOWN_TAINT);
    const taints = on ? [...others, { key: SHUTDOWN_TAINT, effect: 'NoSchedule' }] : others;
    await ctx.client.mergePatch(NODES, node.metadata.name, undefined, { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: taints.length ? taints : null } });
  }

  async function sync(name: string): Promise<void> {
    const node = ctx.nodes.get(name);
    if (!node || node.metadata.deletionTimestamp) return;
    if (isReady(node)) {
      if (hasTaint(node, SHUTDOWN_TAINT)) await setShutdownTaint(node, false);
      return;
    }
    if (!(await instances!.instanceExists(node))) {
      void events.event(asNode(node), 'Normal', 'DeletingNode', `Deleting node ${name} because it does not exist in the cloud provider`);
      try {
        await ctx.client.delete(NODES, name, undefined, { preconditions: { uid: node.metadata.uid } });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      return;
    }
    const shutdown = await instances!.instanceShutdown(node);
    if (shutdown !== hasTaint(node, SHUTDOWN_TAINT)) await setShutdownTaint(node, shutdown);
  }

  return controller;
}
