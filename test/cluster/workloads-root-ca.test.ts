// The root CA publisher against the embedded API server: kube-root-ca.crt with the API server's CA
// in every namespace, new ones included, restored when edited or deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadKubeConfig } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { CONFIG_MAPS, NAMESPACES } from '../../src/cluster/workloads/resources.js';
import { eventually } from '../helpers/eventually.js';
import { startWorkloadTestServer } from './workloads/stand-ins.js';

test('kube-root-ca.crt is published in every namespace and kept as published', async () => {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  try {
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['root-ca-cert-publisher'], leaderElection: false });
    const published = (ns: string) => eventually(`kube-root-ca.crt in ${ns}`, async () => {
      const cm = await client.read(CONFIG_MAPS, 'kube-root-ca.crt', ns);
      return cm?.data?.['ca.crt'] === api.caPem && cm;
    });
    for (const ns of ['default', 'kube-system', 'kube-public']) await published(ns);
    await client.create(NAMESPACES, { metadata: { name: 'team-a' } });
    const cm = await published('team-a');
    assert.match(cm.metadata.annotations!['kubernetes.io/description'], /^Contains a CA bundle that can be used to verify the kube-apiserver/);
    assert.deepEqual(Object.keys(cm.data!), ['ca.crt']);
    await client.mergePatch(CONFIG_MAPS, 'kube-root-ca.crt', 'team-a', { data: { 'ca.crt': 'tampered', extra: 'x' } });
    await eventually('restored after an edit', async () => {
      const c = await client.get(CONFIG_MAPS, 'kube-root-ca.crt', 'team-a');
      return c.data!['ca.crt'] === api.caPem && !c.data!.extra;
    });
    await client.delete(CONFIG_MAPS, 'kube-root-ca.crt', 'team-a');
    await published('team-a');
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await api.stop();
  }
});
