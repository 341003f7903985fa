// The render controller: for each MachineConfigPool, once the ControllerConfig's templates are
// complete, renders the selected MachineConfigs (render.ts), writes the rendered MachineConfig and
// points pool.spec.configuration (name and source) at it. A render that fails (invalid or
// unreconcilable MachineConfig, nothing selected) leaves the pool on its current config; this
// controller writes the pool's RenderDegraded condition itself (True with the failure, False once
// a render succeeds — the toolkit's degraded-on-error) together with Degraded, summed by the same
// rule as the node controller's (withDegraded); the node controller, which writes the rest of pool
// status, carries RenderDegraded over from the pool. Afterwards it
// garbage-collects the pool's rendered configs nothing has referenced for the grace period
// (rendered-gc.ts), checking the nodes afresh from the API before any delete. What Ignition only
// warns about in a selected MachineConfig (unused keys such as spec-2 leftovers, ...) never stops
// a render: it is logged and recorded as a Warning Event on that MachineConfig, once per change.
import { applyObject } from '../../kube/apply.js';
import { Controller, TerminalError, type SyncContext, type SyncResult } from '../../kube/controller.js';
import { findCondition, isTrue } from '../../kube/conditions.js';
import { CONTROLLER_CONFIG_NAME, TEMPLATE_COMPLETED, type McoContext } from './context.js';
import { resources } from '../../kube/resources.js';
import type { ResourceRef } from '../../kube/client.js';
import type { Informer } from '../../kube/informer.js';
import type { WithStatusConditions } from '../../kube/degraded.js';
import { RELEASE_IMAGE_VERSION_ANNOTATION, conditionsOf, type ControllerConfig, type MachineConfig, type MachineConfigPool, type NodeView } from './types.js';
import { renderFailureMessage, renderPool, RenderError, selectMachineConfigs } from './render.js';
import { formatProblem } from '../../ignition/parse.js';
import { validateConfig } from '../../ignition/validate.js';
import { planCollection, referencedConfigs } from './rendered-gc.js';
import { withDegraded } from './node-selection.js';

export function renderController(ctx: McoContext): Controller {
  const unreferencedSince = new Map<string, Map<string, number>>();
  const warned = new Map<string, string>();
  const controller = new Controller({
    name: 'machine-config-controller-render',
    clock: ctx.clock,
    sync: (key, sc) => {
      reportIgnitionWarnings(ctx, key, sc.log, warned);
      return syncRender(ctx, key, sc, unreferencedSince);
    },
    resyncPeriodMs: 10 * 60_000,
    // A bad MachineConfig fails at once (TerminalError); an API error only when it persists.
    // The pool CRD leaves a condition's type and status optional; the MCO always writes both.
    degraded: { client: ctx.client, resource: resources.machineConfigPools as ResourceRef<WithStatusConditions>, informer: ctx.informers.pools as unknown as Pick<Informer<WithStatusConditions>, 'get'>, condition: 'RenderDegraded', reason: 'RenderFailed', after: 3, message: (error, pool) => renderFailureMessage(pool, error.message), derive: (pool, conditions) => withDegraded(pool as MachineConfigPool, conditions, new Date(ctx.clock.now())), clock: ctx.clock },
  });
  const allPools = () => ctx.informers.pools.list().map((p) => p.metadata.name as string);
  // Writers of MachineConfigs (the template and kubelet-config controllers, an admin applying a
  // set) write several in a row: render once after the burst rather than once per object, which
  // would roll nodes through intermediate configs (OpenShift waits 5 s for the same reason).
  const renderSoon = () => {
    for (const pool of allPools()) controller.enqueue(pool, ctx.settings.renderDelayMs);
    return undefined;
  };
  controller.watch(ctx.informers.pools);
  controller.watch(ctx.informers.machineConfigs, renderSoon);
  controller.watch(ctx.informers.controllerConfigs, renderSoon);
  // Node references decide garbage collection.
  controller.watch(ctx.informers.nodes, (node, type, old) => {
    if (type !== 'update') return allPools();
    const refs = (n: typeof node | undefined) => JSON.stringify([n?.metadata?.annotations?.['machineconfiguration.openshift.io/currentConfig'], n?.metadata?.annotations?.['machineconfiguration.openshift.io/desiredConfig']]);
    return refs(node) === refs(old) ? undefined : allPools();
  });
  return controller;
}

/**
 * Logs and records (Warning Event `IgnitionWarnings`) what Ignition would warn about in the
 * MachineConfigs the pool selects: once per MachineConfig version (`reported` remembers which),
 * whether or not the render succeeds.
 */
function reportIgnitionWarnings(ctx: McoContext, poolName: string, log: SyncContext['log'], reported: Map<string, string>): void {
  const pool = ctx.informers.pools.get(poolName) as MachineConfigPool | undefined;
  let selected: MachineConfig[];
  try {
    selected = pool ? selectMachineConfigs(pool, ctx.informers.machineConfigs.list() as MachineConfig[]) : [];
  } catch (e) {
    if (e instanceof RenderError) return; // a bad selector: the render reports it
    throw e;
  }
  for (const name of reported.keys()) if (!ctx.informers.machineConfigs.get(name)) reported.delete(name);
  for (const mc of selected) {
    const name = mc.metadata.name!;
    const version = `${mc.metadata.uid}/${mc.metadata.resourceVersion}`;
    if (!mc.spec?.config || reported.get(name) === version) continue;
    reported.set(name, version);
    const warnings = validateConfig(mc.spec.config).filter((p) => p.warning).map((p) => `spec.config.${formatProblem(p)}`);
    if (warnings.length === 0) continue;
    log.warn({ pool: poolName, machineConfig: name, warnings }, 'MachineConfig has Ignition warnings; it renders as Ignition would apply it');
    void ctx.events.event(mc, 'Warning', 'IgnitionWarnings', eventMessage('Ignition config has warnings (ignored keys are not rendered): ', warnings));
  }
}

