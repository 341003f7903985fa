// The node controller: for each pool, points up to maxUnavailable of its nodes at the pool's
// target rendered config by writing their desiredConfig annotation (node-selection.ts decides
// which), keeps OpenShift's UpdateInProgress:PreferNoSchedule taint on the nodes not yet
// targeted, and writes the pool's status — counts and the Updated / Updating / Degraded /
// NodeDegraded / RenderDegraded conditions, the last from the render controller's outcome. It
// writes nothing else on a node; the daemon owns currentConfig and state, and each change to
// them brings the pool back here.
import { applyStatus } from '../../kube/apply.js';
import { findCondition } from '../../kube/conditions.js';
import { Controller, TerminalError, type SyncContext } from '../../kube/controller.js';
import type { Obj } from '../../kube/client.js';
import { type McoContext } from './context.js';
import { resources } from '../../kube/resources.js';
import { chooseCandidates, computePoolStatus, poolMembership, UPDATE_IN_PROGRESS_TAINT, updateInProgressTaintChanges } from './node-selection.js';
import { DESIRED_CONFIG_ANNOTATION, type MachineConfigPool, type NodeView } from './types.js';

/** Nodes this controller patched, with the resourceVersions they had before, until the informer
 *  shows the patch: a sync in between must not count a just-targeted node as untouched (and
 *  target more nodes than maxUnavailable allows). */
type RecentPatches = Map<string, { stale: Set<string>; patched: NodeView }>;

function withRecentPatches(nodes: NodeView[], recent: RecentPatches): NodeView[] {
  const present = new Set(nodes.map((n) => n.metadata.name ?? ''));
  for (const name of recent.keys()) if (!present.has(name)) recent.delete(name);
  return nodes.map((n) => {
    const name = n.metadata.name ?? '';
    const p = recent.get(name);
    if (!p) return n;
    if (p.stale.has(n.metadata.resourceVersion ?? '')) return p.patched;
    recent.delete(name);
    return n;
  });
}

function rememberPatch(recent: RecentPatches, before: NodeView, patched: NodeView): void {
  const name = before.metadata.name ?? '';
  const stale = recent.get(name)?.stale ?? new Set<string>();
  stale.add(before.metadata.resourceVersion ?? '');
  recent.set(name, { stale, patched });
}

export function nodeController(ctx: McoContext): Controller {
  const recent: RecentPatches = new Map();
  const controller = new Controller({
    name: 'machine-config-controller-node',
    sync: (key, sc) => syncPool(ctx, key, sc, recent),
    resyncPeriodMs: 10 * 60_000,
  });
  controller.watch(ctx.informers.pools);
  // A node's labels decide its pool; its annotations and readiness decide the pool's status.
  // Every pool is looked at (there are few), which also covers a node leaving a pool.
  controller.watch(ctx.informers.nodes, () => ctx.informers.pools.list().map((p) => p.metadata.name as string));
  return controller;
}

const RENDER_MESSAGE_PREFIX = (pool: string) => `Failed to render configuration for pool ${pool}: `;

/** The render failure to report: the render controller's outcome, or (before its first render in
 *  this process) what the pool already says, so a restart does not flap RenderDegraded. */
function renderError(ctx: McoContext, pool: MachineConfigPool): string | undefined {
  const name = pool.metadata.name!;
  if (ctx.renderOutcome.has(name)) return ctx.renderOutcome.get(name);
  const existing = findCondition(pool.status?.conditions, 'RenderDegraded');
  if (existing?.status !== 'True') return undefined;
  const message = existing.message ?? '';
  return message.startsWith(RENDER_MESSAGE_PREFIX(name)) ? message.slice(RENDER_MESSAGE_PREFIX(name).length) : message;
}

async function syncPool(ctx: McoContext, poolName: string, { log }: SyncContext, recent: RecentPatches): Promise<void> {
  const pool = ctx.informers.pools.get(poolName) as MachineConfigPool | undefined;
  if (!pool || pool.metadata.deletionTimestamp) return;
  const { members, conflicts } = poolMembership(ctx.informers.pools.list() as MachineConfigPool[], withRecentPatches(ctx.informers.nodes.list() as NodeView[], recent));
  const nodes = [...(members.get(poolName) ?? [])];
  const target = pool.spec.configuration?.name ?? '';

  let specError: string | undefined;
  let choice: ReturnType<typeof chooseCandidates> | undefined;
  try {
    choice = target ? chooseCandidates(pool, nodes, target) : undefined;
  } catch (e) {
    specError = `pool ${poolName}: ${(e as Error).message}`;
  }
  if (choice) {
    for (const node of choice.nodes) {
      const name = node.metadata.name!;
      const from = node.metadata.annotations?.[DESIRED_CONFIG_ANNOTATION];
      const updated = (await ctx.client.mergePatch(resources.nodes, name, undefined, { metadata: { annotations: { [DESIRED_CONFIG_ANNOTATION]: target } } })) as NodeView;
      nodes[nodes.indexOf(node)] = updated;
      rememberPatch(recent, node, updated);
      log.info({ pool: poolName, node: name, from: from ?? null, to: target }, 'node targeted');
      void ctx.events.event(updated as Obj, 'Normal', 'SetDesiredConfig', `Targeted node ${name} to MachineConfig: ${target}`);
    }
    if (choice.nodes.length === 0 && choice.reason && nodes.some((n) => n.metadata.annotations?.[DESIRED_CONFIG_ANNOTATION] !== target)) {
      log.debug({ pool: poolName, reason: choice.reason }, 'no node targeted');
    }
    const taints = updateInProgressTaintChanges(pool, nodes, target);
    for (const name of [...taints.add, ...taints.remove]) {
      const at = nodes.findIndex((n) => n.metadata.name === name);
      const node = nodes[at];
      const others = (node.spec?.taints ?? []).filter((t) => !(t.key === UPDATE_IN_PROGRESS_TAINT.key && t.effect === UPDATE_IN_PROGRESS_TAINT.effect));
      const wanted = taints.add.includes(name) ? [...others, { ...UPDATE_IN_PROGRESS_TAINT }] : others;
      // The taint list is replaced whole: the resourceVersion makes a concurrent change a conflict (retried).
      const updated = (await ctx.client.mergePatch(resources.nodes, name, undefined, { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: wanted } })) as NodeView;
      rememberPatch(recent, node, updated);
      nodes[at] = updated;
    }
  }

  const conflicted = [...conflicts].filter(([, pools]) => pools.includes(poolName)).map(([node]) => node);
  const status = computePoolStatus({ pool, nodes, target, renderError: renderError(ctx, pool), specError, conflicts: conflicted, now: new Date() });
  const clean = JSON.parse(JSON.stringify(status)) as Obj;
  if (await applyStatus(ctx.client, resources.machineConfigPools, pool as Obj, clean)) {
    log.info({ pool: poolName, machineCount: status.machineCount, updated: status.updatedMachineCount, unavailable: status.unavailableMachineCount, degraded: status.degradedMachineCount }, 'pool status updated');
  }
  // Not retried: the pool's own spec must change first (which brings it back here).
  if (specError) throw new TerminalError(specError);
}
