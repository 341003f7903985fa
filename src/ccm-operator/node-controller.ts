// The cloud node controller (k8s.io/cloud-provider's node controller): a node registered by a
// kubelet with an external cloud provider carries the uninitialized taint; this controller asks
// the cloud for its instance (InstancesV2.instanceMetadata) and writes what it says — providerID,
// instance-type and zone/region labels (with their deprecated beta twins, as upstream still
// writes them), addresses — then removes the taint and records `Synced`. Initialised nodes are
// revisited every resync period so their addresses follow the cloud's.
import type * as api from '../api/index.js';
import { Controller, isNotFound } from '../kube/index.js';
import type { InstanceMetadata } from './cloud-provider.js';
import { asNode, type CcmContext, hasTaint, NODES, UNINITIALIZED_TAINT } from './context.js';

/** How often initialised nodes' addresses are compared with the cloud's (upstream: 5 minutes). */
export const NODE_STATUS_UPDATE_MS = 60_000;

/** The labels the cloud's metadata gives a node (GA and beta names, as upstream). */
export function cloudLabels(meta: InstanceMetadata): Record<string, string> {
  return {
    ...(meta.instanceType ? { 'node.kubernetes.io/instance-type': meta.instanceType, 'beta.kubernetes.io/instance-type': meta.instanceType } : {}),
    ...(meta.zone ? { 'topology.kubernetes.io/zone': meta.zone, 'failure-domain.beta.kubernetes.io/zone': meta.zone } : {}),
    ...(meta.region ? { 'topology.kubernetes.io/region': meta.region, 'failure-domain.beta.kubernetes.io/region': meta.region } : {}),
    ...meta.additionalLabels,
  };
}

export function cloudNodeController(ctx: CcmContext, resyncPeriodMs = NODE_STATUS_UPDATE_MS): Controller {
  const instances = ctx.cloud.instancesV2();
  if (!instances) throw new Error(`cloud provider "${ctx.cloud.providerName()}" does not support InstancesV2, which the node controller needs`);
  const events = ctx.events('cloud-node-controller');
  const controller = new Controller({
    clock: ctx.clock, name: 'cloud-node-controller', workers: 2, resyncPeriodMs, sync: (name) => sync(name) });
  controller.watch(ctx.nodes);

  async function sync(name: string): Promise<void> {
    const node = ctx.nodes.get(name);
    if (!node || node.metadata.deletionTimestamp) return;
    if (hasTaint(node, UNINITIALIZED_TAINT)) return initialize(node);
    if (!node.spec?.providerID || !(await instances!.instanceExists(node))) return;
    const meta = await instances!.instanceMetadata(node);
    await updateAddresses(node, meta);
  }

  async function initialize(node: api.Node): Promise<void> {
    const meta = await instances!.instanceMetadata(node);
    // Addresses first: once the taint is gone, the node is complete.
    const withAddresses = await updateAddresses(node, meta);
    const taints = (node.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT);
    let updated: api.Node;
    try {
      updated = await ctx.client.mergePatch(NODES, node.metadata.name, undefined, {
        metadata: { resourceVersion: withAddresses.metadata.resourceVersion, labels: cloudLabels(meta) },
        spec: { ...(node.spec?.providerID ? {} : { providerID: meta.providerID }), taints: taints.length ? taints : null },
      });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    void events.event(asNode(updated), 'Normal', 'Synced', 'Node synced successfully');
  }

  /** Writes the cloud's addresses when they differ; returns the node as it now is. */
  async function updateAddresses(node: api.Node, meta: InstanceMetadata): Promise<api.Node> {
    if (JSON.stringify(node.status?.addresses ?? []) === JSON.stringify(meta.nodeAddresses)) return node;
    return ctx.client.mergePatch(NODES, node.metadata.name, undefined, { status: { addresses: meta.nodeAddresses } }, 'status');
  }

  return controller;
}
