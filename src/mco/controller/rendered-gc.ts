// Garbage collection of a pool's old rendered configs (OpenShift keeps them forever). A rendered
// config is referenced while its pool names it (spec or status configuration) or any node names
// it (currentConfig or desiredConfig annotation); a referenced config is never collected. One
// that nothing references is collected once it has been unreferenced for the grace period, as
// seen by this process (the clock restarts with the process, which only delays collection).
import { isRendered } from './render.js';
import { CURRENT_CONFIG_ANNOTATION, DESIRED_CONFIG_ANNOTATION, type MachineConfig, type MachineConfigPool, type NodeView } from './types.js';

/** Every rendered-config name the pools and nodes refer to. */
export function referencedConfigs(pools: MachineConfigPool[], nodes: NodeView[]): Set<string> {
  const out = new Set<string>();
  for (const p of pools) {
    if (p.spec.configuration?.name) out.add(p.spec.configuration.name);
    if (p.status?.configuration?.name) out.add(p.status.configuration.name);
  }
  for (const n of nodes) {
    for (const key of [CURRENT_CONFIG_ANNOTATION, DESIRED_CONFIG_ANNOTATION]) {
      const v = n.metadata.annotations?.[key];
      if (v) out.add(v);
    }
  }
  return out;
}

export interface CollectionPlan {
  /** Rendered configs to delete now. */
  collect: string[];
  /** When to look again for configs still inside their grace period. */
  recheckInMs?: number;
}

/**
 * Decides which of `poolName`'s rendered configs to delete. `unreferencedSince` (name → epoch ms)
 * is the caller's memory of this pool across calls: this function records configs newly seen
 * unreferenced and forgets referenced or vanished ones.
 */
export function planCollection(poolName: string, configs: MachineConfig[], referenced: Set<string>, unreferencedSince: Map<string, number>, now: number, graceMs: number): CollectionPlan {
  const mine = configs.filter((mc) => isRendered(mc) && (mc.metadata.ownerReferences ?? []).some((o) => o.kind === 'MachineConfigPool' && o.name === poolName));
  const names = new Set(mine.map((mc) => mc.metadata.name ?? ''));
  for (const name of [...unreferencedSince.keys()]) {
    if (!names.has(name) || referenced.has(name)) unreferencedSince.delete(name);
  }
  const collect: string[] = [];
  let recheckInMs: number | undefined;
  for (const name of [...names].sort()) {
    if (referenced.has(name)) continue;
    const since = unreferencedSince.get(name) ?? now;
    unreferencedSince.set(name, since);
    const left = since + graceMs - now;
    if (left <= 0) collect.push(name);
    else recheckInMs = Math.min(recheckInMs ?? left, left);
  }
  return { collect, ...(recheckInMs !== undefined ? { recheckInMs } : {}) };
}
