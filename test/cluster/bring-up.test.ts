// `bosun start`'s bring-up: API server, signed releases, update service, CRDs and
// ClusterVersion/version, the machine-config server, operator and controller, the loopback service
// network (Network/cluster, the kubernetes Service, the cluster DNS address); a second start
// reuses everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { bringUp } from '../../src/cluster/bring-up.js';
import { localClusterOptions } from '../helpers/local-cluster.js';
import { runKubectl } from '../helpers/apiserver.js';
import { get as httpsGet } from 'node:https';

/** GET over TLS trusting only `ca`. */
function getTls(url: string, ca: string, accept: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpsGet(url, { ca, headers: { accept } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}


test('bring-up gives a ClusterVersion naming a signed release from the update service', async () => {
  const lines: string[] = [];
  const options = localClusterOptions({ progress: (line: string) => lines.push(line) });
  const dataDir = options.dataDir;
  let cluster: Awaited<ReturnType<typeof bringUp>> | undefined;
  try {
    cluster = await bringUp(options);
    assert.deepEqual(lines.filter((l) => l.startsWith('[')).map((l) => l.slice(0, 5)), ['[1/7]', '[2/7]', '[3/7]', '[4/7]', '[5/7]', '[6/7]', '[7/7]']);
    const cv = JSON.parse((await runKubectl(cluster.kubeconfigPath, ['get', 'clusterversion', 'version', '-o', 'json'])).stdout);
    const target = cluster.releases.find((r) => r.version === '1.0.0')!;
    assert.equal(cv.spec.desiredUpdate.image, target.pullspec);
    assert.equal(cv.spec.channel, 'stable-1.0');
    assert.equal(cv.spec.upstream, `${cluster.updateService.url}/api/upgrades_info/v1/graph`);
    // No node runs Prometheus or the console here: both are left out (unmanaged), and nothing waits for them.
    assert.deepEqual(cv.spec.overrides.map((o: { kind: string; name: string; unmanaged: boolean }) => `${o.kind}/${o.name}=${o.unmanaged}`), ['Deployment/cluster-monitoring-operator=true', 'ClusterOperator/monitoring=true', 'Deployment/console=true', 'ClusterOperator/console=true',
      'Deployment/olm-operator=true', 'Deployment/catalog-operator=true', 'Deployment/package-server=true',
      'ClusterOperator/operator-lifecycle-manager=true', 'ClusterOperator/operator-lifecycle-manager-catalog=true', 'ClusterOperator/operator-lifecycle-manager-packageserver=true',
      'APIService/v1.packages.operators.coreos.com=true']);
    const table = await runKubectl(cluster.kubeconfigPath, ['get', 'clusterversion']);
    assert.match(table.stdout, /^NAME\s+VERSION\s+AVAILABLE\s+PROGRESSING\s+SINCE\s+STATUS\nversion\s+1\.0\.0\s+True\s+False\s+\S+\s+Cluster version is 1\.0\.0/);
    assert.ok(lines.some((l) => /Working towards 1\.0\.0: \d+ of \d+ done/.test(l)), 'progress was shown');
    // The machine-config component: Available at the release, pools rendered, served over TLS
    // with a certificate from the cluster CA.
    assert.match((await runKubectl(cluster.kubeconfigPath, ['get', 'co', 'monitoring'])).stderr, /NotFound/);
    const co = await runKubectl(cluster.kubeconfigPath, ['get', 'co', 'machine-config']);
    assert.match(co.stdout, /^machine-config\s+1\.0\.0\s+True\s+False\s+False\s+/m);
    // Without machines Cluster API has no provider; the bring-up reports it (no pod would).
    const capi = await runKubectl(cluster.kubeconfigPath, ['get', 'co', 'cluster-api', '-o', 'json']);
    const capiStatus = JSON.parse(capi.stdout).status;
    assert.deepEqual(capiStatus.versions, [{ name: 'operator', version: '1.0.0' }]);
    assert.equal(capiStatus.conditions.find((x: { type: string }) => x.type === 'Available').reason, 'UnsupportedPlatform');
    const pools = await runKubectl(cluster.kubeconfigPath, ['get', 'mcp']);
    assert.match(pools.stdout, /^master\s+rendered-master-[0-9a-f]+\s+/m);
    assert.match(pools.stdout, /^worker\s+rendered-worker-[0-9a-f]+\s+/m);
    const served = await getTls(`https://127.0.0.1:${cluster.machineConfigServer!.port('tls')}/config/worker`, cluster.api.caPem, 'application/vnd.coreos.ignition+json;version=3.2.0');
    assert.equal(served.status, 200);
    assert.ok(JSON.parse(served.body).storage.files.some((f: { path: string }) => f.path === '/etc/kubernetes/kubelet.conf'), 'the worker config has the kubelet configuration');
    const plain = await fetch(`http://127.0.0.1:${cluster.machineConfigServer!.port('http')}/config/master`, { headers: { accept: 'application/vnd.coreos.ignition+json;version=3.4.0' } });
    assert.equal(plain.status, 200);
    assert.equal(((await plain.json()) as { ignition: { version: string } }).ignition.version, '3.4.0');
    const userData = JSON.parse(Buffer.from((await runKubectl(cluster.kubeconfigPath, ['get', 'secret', 'worker-user-data', '-n', 'openshift-machine-api', '-o', 'jsonpath={.data.userData}'])).stdout, 'base64').toString());
    assert.deepEqual(userData.ignition.config.merge, [{ source: `https://127.0.0.1:${cluster.machineConfigServer!.port('tls')}/config/worker` }]);
    // The loopback service network: the API server's range, Network/cluster, the kubernetes
    // Service and the kubelet's cluster DNS address derived from it.
    const kubectlJson = async (args: string[]) => JSON.parse((await runKubectl(cluster!.kubeconfigPath, [...args, '-o', 'json'])).stdout);
    const network = await kubectlJson(['get', 'network.config.openshift.io', 'cluster']);
    assert.deepEqual([network.spec.serviceNetwork, network.status.serviceNetwork], [['127.30.0.0/16'], ['127.30.0.0/16']]);
    assert.equal((await kubectlJson(['get', 'service', 'kubernetes', '-n', 'default'])).spec.clusterIP, '127.30.0.1');
    assert.equal((await kubectlJson(['get', 'controllerconfig', 'machine-config-controller'])).spec.clusterDNSIP, '127.30.0.10');
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
    assert.ok(lines.some((l) => /\d+ CRDs \(0 new\)/.test(l)), lines.join('\n'));
    assert.match((await runKubectl(cluster.kubeconfigPath, ['get', 'co', 'machine-config'])).stdout, /^machine-config\s+1\.0\.0\s+True/m);
  } finally {
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
