// test: shared-addresses, test: e2e (npm run test:e2e; minutes on its own cluster)
// Backup and restore of a whole installed cluster (issue #25's "done when"): a cluster installed
// as `bosun start` installs it (3 masters and a worker booting from Ignition, the operators as
// pods) runs a Deployment and holds a Secret; `bosun backup` copies it while it runs; then the
// cluster changes (a ConfigMap created, the Secret deleted), stops, and `bosun restore --force`
// brings its directory back to the backup (the machines' disks kept); started again, it serves
// the backup's objects at their resourceVersions, without what came after, and its machines and
// the Deployment's pods reconcile to it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bringUp } from '../../src/cluster/bring-up.js';
import type { Obj } from '../../src/kube/client.js';
import { runKubectl } from '../helpers/apiserver.js';
import { runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { installCluster, type InstalledCluster } from '../helpers/installed-cluster.js';

let c: InstalledCluster;
/** The backup file, written beside the cluster's data directory: removed with it. */
let backupFile: string | undefined;

before(async () => {
  c = await installCluster(1);
});

after(async () => {
  await c?.destroy();
  if (backupFile) rmSync(backupFile, { force: true });
});

const isReady = (n: Obj) => n.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True');

test('a running cluster backed up, changed, stopped and restored comes back as it was backed up, its machines and pods reconciled', async () => {
  const { dataDir } = c.options;
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'kept', namespace: 'default' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'kept' } }, template: { metadata: { labels: { app: 'kept' } }, spec: { containers: [{ name: 'web', image: 'bosun.local/echo' }] } } },
  };
  const applied = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: JSON.stringify(deployment) });
  assert.equal(applied.code, 0, applied.stderr);
  await c.kubectl(['create', 'secret', 'generic', 'kept', '--from-literal=password=s3cret']);
  const running = async () => ((await c.json(['get', 'pods', '-l', 'app=kept'])).items as Obj[]).filter((p) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp);
  await eventually('two pods of the Deployment running', async () => (await running()).length === 2, 120_000);
  const secret = await c.json(['get', 'secret', 'kept']);
  const nodes = ((await c.json(['get', 'nodes'])).items as Obj[]).map((n) => n.metadata.uid as string).sort();

  const file = (backupFile = join(dataDir, '..', `${dataDir.split('/').pop()}.backup`));
  const backup = await runBosun(['backup', '--data-dir', dataDir, '--to', file], { timeoutMs: 180_000 });
  assert.equal(backup.code, 0, backup.stderr);
  assert.match(backup.stdout, /\[2\/3\] copying the local cloud's store/);

  // After the backup: changes the restore must undo.
  await c.kubectl(['create', 'configmap', 'after-backup', '--from-literal=a=b']);
  await c.kubectl(['delete', 'secret', 'kept']);
  await c.cluster.stop();

  const refused = await runBosun(['restore', file, '--data-dir', dataDir]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is not empty .* give --force to replace its state \(its machines' disks, machines\/, are kept\)/);
  const restore = await runBosun(['restore', file, '--data-dir', dataDir, '--force']);
  assert.equal(restore.code, 0, restore.stderr);
  assert.match(restore.stdout, /replacing the state in .* \(keeping machines\/\)/);
  assert.match(restore.stdout, /restored \d+ files; 4 machine disks kept/);

  c.lines.length = 0;
  c.cluster = await bringUp(c.options);
  assert.equal(c.cluster.installed, false, 'brought back, not installed again');
  assert.ok(c.lines.some((l) => /bringing the installed cluster back/.test(l)), c.lines.join('\n'));

  const restored = await c.json(['get', 'secret', 'kept']);
  assert.equal(restored.metadata.uid, secret.metadata.uid, 'the Secret is back: the same object');
  assert.equal(restored.metadata.resourceVersion, secret.metadata.resourceVersion, 'at its resourceVersion');
  assert.deepEqual(restored.data, secret.data);
  const after = await runKubectl(c.cluster.kubeconfigPath, ['get', 'configmap', 'after-backup']);
  assert.notEqual(after.code, 0, 'what was created after the backup is gone');
  assert.match(after.stderr, /NotFound|not found/);
  const nodesNow = ((await c.json(['get', 'nodes'])).items as Obj[]);
  assert.deepEqual(nodesNow.map((n) => n.metadata.uid as string).sort(), nodes, 'the same nodes');
  assert.equal(nodesNow.filter(isReady).length, 4, 'every node Ready again');
  await eventually('the Deployment\'s two pods running again', async () => (await running()).length === 2, 180_000);
});
