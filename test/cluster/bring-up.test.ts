// `bosun start`'s bring-up: API server, signed releases, update service, CRDs and
// ClusterVersion/version; a second start reuses everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { bringUp } from '../../src/cluster/bring-up.js';
import { localClusterOptions } from '../helpers/local-cluster.js';
import { runKubectl } from '../helpers/apiserver.js';


test('bring-up gives a ClusterVersion naming a signed release from the update service', async () => {
  const lines: string[] = [];
  const options = localClusterOptions({ progress: (line: string) => lines.push(line) });
  const dataDir = options.dataDir;
  let cluster: Awaited<ReturnType<typeof bringUp>> | undefined;
  try {
    cluster = await bringUp(options);
    assert.deepEqual(lines.filter((l) => l.startsWith('[')).map((l) => l.slice(0, 5)), ['[1/6]', '[2/6]', '[3/6]', '[4/6]', '[5/6]', '[6/6]']);
    const cv = JSON.parse((await runKubectl(cluster.kubeconfigPath, ['get', 'clusterversion', 'version', '-o', 'json'])).stdout);
    const target = cluster.releases.find((r) => r.version === '1.0.0')!;
    assert.equal(cv.spec.desiredUpdate.image, target.pullspec);
    assert.equal(cv.spec.channel, 'stable-1.0');
    assert.equal(cv.spec.upstream, `${cluster.updateService.url}/api/upgrades_info/v1/graph`);
    const table = await runKubectl(cluster.kubeconfigPath, ['get', 'clusterversion']);
    assert.match(table.stdout, /^NAME\s+VERSION\s+AVAILABLE\s+PROGRESSING\s+SINCE\s+STATUS\nversion\s+1\.0\.0\s+True\s+False\s+\S+\s+Cluster version is 1\.0\.0/);
    assert.ok(lines.some((l) => /Working towards 1\.0\.0: \d+ of \d+ done/.test(l)), 'progress was shown');
    const graph = await fetch(`${cluster.updateService.url}/api/upgrades_info/v1/graph?channel=stable-1.0`, { headers: { accept: 'application/json' } });
    const body = (await graph.json()) as { nodes: Array<{ version: string; payload: string }> };
    assert.ok(body.nodes.some((n) => n.version === '1.0.0' && n.payload === target.pullspec));
    const hex = target.pullspec.split('@sha256:')[1];
    const sig = await fetch(`${cluster.updateService.url}/signatures/sha256=${hex}/signature-1`);
    assert.equal(sig.status, 200);
    await cluster.stop();
    cluster = undefined;

    // Again on the same data: same releases, same ClusterVersion (not recreated).
    lines.length = 0;
    cluster = await bringUp(options);
    const again = JSON.parse((await runKubectl(cluster.kubeconfigPath, ['get', 'clusterversion', 'version', '-o', 'json'])).stdout);
    assert.equal(again.metadata.uid, cv.metadata.uid);
    assert.equal(cluster.releases.find((r) => r.version === '1.0.0')!.pullspec, target.pullspec);
    assert.ok(lines.some((l) => l.includes('6 CRDs (0 new)')));
  } finally {
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
