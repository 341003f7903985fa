// npm run bench:disruption [-- --seed N] [-- --sqlite] — disruption through upgrades, as OpenShift's
// CI measures it on every upgrade: a local cluster as `bosun start --etcd` makes it (3 masters, 2
// workers, the operators as pods, a 3-member etcd and two API servers behind the `api` address, the
// second a process of its own; --sqlite: one API server on SQLite, as `bosun start`) with an echo
// workload behind a LoadBalancer Service is upgraded twice with `bosun adm upgrade --to V --wait`
// — 1.0.0 → 1.0.1 clean, then 1.0.1 → 1.0.2 with seeded faults injected while it runs (an operator
// pod's process SIGKILLed, an API server's process SIGKILLed, a worker's instance terminated, a
// machine rebooted while it is drained, the cloud's API restarted; at most one of each, all within
// the first two minutes) — while another
// process polls the API through the `api` address and the Service through the cloud's balancer,
// each over a new connection per request and over one reused keep-alive connection, and writes
// through the API. For each upgrade: the seconds each backend did not answer (an error, or no
// answer within 15 s; beside it, the seconds counting answers slower than 3 s too), writes
// acknowledged and lost, the upgrade's duration, and how long the cluster's host process and the
// observer were held up (a starved machine shows as slowness, not as outages). Goals (issue 25): 0 s of API disruption on a clean
// upgrade, under 5 s with faults, nothing acknowledged lost.
// Binds what `bosun start` binds (127.0.100.1, 127.0.0.1:22623/22624, machines on 127.0.1.N): run
// it in a network namespace of its own when anything else may hold those
// (`unshare --net sh -c 'ip link set lo up && exec npm run bench:disruption'`).
import { spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { setLogLevel } from '../src/common/log.js';
import { installCluster } from '../test/helpers/installed-cluster.js';
import { disruptionOf } from '../test/helpers/disruption/monitor.js';
import { FAULT_KINDS } from '../test/helpers/disruption/faults.js';
import { WORKLOAD_NAMESPACE, deployWorkload, observedUpgrade, upgradeOutcome, type UpgradeRun } from '../test/helpers/disruption/scenario.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/kubeconfig.js';
import { resources } from '../src/kube/resources.js';

const args = process.argv.slice(2);
const seedAt = args.indexOf('--seed');
const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : 25;
const sqlite = args.includes('--sqlite');
if (!Number.isInteger(seed)) throw new Error('usage: npm run bench:disruption [-- --seed N] [-- --sqlite]');
setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'error');
const root = fileURLToPath(new URL('..', import.meta.url));
if (spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' }).status !== 0) process.exit(1);

const installStarted = Date.now();
const c = await installCluster(2, { etcd: !sqlite, installTimeoutMs: 900_000 });
let failed = false;
try {
  console.log(`installed 3 masters and 2 workers (${sqlite ? 'one API server on SQLite' : 'a 3-member etcd and two API servers behind the api address'}) in ${((Date.now() - installStarted) / 1000).toFixed(1)} s`);
  const kube = new KubeClient(loadKubeConfig(c.cluster.kubeconfigPath));
  const workload = await deployWorkload(c);
  console.log(`echo workload behind ${workload.serviceUrl}`);
  const runs: Array<{ label: string; run: UpgradeRun }> = [];
  for (const [label, to, faults] of [
    ['clean', '1.0.1', undefined],
    ['faults', '1.0.2', { seed, kinds: FAULT_KINDS, windowMs: 120_000 }],
  ] as const) {
    const pods = (await kube.list(resources.pods, WORKLOAD_NAMESPACE)).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => `${p.metadata?.name} on ${p.spec?.nodeName}`);
    console.log(`\nupgrade to ${to} (${label})${faults ? `, seed ${seed}` : ''}; echo pods: ${pods.join(', ')}`);
    // The cluster's host process (API server, balancers, cloud) runs here: how long its event loop was held up.
    const delay = monitorEventLoopDelay({ resolution: 20 });
    delay.enable();
    const run = await observedUpgrade(c, workload, to, faults);
    delay.disable();
    runs.push({ label, run });
    const outcome = await upgradeOutcome(c, to);
    for (const f of run.faults) console.log(`  fault at ${(f.atMs / 1000).toFixed(1).padStart(5)} s: ${f.kind}: ${f.detail}`);
    console.log(`  bosun adm upgrade exited ${run.code} after ${run.seconds.toFixed(1)} s; history: ${outcome.history.version} ${outcome.history.state}; nodes behind: ${outcome.nodesBehind.length}/${outcome.nodes}`);
    console.log(`  event loop held up: the cluster's host process at most ${(delay.max / 1e6).toFixed(0)} ms (p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms); the observer's at most ${run.observerMaxLagMs} ms; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    for (const d of run.disruption) for (const o of d.slowOrDown) console.log(`  ${d.backend} (${d.mode}): ${((o.to - o.from) / 1000).toFixed(1)} s from ${new Date(o.from).toISOString().slice(11, 23)}: ${o.error}`);
    if (run.code !== 0 || outcome.history.state !== 'Completed' || outcome.nodesBehind.length || run.writes.lost) {
      failed = true;
      console.log(`  NOT CLEAN: ${run.output.trim().split('\n').slice(-3).join(' | ')}${outcome.nodesBehind.length ? `; ${outcome.nodesBehind.join('; ')}` : ''}`);
    }
  }
  const fmt = (s: number) => `${s.toFixed(1)} s`;
  console.log('\nseconds of disruption: no answer within 15 s or an error (in brackets: counting answers slower than 3 s too)');
  console.log(`upgrade          duration          API new       API reused      Service new   Service reused   writes acknowledged   lost`);
  for (const { label, run } of runs) {
    const d = (b: string, m: 'new' | 'reused') => { const x = disruptionOf(run.disruption, b, m); return `${x.seconds.toFixed(1)} (${x.slowOrDownSeconds.toFixed(1)})`; };
    console.log(`${`${label} (${run.to})`.padEnd(15)} ${fmt(run.seconds).padStart(9)} ${d('kube-api', 'new').padStart(16)} ${d('kube-api', 'reused').padStart(16)} ${d('service-lb', 'new').padStart(16)} ${d('service-lb', 'reused').padStart(16)} ${String(run.writes.acknowledged).padStart(21)} ${String(run.writes.lost).padStart(6)}`);
  }
  const api = (label: string) => { const r = runs.find((x) => x.label === label)!.run; return Math.max(disruptionOf(r.disruption, 'kube-api', 'new').seconds, disruptionOf(r.disruption, 'kube-api', 'reused').seconds); };
  console.log(`\ngoals: API disruption 0 s on a clean upgrade: ${api('clean') === 0 ? 'met' : `missed (${fmt(api('clean'))})`}; under 5 s with faults: ${api('faults') < 5 ? 'met' : `missed (${fmt(api('faults'))})`}; nothing acknowledged lost: ${runs.every((r) => r.run.writes.lost === 0) ? 'met' : 'missed'}`);
} finally {
  await c.destroy();
}
process.exit(failed ? 1 : 0);
