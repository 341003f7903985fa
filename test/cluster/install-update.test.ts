// An update on an installed cluster (test: shared-addresses — machines on 127.0.1.N, api-int on
// 127.0.100.1): the CVO pod's process killed is restarted by its node agent; then
// `bosun adm upgrade --to 1.0.1 --wait` — with the CVO's process killed again in the middle —
// rolls the operators' pods to the new release and every node onto the configs the new release's
// templates render (each drained, its file written, rebooted), while `bosun adm upgrade status`
// shows the nodes going through, and returns once the ClusterVersion is Completed. An add-on
// operator installed through OLM before the update keeps running and reconciling through it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { eventually } from '../helpers/eventually.js';
import { runBosun } from '../helpers/cli.js';
import { installCluster, OPERATOR_NAMESPACES, type InstalledCluster } from '../helpers/installed-cluster.js';
import type { Obj } from '../../src/kube/client.js';

let c: InstalledCluster;
const json = (args: string[]) => c.json(args);

before(async () => {
  // Masters only: the update rolls every node (drain, reboot) onto the release's configs.
  c = await installCluster(0);
});

after(async () => {
  await c?.destroy();
});

// An add-on installed from the default catalog before the update (issue #27): the greeter on the
// masters (this cluster has no workers; its Subscription's config tolerates the masters' taint).
const ADDON = 'olm-addon';
const greeting = (name: string, who: string) => JSON.stringify({ apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name, namespace: ADDON }, spec: { name: who } });
async function greeted(name: string, text: string): Promise<void> {
  await eventually(`Greeting ${name} reconciled`, async () => { const g = await json(['get', 'greeting', name, '-n', ADDON]); return g.status?.phase === 'Ready' && g.status.text === text; }, { timeoutMs: 90_000, intervalMs: 1000 });
}

test('an add-on before the update: the greeter subscribed from bosun-operators, its CSV Succeeded, its operator pod reconciling a Greeting', async () => {
  await c.kubectl(['create', 'namespace', ADDON]);
  const objects = [
    { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: ADDON, namespace: ADDON }, spec: { targetNamespaces: [ADDON] } },
    { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'greeter', namespace: ADDON }, spec: { name: 'greeter', channel: 'stable', source: 'bosun-operators', sourceNamespace: 'openshift-marketplace', config: { tolerations: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' }] } } },
  ];
  const { runKubectl } = await import('../helpers/apiserver.js');
  const applied = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }), timeoutMs: 30_000 });
  assert.equal(applied.code, 0, applied.stderr);
  await eventually('CSV greeter.v1.0.0 Succeeded', async () => (await json(['get', 'csv', 'greeter.v1.0.0', '-n', ADDON])).status?.phase === 'Succeeded', { timeoutMs: 180_000, intervalMs: 1000 });
  const created = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: greeting('before', 'before'), timeoutMs: 30_000 });
  assert.equal(created.code, 0, created.stderr);
  await greeted('before', 'Hello, before!');
});

