// npm run bench:workload-cluster — Cluster API's quick start on `bosun start`'s cluster, timed:
// a fresh management cluster (3 masters, 2 workers unless told otherwise) is started as a user
// starts it; then `bosun cluster generate dev` (3 control-plane machines, 2 workers, the newest
// Kubernetes version bosun installs) is applied with kubectl, and the bench follows the workload
// cluster through its kubeconfig until every node is Ready, printing each node as it comes. It
// prints the time from `kubectl apply` to the workload API's first answer and to all nodes Ready
// (goal: under 2 minutes on 2 cores), the memory the workload cluster added to the whole process
// tree (RSS summed, measured before the apply and once it is Ready), and the time `kubectl delete
// cluster` takes to remove it. Bounded: gives up after 6 minutes.
// Usage: npm run bench:workload-cluster [-- CONTROL_PLANE WORKERS]. Binds what `bosun start` binds.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/common/listen.js';
import { rssMiB, start, stop, tree } from './lib/bosun-start.js';

const [controlPlane, workers] = [Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 2)];
const root = fileURLToPath(new URL('..', import.meta.url));
const GIVE_UP_MS = 6 * 60_000;
const GOAL_SECONDS = 120;

const run = (cmd: string, args: string[], input?: string) => spawnSync(cmd, args, { cwd: root, input, encoding: 'utf8', timeout: 120_000 });

const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-workload-'));
const ports = [await freePort(), await freePort(), await freePort()];
const kubeconfig = join(dataDir, 'kubeconfig');
const workloadKubeconfig = join(dataDir, 'dev.kubeconfig');
let child: Awaited<ReturnType<typeof start>>['child'] | undefined;
try {
  console.log('management cluster: bosun start (3 masters, 2 workers)');
  const up = await start(dataDir, ports, 3, 2);
  child = up.child;
  await new Promise((r) => setTimeout(r, 10_000));
  const before = rssMiB(tree(child.pid!));

  // The newest version bosun installs: the last row of `bosun cluster versions`.
  const versions = run(process.execPath, ['bin/bosun.js', 'cluster', 'versions']).stdout.trim().split('\n');
  const version = versions[versions.length - 1].split(/\s+/)[0];
  const generated = run(process.execPath, ['bin/bosun.js', 'cluster', 'generate', 'dev', '--kubernetes-version', version, '--control-plane-machine-count', String(controlPlane), '--worker-machine-count', String(workers)]);
  if (generated.status !== 0) throw new Error(`bosun cluster generate: ${generated.stderr}`);
  console.log(`workload cluster: kubectl apply of bosun cluster generate dev (Kubernetes ${version}, ${controlPlane} control-plane machines, ${workers} workers)`);
  const applied = Date.now();
  const apply = run('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], generated.stdout);
  if (apply.status !== 0) throw new Error(`kubectl apply: ${apply.stderr}`);

  const since = () => ((Date.now() - applied) / 1000).toFixed(1).padStart(6);
  let firstAnswer: number | undefined;
  const ready = new Set<string>();
  const want = controlPlane + workers;
  while (ready.size < want) {
    if (Date.now() - applied > GIVE_UP_MS) throw new Error(`gave up after ${GIVE_UP_MS / 60_000} minutes with ${ready.size} of ${want} nodes Ready`);
    await new Promise((r) => setTimeout(r, 1_000));
    const got = run(process.execPath, ['bin/bosun.js', 'cluster', 'get', 'kubeconfig', 'dev', `--kubeconfig=${kubeconfig}`]);
    if (got.status !== 0) continue;
    writeFileSync(workloadKubeconfig, got.stdout, { mode: 0o600 });
    const nodes = run('kubectl', ['--kubeconfig', workloadKubeconfig, 'get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}', '--request-timeout=5s']);
    if (nodes.status !== 0) continue;
    if (firstAnswer === undefined) {
      firstAnswer = (Date.now() - applied) / 1000;
      console.log(`  ${since()} s  the workload API answers through its load balancer`);
    }
    for (const line of nodes.stdout.split('\n').filter(Boolean)) {
      const [name, status] = line.split(' ');
      if (status === 'True' && !ready.has(name)) {
        ready.add(name);
        console.log(`  ${since()} s  node ${name} Ready (${ready.size}/${want})`);
      }
    }
  }
  const allReady = (Date.now() - applied) / 1000;
  await new Promise((r) => setTimeout(r, 5_000));
  const after = rssMiB(tree(child.pid!));

  const deleting = Date.now();
  const del = run('kubectl', ['--kubeconfig', kubeconfig, 'delete', 'cluster', 'dev', '--timeout=300s']);
  if (del.status !== 0) throw new Error(`kubectl delete cluster: ${del.stderr}`);
  const deleted = (Date.now() - deleting) / 1000;

  console.log(`\nfigure                                     value`);
  console.log(`apply to the workload API's first answer ${firstAnswer!.toFixed(1).padStart(8)} s`);
  console.log(`apply to all ${want} nodes Ready            ${allReady.toFixed(1).padStart(8)} s   goal ${GOAL_SECONDS} s: ${(allReady / GOAL_SECONDS).toFixed(2)}× of it`);
  console.log(`memory added by the workload cluster     ${(after - before).toFixed(0).padStart(8)} MiB (management cluster ${before.toFixed(0)} MiB, then ${after.toFixed(0)} MiB)`);
  console.log(`kubectl delete cluster dev               ${deleted.toFixed(1).padStart(8)} s`);
} finally {
  if (child) await stop(child);
  spawnSync(process.execPath, ['bin/bosun.js', 'destroy', '--data-dir', dataDir], { cwd: root, stdio: 'inherit' });
  rmSync(dataDir, { recursive: true, force: true });
}
