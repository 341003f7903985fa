// An update on an installed cluster (test: shared-addresses — machines on 127.0.1.N, api-int on
// 127.0.100.1): the CVO pod's process killed is restarted by its node agent, and killed again in
// the middle of an update to 1.0.1 the update goes on; the operators' pods roll to the new release.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readlinkSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { eventually } from '../helpers/eventually.js';
import { installCluster, OPERATOR_NAMESPACES, type InstalledCluster } from '../helpers/installed-cluster.js';
import type { Obj } from '../../src/kube/client.js';

let c: InstalledCluster;
const kubectl = (args: string[]) => c.kubectl(args);
const json = (args: string[]) => c.json(args);

before(async () => {
  // Masters only: the update rolls every node (drain, reboot) onto the release's configs.
  c = await installCluster(0);
});

after(async () => {
  await c?.destroy();
});

test("killing the CVO pod's process: the node agent restarts it, and an update to 1.0.1 rolls the operators' pods", async () => {
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
  const target = c.cluster.releases.find((r) => r.version === '1.0.1')!;
  await kubectl(['patch', 'clusterversion', 'version', '--type', 'merge', '-p', JSON.stringify({ spec: { desiredUpdate: { version: '1.0.1', image: target.pullspec } } })]);
  // Killed again while the update is under way, once the CVO itself runs 1.0.1 (killing a pod
  // that is being replaced would leave its Lease to expire first, as on any cluster): the
  // restarted container takes its Lease back and the update goes on.
  const updated = await eventually('the CVO pod at 1.0.1, running', async () => {
    const p = await cvoPod();
    return /:1\.0\.1$/.test(p?.spec.containers[0].image) && p.status.containerStatuses?.[0]?.ready && p;
  }, 120_000);
  process.kill(await eventually('its process', () => findPid(updated.metadata.uid), 30_000), 'SIGKILL');
  await eventually('ClusterVersion 1.0.1 completed', async () => {
    const cv = await json(['get', 'clusterversion', 'version']);
    return cv.status.history?.[0]?.version === '1.0.1' && cv.status.history[0].state === 'Completed';
  }, 300_000);
  for (const ns of OPERATOR_NAMESPACES) {
    const deployments = (await json(['get', 'deployments', '-n', ns])).items as Obj[];
    for (const d of deployments) assert.match(d.spec.template.spec.containers[0].image, /:1\.0\.1$/, `${ns}/${d.metadata.name} runs 1.0.1`);
  }
  await eventually('every operator pod replaced and running', async () => {
    const pods = (await Promise.all(OPERATOR_NAMESPACES.map((ns) => json(['get', 'pods', '-n', ns])))).flatMap((l) => l.items as Obj[]);
    return pods.length > 0 && pods.every((p) => !before.has(p.metadata.uid) && p.status.phase === 'Running');
  }, 120_000);
});

/** The pid of the container process of the pod with this UID (it runs in the pod's directory). */
function findPid(podUid: string): number | undefined {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const cwd = (pid: number) => { try { return readlinkSync(`/proc/${pid}/cwd`); } catch { return ''; } };
  const pids = out.split('\n').filter((l) => l.includes('bosun.js cluster-version-operator')).map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter((pid) => cwd(pid).startsWith(c.options.dataDir) && cwd(pid).includes(`/pods/${podUid}/`));
  return pids.length === 1 ? pids[0] : undefined;
}