/** An Event's message stays within the 1024 characters Kubernetes allows; the log has it all. */
function eventMessage(prefix: string, items: string[]): string {
  const message = prefix + items.join('; ');
  return message.length <= 1024 ? message : `${message.slice(0, 1023)}…`;
}

function templatesComplete(cc: ControllerConfig | undefined): cc is ControllerConfig {
  if (!cc) return false;
  return isTrue(conditionsOf(cc), TEMPLATE_COMPLETED) && cc.status?.observedGeneration === cc.metadata.generation;
}

async function syncRender(ctx: McoContext, poolName: string, { log }: SyncContext, memory: Map<string, Map<string, number>>): Promise<SyncResult | void> {
  const pool = ctx.informers.pools.get(poolName);
  if (!pool || pool.metadata.deletionTimestamp) {
    memory.delete(poolName);
    return;
  }
  const cc = ctx.informers.controllerConfigs.get(CONTROLLER_CONFIG_NAME);
  if (!templatesComplete(cc)) {
    log.debug({ pool: poolName }, 'waiting for the ControllerConfig templates before rendering');
    return;
  }
  const all = ctx.informers.machineConfigs.list();
  const currentName = pool.spec.configuration?.name;
  const current = currentName ? ctx.informers.machineConfigs.get(currentName) : undefined;
  let failure: RenderError | undefined;
  try {
    const { rendered, source } = renderPool(pool, all, {
      controllerVersion: ctx.settings.controllerVersion,
      releaseVersion: cc.metadata.annotations?.[RELEASE_IMAGE_VERSION_ANNOTATION] ?? ctx.settings.releaseVersion,
      osImageURL: cc.spec.baseOSContainerImage || cc.spec.osImageURL,
      baseOSExtensionsContainerImage: cc.spec.baseOSExtensionsContainerImage,
      currentSpec: current?.spec,
      currentSources: (pool.spec.configuration?.source ?? []).map((s) => s.name ?? ''),
    });
    const name = rendered.metadata.name!;
    const { action } = await applyObject(ctx.client, rendered, resources.machineConfigs);
    if (action === 'created') log.info({ pool: poolName, machineConfig: name, sources: source.map((s) => s.name) }, 'rendered config generated');
    const sameSources = (pool.spec.configuration?.source ?? []).map((s) => s.name).join() === source.map((s) => s.name).join();
    if (currentName !== name || !sameSources) {
      await ctx.client.mergePatch(resources.machineConfigPools, poolName, undefined, { spec: { configuration: { name, source } } });
      if (currentName !== name) {
        log.info({ pool: poolName, from: currentName ?? null, to: name }, 'pool targets a new rendered config');
        void ctx.events.event(pool, 'Normal', 'SetDesiredConfig', `Targeted pool ${poolName} at ${name}${currentName ? ` (was ${currentName})` : ''}`);
      }
    }
  } catch (e) {
    if (!(e instanceof RenderError)) throw e;
    failure = e;
  }
  const reported = findCondition(conditionsOf(pool), 'RenderDegraded');
  const result = await collectGarbage(ctx, pool, log, memory);
  if (!failure) {
    if (reported?.status === 'True') log.info({ pool: poolName }, 'render recovered');
    return result;
  }
  // Said once per failure, not on every retry of the same one.
  if (reported?.status !== 'True' || reported.message !== renderFailureMessage(poolName, failure.message)) {
    log.warn({ pool: poolName, err: failure.message }, 'render failed; pool stays on its current config');
    void ctx.events.event(pool, 'Warning', 'RenderFailed', failure.message);
  }
  // Not retried: the MachineConfigs must change first (which brings the pool back here).
  throw new TerminalError(failure.message);
}

async function collectGarbage(ctx: McoContext, pool: MachineConfigPool, log: SyncContext['log'], memory: Map<string, Map<string, number>>): Promise<SyncResult | void> {
  const poolName = pool.metadata.name!;
  const since = memory.get(poolName) ?? new Map<string, number>();
  memory.set(poolName, since);
  const pools = ctx.informers.pools.list();
  const configs = ctx.informers.machineConfigs.list();
  const plan = planCollection(poolName, configs, referencedConfigs(pools, ctx.informers.nodes.list()), since, ctx.clock.now(), ctx.settings.renderedGCGraceMs);
  if (plan.collect.length > 0) {
    // The caches may lag: before deleting anything, ask the API server who references what now.
    const fresh = referencedConfigs(
      ((await ctx.client.list(resources.machineConfigPools)).items ?? []) as MachineConfigPool[],
      ((await ctx.client.list(resources.nodes)).items ?? []) as NodeView[],
    );
    for (const name of plan.collect) {
      if (fresh.has(name)) {
        since.delete(name);
        continue;
      }
      await ctx.client.delete(resources.machineConfigs, name);
      since.delete(name);
      log.info({ pool: poolName, machineConfig: name, graceMs: ctx.settings.renderedGCGraceMs }, 'deleted a rendered config nothing references');
    }
  }
  return plan.recheckInMs !== undefined ? { requeueAfterMs: plan.recheckInMs } : undefined;
}
