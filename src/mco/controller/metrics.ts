// The machine-config controller's Prometheus metrics, named and labelled as OpenShift's
// (pkg/controller/common/metrics.go; set by its node and drain controllers), so that MCCDrainError,
// MCCPoolAlert and the pool dashboards read them:
//   mcc_drain_err{node}                 1 while a node's drain has failed for longer than the drain
//                                       timeout (it is still retried); gone once it succeeds
//   mcc_pool_alert{node}                1 for a node matched by master and a custom pool (it gets
//                                       master's configuration only), else 0
//   mco_machine_count{pool}, mco_updated_machine_count{pool}, mco_degraded_machine_count{pool},
//   mco_unavailable_machine_count{pool} the pool's status counts
//   mco_state{node, pool, state, reason} per node of a pool: the pool's most recent True condition
//                                       (type and reason), valued at its transition time
// As upstream, mcc_drain_err and mcc_pool_alert carry a node="initialize" series at 0, so that they
// exist before any node has a value. All but mcc_drain_err are computed at scrape time from the
// controller's informer caches; one registry per controller process.
import { Gauge, Registry } from 'prom-client';
import type { Informer } from '../../kube/informer.js';
import { poolMembership } from './node-selection.js';
import type { MachineConfigPool, NodeView } from './types.js';

const INITIALIZE = 'initialize';

const seconds = (time: string | undefined): number => {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isFinite(ms) ? ms / 1000 : 0;
};

/** The pool's True condition that changed last (upstream's choice for mco_state). */
function latestTrueCondition(pool: MachineConfigPool): { type: string; reason: string; at: number } | undefined {
  let latest: { type: string; reason: string; at: number } | undefined;
  for (const c of pool.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    const at = seconds(c.lastTransitionTime ?? undefined);
    if (!latest || at > latest.at) latest = { type: c.type ?? '', reason: c.reason ?? '', at };
  }
  return latest;
}

export interface ControllerMetrics {
  registry: Registry;
  /** Set by the drain controller. */
  drainErr: Gauge<'node'>;
}

export function createControllerMetrics(informers: { pools: Informer<MachineConfigPool>; nodes: Informer<NodeView> }): ControllerMetrics {
  const registry = new Registry();
  const drainErr = new Gauge({ name: 'mcc_drain_err', help: 'logs failed drain', labelNames: ['node'] as const, registers: [registry] });
  drainErr.set({ node: INITIALIZE }, 0);

  new Gauge({
    name: 'mcc_pool_alert', help: 'pool status alert', labelNames: ['node'] as const, registers: [registry],
    collect() {
      this.reset();
      this.set({ node: INITIALIZE }, 0);
      const { members, masterOverCustom } = poolMembership(informers.pools.list(), informers.nodes.list());
      for (const nodes of members.values()) for (const n of nodes) this.set({ node: n.metadata.name ?? '' }, masterOverCustom.has(n.metadata.name ?? '') ? 1 : 0);
    },
  });

  const counts: [string, string, (s: NonNullable<MachineConfigPool['status']>) => number | undefined][] = [
    ['mco_machine_count', 'total number of machines in a specified pool', (s) => s.machineCount],
    ['mco_updated_machine_count', 'total number of updated machines in specified pool', (s) => s.updatedMachineCount],
    ['mco_degraded_machine_count', 'total number of degraded machines in specified pool', (s) => s.degradedMachineCount],
    ['mco_unavailable_machine_count', 'total number of unavailable machines in specified pool', (s) => s.unavailableMachineCount],
  ];
  for (const [name, help, count] of counts) {
    new Gauge({
      name, help, labelNames: ['pool'] as const, registers: [registry],
      collect() {
        this.reset();
        for (const pool of informers.pools.list()) this.set({ pool: pool.metadata.name ?? '' }, count(pool.status ?? {}) ?? 0);
      },
    });
  }

  new Gauge({
    name: 'mco_state', help: 'state of a specified pool', labelNames: ['node', 'pool', 'state', 'reason'] as const, registers: [registry],
    collect() {
      this.reset();
      const pools = informers.pools.list();
      const { members } = poolMembership(pools, informers.nodes.list());
      for (const pool of pools) {
        const condition = latestTrueCondition(pool);
        if (!condition) continue;
        const name = pool.metadata.name ?? '';
        for (const n of members.get(name) ?? []) this.set({ node: n.metadata.name ?? '', pool: name, state: condition.type, reason: condition.reason }, condition.at);
      }
    },
  });

  return { registry, drainErr };
}
