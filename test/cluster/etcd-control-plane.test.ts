// test: shared-addresses (restarts etcd members on the ports they had: in a namespace of its own no other file's connection can take one as its ephemeral port meanwhile)
// `bosun start --etcd`'s control plane: a 3-member etcd (TLS with client certificates) and two API
// servers behind one address, which the kubernetes Service's endpoints name; kubectl through the
// front reaches both, the second (a process of its own) killed is restarted while the first
// serves, and a second start from the same data directory finds everything again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcdControlPlane } from '../../src/cluster/etcd-control-plane.js';
import { startEtcdCluster } from '../../src/cluster/etcd-cluster.js';
import { openEtcdStorage } from '../../src/apiserver/storage/etcd.js';
import { runKubectl } from '../helpers/apiserver.js';
import { skipWithoutEtcd } from '../helpers/etcd.js';
import { eventually } from '../helpers/eventually.js';
import { scrape } from '../helpers/metrics.js';

test('two API servers on a TLS etcd behind one address; restart from the same data directory', { skip: skipWithoutEtcd, timeout: 60_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-etcd-cp-'));
  try {
    let plane = await startEtcdControlPlane({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
    try {
      const kubectl = (args: string[]) => runKubectl(plane.server.kubeconfigPath, args);
      const created = await kubectl(['create', 'configmap', 'through-front', '--from-literal=a=b']);
      assert.equal(created.code, 0, created.stderr);
      // Connections are handed out in turn: several requests reach both servers (the second, a
      // process of its own, counts them in its metrics).
      let first = 0;
      plane.first.server.onCompleted(() => first++);
      for (let i = 0; i < 4; i++) assert.equal((await kubectl(['get', 'configmap', 'through-front', '-o', 'name'])).code, 0);
      const second = plane.processes[0];
      const configMapGets = async () => {
        const metrics = (await scrape(second.listen, { ca: plane.server.caPem, token: plane.server.token })).text;
        return [...metrics.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+)/gm)].filter((m) => m[1].includes('resource="configmaps"') && m[1].includes('verb="GET"')).reduce((sum, m) => sum + Number(m[2]), 0);
      };
      assert.ok(first > 0 && (await configMapGets()) > 0, `requests: ${first} to the first server, ${await configMapGets()} configmap GETs to the second`);
      // Every etcd client URL is https, and the servers present a client certificate to it.
      assert.ok(plane.etcd.client.endpoints.every((u) => u.startsWith('https://')) && plane.etcd.client.certFile);
      // Without a client certificate etcd does not let a client in.
      await assert.rejects(openEtcdStorage({ endpoints: plane.etcd.client.endpoints, caFile: plane.etcd.client.caFile, callTimeoutMs: 1_000 }), /cannot reach etcd/);
      // The kubernetes Service's endpoint is the front, which both servers advertise.
      const endpoint = await kubectl(['get', 'endpointslice', 'kubernetes', '-o', 'jsonpath={.endpoints[0].addresses[0]}:{.ports[0].port}']);
      assert.equal(endpoint.stdout, `127.0.0.1:${plane.server.port}`);
      // The second API server's process killed: the front hands connections to the first, and
      // the process is started again on its port.
      const pid = second.pid()!;
      process.kill(pid, 'SIGKILL');
      const after = await kubectl(['get', 'configmap', 'through-front', '-o', 'jsonpath={.data.a}']);
      assert.equal(after.code, 0, after.stderr);
      assert.equal(after.stdout, 'b');
      await eventually('the killed API server restarted and serving', async () => second.restarts === 1 && second.pid() !== pid && (await scrape(second.listen, { ca: plane.server.caPem, token: plane.server.token, path: '/readyz' })).text === 'ok', 30_000);
    } finally {
      await plane.stop();
    }
    plane = await startEtcdControlPlane({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
    try {
      const again = await runKubectl(plane.server.kubeconfigPath, ['get', 'configmap', 'through-front', '-o', 'jsonpath={.data.a}']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, 'b');
    } finally {
      await plane.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a member left running by a killed bosun is stopped before a new start on its data directory', { skip: skipWithoutEtcd, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-etcd-left-'));
  // The first cluster's process "dies" without stopping its member: the object is simply dropped.
  const orphaned = await startEtcdCluster(join(dir, 'etcd'), { members: 1, fastElections: true });
  const [leftPid] = orphaned.pids();
  let again: Awaited<ReturnType<typeof startEtcdCluster>> | undefined;
  try {
    again = await startEtcdCluster(join(dir, 'etcd'), { members: 1, fastElections: true });
    assert.notEqual(again.pids()[0], leftPid);
    assert.throws(() => process.kill(leftPid!, 0), 'the member left running is gone');
    const storage = await openEtcdStorage({ endpoints: again.client.endpoints, callTimeoutMs: 5_000 });
    await storage.close();
  } finally {
    await again?.stop();
    await orphaned.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
