// Watches are held outside the connection pool the other requests share: a process running many
// informers on one set of credentials (the controller manager, a test's whole control plane) still
// gets its requests answered. Each client shares one keep-alive pool per cluster and credentials
// (32 sockets); 40 watches used to take all of them and queue every request behind them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { KubeClient } from '../../src/kube/client.js';
import { InformerFactory } from '../../src/kube/informer.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';

test('40 informers on one kubeconfig leave its requests a connection', async () => {
  const server = await startTestApiServer();
  const kubeconfig = loadKubeConfig(server.kubeconfigPath);
  const client = new KubeClient(kubeconfig);
  const factory = new InformerFactory(client);
  const stop = new AbortController();
  try {
    for (let i = 0; i < 40; i++) factory.forResource(resources.configMaps, { namespace: `ns-${i}` });
    factory.start(stop.signal);
    await factory.waitForSync();
    // Every watch is open now; a request on the same kubeconfig (a new client shares the pool) still goes through.
    const answered = await Promise.race([
      new KubeClient(kubeconfig).create(resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'through', namespace: 'default' } } as api.ConfigMap).then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
    ]);
    assert.equal(answered, true, 'the request was answered while 40 watches were open');
  } finally {
    stop.abort();
    await factory.stop();
    await server.stop();
  }
});
