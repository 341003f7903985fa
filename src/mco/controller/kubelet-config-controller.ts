// The kubelet-config controller: turns every KubeletConfig into the `99-<pool>-generated-kubelet`
// MachineConfigs of the pools it selects (kubelet-config.ts), deletes generated configs no
// KubeletConfig asks for any more, and writes each KubeletConfig's Success / Failure condition.
// The outputs depend on all KubeletConfigs and pools together (naming by age per pool), so one
// key, "cluster", covers everything.
import { applyObject, applyStatus } from '../../kube/apply.js';
import { setCondition } from '../../kube/conditions.js';
import { Controller, type SyncContext } from '../../kube/controller.js';
import { CONTROLLER_CONFIG_NAME, type McoContext } from './context.js';
import { resources } from '../../kube/resources.js';
import { generateKubeletConfigs, type KubeletConfigWithTls } from './kubelet-config.js';
import { TemplateError } from './template.js';
import { conditionsOf } from './types.js';

const KEY = 'cluster';

export function kubeletConfigController(ctx: McoContext): Controller {
  const controller = new Controller({
    name: 'machine-config-controller-kubelet-config',
    clock: ctx.clock,
    sync: (_key, sc) => syncKubeletConfigs(ctx, sc),
    resyncPeriodMs: 10 * 60_000,
  });
  controller.watch(ctx.informers.kubeletConfigs, () => KEY);
  controller.watch(ctx.informers.pools, (pool, type, old) => (type === 'update' && JSON.stringify(pool.metadata?.labels) === JSON.stringify(old?.metadata?.labels) ? undefined : KEY));
  controller.watch(ctx.informers.controllerConfigs, () => KEY);
  controller.watch(ctx.informers.machineConfigs, (mc) => ((mc.metadata?.ownerReferences ?? []).some((o: { kind: string }) => o.kind === 'KubeletConfig') ? KEY : undefined));
  return controller;
}

async function syncKubeletConfigs(ctx: McoContext, { log }: SyncContext): Promise<void> {
  const cc = ctx.informers.controllerConfigs.get(CONTROLLER_CONFIG_NAME);
  if (!cc) {
    log.debug('waiting for the ControllerConfig');
    return;
  }
  const kcs = ctx.informers.kubeletConfigs.list() as KubeletConfigWithTls[];
  let outcome;
  try {
    outcome = generateKubeletConfigs(kcs, ctx.informers.pools.list(), cc, ctx.settings.controllerVersion);
  } catch (e) {
    // The base kubelet configuration needs a usable ControllerConfig; the template controller reports that.
    if (e instanceof TemplateError) { log.warn({ err: e.message }, 'cannot generate kubelet configs yet'); return; }
    throw e;
  }
  for (const mc of outcome.machineConfigs) {
    const { action } = await applyObject(ctx.client, mc, resources.machineConfigs);
    if (action !== 'unchanged') log.info({ machineConfig: mc.metadata.name, action, kubeletConfig: mc.metadata.ownerReferences?.[0]?.name }, 'kubelet config written');
  }
  const wanted = new Set(outcome.machineConfigs.map((mc) => mc.metadata.name));
  for (const mc of ctx.informers.machineConfigs.list()) {
    const generated = (mc.metadata.ownerReferences ?? []).some((o) => o.kind === 'KubeletConfig') && /^99-.+-generated-kubelet(-\d+)?$/.test(mc.metadata.name ?? '');
    if (generated && !wanted.has(mc.metadata.name)) {
      await ctx.client.delete(resources.machineConfigs, mc.metadata.name!);
      log.info({ machineConfig: mc.metadata.name }, 'generated kubelet config no longer wanted; deleted');
    }
  }
  const now = new Date(ctx.clock.now());
  for (const kc of kcs) {
    const condition = outcome.conditions.get(kc.metadata.name ?? '');
    if (!condition) continue;
    // One condition, Success or Failure, as OpenShift shows the latest outcome.
    const previous = (conditionsOf(kc) ?? []).filter((c) => c.type === condition.type);
    const conditions = setCondition(previous, condition, now);
    if (await applyStatus(ctx.client, resources.kubeletConfigs, kc, { observedGeneration: kc.metadata.generation, conditions }) && condition.type === 'Failure') {
      void ctx.events.event(kc, 'Warning', 'KubeletConfigFailed', condition.message ?? '');
    }
  }
}
