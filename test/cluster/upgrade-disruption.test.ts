// test: shared-addresses, test: e2e, test: timeout 2400 (npm run test:e2e; minutes on its own cluster)
// An upgrade under seeded faults on an installed local cluster as `bosun start --etcd` makes it (3
// masters, 2 workers, a 3-member etcd and two API servers behind the `api` address; machines on
// 127.0.1.N, api-int on 127.0.100.1): an echo workload behind a LoadBalancer Service, then
// `bosun adm upgrade --to 1.0.1 --wait` while another process polls the API through the `api`
// address and the Service through the cloud's balancer (new and reused connections) and writes
// through the API, and faults are injected from a seed (BOSUN_FAULT_SEED, default 25): an
// operator pod's process SIGKILLed, an API server's process SIGKILLed, a worker's instance
// terminated, a machine rebooted while it is drained, the cloud's API restarted. The upgrade completes, the ClusterVersion's history says
// Completed, every node is Done on its pool's config rendered from 1.0.1, and every write the API
// server acknowledged is there. The disruption seconds are printed (npm run bench:disruption
// measures them against the goals); that the monitor measures a real outage is
// test/disruption/monitor.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { installCluster, type InstalledCluster } from '../helpers/installed-cluster.js';
import { describe } from '../helpers/disruption/monitor.js';
import { FAULT_KINDS } from '../helpers/disruption/faults.js';
import { deployWorkload, observedUpgrade, upgradeOutcome } from '../helpers/disruption/scenario.js';
import { eventually } from '../helpers/eventually.js';

let c: InstalledCluster;
const seed = Number(process.env.BOSUN_FAULT_SEED ?? 25);

before(async () => {
  c = await installCluster(2, { etcd: true, installTimeoutMs: 900_000 });
});

after(async () => {
  await c?.destroy();
});

test(`bosun adm upgrade --to 1.0.1 with seeded faults (seed ${seed}) completes: history Completed, every node on its new config, no acknowledged write lost`, { timeout: 1_500_000 }, async (t) => {
  const workload = await deployWorkload(c);
  const run = await observedUpgrade(c, workload, '1.0.1', { seed, kinds: FAULT_KINDS, windowMs: 90_000 }, 1_200);
  for (const f of run.faults) t.diagnostic(`fault at ${(f.atMs / 1000).toFixed(1)} s: ${f.kind}: ${f.detail}`);
  for (const line of describe(run.disruption)) t.diagnostic(line);
  t.diagnostic(`upgrade ${run.seconds.toFixed(1)} s; writes acknowledged ${run.writes.acknowledged}, unacknowledged ${run.writes.unacknowledged}, lost ${run.writes.lost}`);
  assert.equal(run.code, 0, `bosun adm upgrade --to 1.0.1 --wait:\n${run.output}`);
  // Every fault was injected: each has a target on this cluster (every node is drained on its way to its new config).
  for (const kind of FAULT_KINDS) {
    const f = run.faults.find((x) => x.kind === kind);
    assert.ok(f?.injected, `${kind}: ${f?.detail ?? 'not planned'}`);
  }
  const outcome = await upgradeOutcome(c, '1.0.1');
  assert.deepEqual(outcome.history, { version: '1.0.1', state: 'Completed' });
  // Every node that was there is Done on its new config. The terminated worker's replacement may
  // join after the upgrade has completed (its MachineHealthCheck waits out the node's grace first),
  // and may have registered before its daemon has said which config it runs: it comes, on the new config.
  assert.deepEqual(outcome.nodesBehind.filter((line) => !outcome.joining.some((name) => line.startsWith(`${name}: `))), [], 'every node Done on its pool\'s config rendered from 1.0.1');
  let last = outcome;
  await eventually('the terminated worker\'s replacement to join on the new config (5 nodes, none behind)', async () => {
    last = await upgradeOutcome(c, '1.0.1');
    return last.nodes === 5 && last.nodesBehind.length === 0;
  }, { timeoutMs: 300_000, intervalMs: 2_000, detail: () => JSON.stringify(last) });
  assert.ok(run.writes.acknowledged > 100, `writes acknowledged: ${run.writes.acknowledged}`);
  assert.deepEqual({ lost: run.writes.lost, missing: run.writes.missing }, { lost: 0, missing: [] });
});
