// The node controller: for each pool, points up to maxUnavailable of its nodes at the pool's
// target rendered config by writing their desiredConfig annotation (node-selection.ts decides
// which), keeps OpenShift's UpdateInProgress:PreferNoSchedule taint on the nodes not yet
// targeted, and writes the pool's status — counts and the Updated / Updating / Degraded /
// NodeDegraded conditions, and Degraded from those and the RenderDegraded condition the render
// controller keeps on the pool (carried over as it is). It
// writes nothing else on a node; the daemon owns currentConfig and state, and each change to
// them brings the pool back here.
import { applyStatus } from '../../kube/apply.js';
import { Controller, TerminalError, type SyncContext } from '../../kube/controller.js';
import { WriteExpectations } from '../../kube/expectations.js';
import { isConflict } from '../../kube/client.js';
import { type McoContext } from './context.js';
import { resources } from '../../kube/resources.js';
import { chooseCandidates, computePoolStatus, poolSpecError, poolMembership, UPDATE_IN_PROGRESS_TAINT, updateInProgressTaintChanges } from './node-selection.js';
import { DESIRED_CONFIG_ANNOTATION, type MachineConfigPoolStatus, type NodeView } from './types.js';

export function nodeController(ctx: McoContext): Controller {
  // Nodes patched but not yet seen patched in the cache: a sync in between must not count a
  // just-targeted node as untouched (and target more nodes than maxUnavailable allows).
  const recent = new WriteExpectations<NodeView>();
  const controller = new Controller({
    name: 'machine-config-controller-node',
    clock: ctx.clock,
    sync: (key, sc) => syncPool(ctx, key, sc, recent),
    resyncPeriodMs: 10 * 60_000,
  });
  controller.watch(ctx.informers.pools);
  // A node's labels decide its pool; its annotations and readiness decide the pool's status.
  // Every pool is looked at (there are few), which also covers a node leaving a pool.
  controller.watch(ctx.informers.nodes, () => ctx.informers.pools.list().map((p) => p.metadata.name as string));
  return controller;
}

/** Conflicts a taint write retries on a fresh read before the sync fails (client-go's RetryOnConflict). */
const TAINT_CONFLICT_RETRIES = 5;

/**
 * Adds or removes the UpdateInProgress taint. The taint list is replaced whole, so the write
 * carries the node's resourceVersion; the daemons and the drain controller write the same nodes
 * all through a rollout, so a conflict is read afresh and tried again at once rather than failing
 * the pool's sync (whose retry would hold up the next node's turn).
 */
async function setUpdateInProgressTaint(ctx: McoContext, node: NodeView, present: boolean): Promise<NodeView> {
  for (let attempt = 0; ; attempt++) {
    const taints = node.spec?.taints ?? [];
    const others = taints.filter((t) => !(t.key === UPDATE_IN_PROGRESS_TAINT.key && t.effect === UPDATE_IN_PROGRESS_TAINT.effect));
    if ((others.length < taints.length) === present) return node;
    const wanted = present ? [...others, { ...UPDATE_IN_PROGRESS_TAINT }] : others;
    try {
      return (await ctx.client.mergePatch(resources.nodes, node.metadata.name!, undefined, { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: wanted } })) as NodeView;
    } catch (e) {
      if (!isConflict(e) || attempt >= TAINT_CONFLICT_RETRIES) throw e;
      node = await ctx.client.get(resources.nodes, node.metadata.name);
    }
  }
}

async function syncPool(ctx: McoContext, poolName: string, { log }: SyncContext, recent: WriteExpectations<NodeView>): Promise<void> {
  const pool = ctx.informers.pools.get(poolName);
  if (!pool || pool.metadata.deletionTimestamp) return;
  const { members, conflicts } = poolMembership(ctx.informers.pools.list(), recent.overlay(ctx.informers.nodes.list()));
  const nodes = [...(members.get(poolName) ?? [])];
  const target = pool.spec.configuration?.name ?? '';

  const specError = poolSpecError(pool);
  const choice = target && !specError ? chooseCandidates(pool, nodes, target) : undefined;
  if (choice) {
    for (const node of choice.nodes) {
      const name = node.metadata.name!;
      const from = node.metadata.annotations?.[DESIRED_CONFIG_ANNOTATION];
      const updated = (await ctx.client.mergePatch(resources.nodes, name, undefined, { metadata: { annotations: { [DESIRED_CONFIG_ANNOTATION]: target } } }));
      nodes[nodes.indexOf(node)] = updated;
      recent.expect(node, updated);
      log.info({ pool: poolName, node: name, from: from ?? null, to: target }, 'node targeted');
      void ctx.events.event(updated, 'Normal', 'SetDesiredConfig', `Targeted node ${name} to MachineConfig: ${target}`);
    }
    if (choice.nodes.length === 0 && choice.reason && nodes.some((n) => n.metadata.annotations?.[DESIRED_CONFIG_ANNOTATION] !== target)) {
      log.debug({ pool: poolName, reason: choice.reason }, 'no node targeted');
    }
    const taints = updateInProgressTaintChanges(pool, nodes, target);
    for (const name of [...taints.add, ...taints.remove]) {
      const at = nodes.findIndex((n) => n.metadata.name === name);
      const updated = await setUpdateInProgressTaint(ctx, nodes[at], taints.add.includes(name));
      recent.expect(nodes[at], updated);
      nodes[at] = updated;
    }
  }

  const conflicted = [...conflicts].filter(([, pools]) => pools.includes(poolName)).map(([node]) => node);
  const status = computePoolStatus({ pool, nodes, target, specError, conflicts: conflicted, now: new Date(ctx.clock.now()) });
  // As JSON (no undefined fields), so that it compares with the stored status.
  const clean = JSON.parse(JSON.stringify(status)) as MachineConfigPoolStatus;
  if (await applyStatus(ctx.client, resources.machineConfigPools, pool, clean)) {
    log.info({ pool: poolName, machineCount: status.machineCount, updated: status.updatedMachineCount, unavailable: status.unavailableMachineCount, degraded: status.degradedMachineCount }, 'pool status updated');
  }
  // Not retried: the pool's own spec must change first (which brings it back here).
  if (specError) throw new TerminalError(specError);
}