test("killing the CVO pod's process: the node agent restarts it; bosun adm upgrade --to 1.0.1 --wait rolls the operators' pods and every node onto 1.0.1's configs, the status showing them", async (t) => {
  const cvoPod = async () => ((await json(['get', 'pods', '-n', 'openshift-cluster-version'])).items as Obj[]).find((p) => !p.metadata.deletionTimestamp)!;
  // The install is done when the ClusterVersion is Available; on a loaded machine the pod may
  // still be starting its container then (no containerStatuses yet).
  const pod = await eventually('the CVO pod running', async () => {
    const p = await cvoPod();
    return p?.status?.containerStatuses?.[0]?.ready && p;
  }, 120_000);
  const restarts = pod.status.containerStatuses[0].restartCount;
  const pid = await eventually('its process', () => findPid(pod.metadata.uid), 30_000);
  process.kill(pid, 'SIGKILL');
  await eventually('the CVO container restarted', async () => {
    const p = await cvoPod();
    return p.metadata.uid === pod.metadata.uid && p.status.containerStatuses[0].restartCount > restarts && p.status.containerStatuses[0].ready;
  }, 60_000);

  const before = new Set(OPERATOR_NAMESPACES.length ? ((await Promise.all(OPERATOR_NAMESPACES.map((ns) => json(['get', 'pods', '-n', ns])))).flatMap((l) => l.items as Obj[]).map((p) => p.metadata.uid)) : []);
  const nodesBefore = ((await json(['get', 'nodes'])).items as Obj[]);
  const bootIdsBefore = new Map(nodesBefore.map((n) => [n.metadata.name, n.status.nodeInfo.bootID]));
  const renderedBefore = (await json(['get', 'mcp', 'master'])).spec.configuration.name;
  // The install ends on the configs the bootstrap rendered, as OpenShift's does: one rendered
  // config per pool (the in-cluster controller rendered the same), every master booted from it.
  const renderedAtInstall = ((await json(['get', 'mc'])).items as Obj[]).map((m) => m.metadata.name as string).filter((n) => n.startsWith('rendered-'));
  assert.deepEqual(renderedAtInstall.filter((n) => n.startsWith('rendered-master-')), [renderedBefore], 'one rendered master config: nothing re-rendered after the bootstrap');
  assert.equal(renderedAtInstall.filter((n) => n.startsWith('rendered-worker-')).length, 1);
  for (const n of nodesBefore) assert.equal(n.metadata.annotations['machineconfiguration.openshift.io/currentConfig'], renderedBefore, `${n.metadata.name} on the install's rendered config`);

  const kubeconfig = ['--kubeconfig', c.cluster.kubeconfigPath];
  const upgrade = runBosun(['adm', 'upgrade', '--to', '1.0.1', '--wait', '--timeout', '420', ...kubeconfig], { timeoutMs: 450_000 });
  let finished = false;
  void upgrade.finally(() => { finished = true; });
  // `bosun adm upgrade status` while it runs, plain and with the nodes' details, as an
  // administrator would look.
  const samples: string[] = [];
  const sampling = (async () => {
    for (let i = 0; !finished; i++) {
      const r = await runBosun(['adm', 'upgrade', 'status', ...(i % 2 ? ['--details=nodes'] : []), ...kubeconfig], { timeoutMs: 30_000 });
      if (r.code === 0) samples.push(r.stdout);
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();
  // Killed again while the update is under way, once the CVO itself runs 1.0.1 (killing a pod
  // that is being replaced would leave its Lease to expire first, as on any cluster): the
  // restarted container takes its Lease back and the update goes on.
  const updated = await eventually('the CVO pod at 1.0.1, running', async () => {
    const p = await cvoPod();
    return /:1\.0\.1$/.test(p?.spec.containers[0].image) && p.status.containerStatuses?.[0]?.ready && p;
  }, 240_000);
  process.kill(await eventually('its process', () => findPid(updated.metadata.uid), 30_000), 'SIGKILL');
  const result = await upgrade;
  await sampling;
  assert.equal(result.code, 0, `bosun adm upgrade --to 1.0.1 --wait: ${result.stdout}\n${result.stderr}`);
  const cv = await json(['get', 'clusterversion', 'version']);
  assert.equal(cv.status.history[0].version, '1.0.1');
  assert.equal(cv.status.history[0].state, 'Completed');

  // Every node on the configs rendered from 1.0.1's templates: the file on every machine's root,
  // each node rebooted into it.
  const pool = await json(['get', 'mcp', 'master']);
  const rendered = pool.spec.configuration.name;
  assert.notEqual(rendered, renderedBefore, 'the new release rendered a new config');
  assert.equal((await json(['get', 'mc', rendered])).metadata.annotations['machineconfiguration.openshift.io/release-image-version'], '1.0.1');
  assert.equal(pool.status.updatedMachineCount, 3);
  for (const n of (await json(['get', 'nodes'])).items as Obj[]) {
    const a = n.metadata.annotations;
    assert.equal(a['machineconfiguration.openshift.io/currentConfig'], rendered, n.metadata.name);
    assert.equal(a['machineconfiguration.openshift.io/state'], 'Done', n.metadata.name);
    assert.notEqual(n.status.nodeInfo.bootID, bootIdsBefore.get(n.metadata.name), `${n.metadata.name} rebooted`);
    assert.ok(!n.spec.unschedulable, `${n.metadata.name} uncordoned`);
  }
  const machines = join(c.options.dataDir, 'machines');
  const roots = readdirSync(machines).map((id) => join(machines, id, 'root'));
  assert.equal(roots.length, 3);
  for (const root of roots) assert.match(readFileSync(join(root, 'etc/bosun-release'), 'utf8'), /^VERSION=1\.0\.1$/m, root);

  // What the status showed on the way: the update in progress with its completion, and with
  // --details=nodes a master going through (draining, updating or rebooting) while another waited.
  assert.ok(samples.length >= 3, `status sampled ${samples.length} times`);
  const progressing = samples.filter((o) => /^Assessment:\s+Progressing$/m.test(o));
  assert.ok(progressing.length > 0, `a sample showed the update Progressing:\n${samples.join('\n---\n')}`);
  for (const o of progressing) {
    assert.match(o, /^Target Version:\s+1\.0\.1 \(from 1\.0\.0\)$/m);
    assert.match(o, /^Completion:\s+\d+% /m);
  }
  const rows = (o: string) => {
    const at = o.indexOf('Control Plane Nodes');
    if (at < 0) return [];
    return o.slice(at).split('\n').slice(2).filter((l) => /^bosun-local-master-\d/.test(l)).map((l) => l.split(/\s{2,}/));
  };
  const moving = samples.filter((o) => rows(o).some(([, , phase]) => /^(Draining|Updating|Rebooting)$/.test(phase)) && rows(o).some(([, assessment, phase]) => assessment === 'Outdated' && phase === 'Pending'));
  assert.ok(moving.length > 0, `a sample showed one master updating while another was pending:\n${samples.join('\n---\n')}`);
  t.diagnostic(`status samples: ${samples.length}; one with a master going through:\n${moving[0]}`);
  const phases = new Set(samples.flatMap(rows).map(([, , phase]) => phase));
  assert.ok(phases.has('Pending') && [...phases].some((p) => /^(Draining|Updating|Rebooting)$/.test(p)), `phases seen: ${[...phases].join(', ')}`);

  for (const ns of OPERATOR_NAMESPACES) {
    const deployments = (await json(['get', 'deployments', '-n', ns])).items as Obj[];
    for (const d of deployments) assert.match(d.spec.template.spec.containers[0].image, /:1\.0\.1$/, `${ns}/${d.metadata.name} runs 1.0.1`);
  }
  await eventually('every operator pod replaced and running', async () => {
    const pods = (await Promise.all(OPERATOR_NAMESPACES.map((ns) => json(['get', 'pods', '-n', ns])))).flatMap((l) => l.items as Obj[]);
    return pods.length > 0 && pods.every((p) => !before.has(p.metadata.uid) && p.status.phase === 'Running');
  }, 120_000);
});

test('the add-on after the update: still Succeeded and reconciling, OLM\'s ClusterOperators at 1.0.1', async () => {
  for (const co of ['operator-lifecycle-manager', 'operator-lifecycle-manager-catalog', 'operator-lifecycle-manager-packageserver']) {
    const status = (await json(['get', 'co', co])).status;
    assert.equal(status.versions?.[0]?.version, '1.0.1', `${co} at 1.0.1`);
  }
  assert.equal((await json(['get', 'csv', 'greeter.v1.0.0', '-n', ADDON])).status.phase, 'Succeeded');
  const { runKubectl } = await import('../helpers/apiserver.js');
  const created = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: greeting('after', 'after'), timeoutMs: 30_000 });
  assert.equal(created.code, 0, created.stderr);
  await greeted('after', 'Hello, after!');
  const pods = (await json(['get', 'pods', '-n', ADDON, '-l', 'name=greeter-operator'])).items as Obj[];
  assert.ok(pods.some((p) => p.status.phase === 'Running'), 'the operator pod running');
});

/** The pid of the container process of the pod with this UID (it runs in the pod's directory). */
function findPid(podUid: string): number | undefined {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const cwd = (pid: number) => { try { return readlinkSync(`/proc/${pid}/cwd`); } catch { return ''; } };
  const pids = out.split('\n').filter((l) => l.includes('bosun.js cluster-version-operator')).map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter((pid) => cwd(pid).startsWith(c.options.dataDir) && cwd(pid).includes(`/pods/${podUid}/`));
  return pids.length === 1 ? pids[0] : undefined;
}
