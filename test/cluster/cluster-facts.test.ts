// The installer's facts about the cluster: the Infrastructure's topologies follow the install's
// size as OpenShift's installer derives them (one master: a SingleReplica control plane, whose
// operators — the cloud-controller-manager's among them — then run one replica), written to the
// embedded API server's Infrastructure/cluster status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { topologies, writeClusterFacts } from '../../src/cluster/install/cluster-facts.js';
import { KubeClient, loadKubeConfig, resources } from '../../src/kube/index.js';

const ROOT = join(import.meta.dirname, '../..');

test('topologies follow the masters and workers as the installer counts them', () => {
  const rows: Array<[number, number, string, string]> = [
    [1, 0, 'SingleReplica', 'SingleReplica'],
    [1, 1, 'SingleReplica', 'SingleReplica'],
    [1, 2, 'SingleReplica', 'HighlyAvailable'],
    [3, 0, 'HighlyAvailable', 'HighlyAvailable'],
    [3, 1, 'HighlyAvailable', 'SingleReplica'],
    [3, 2, 'HighlyAvailable', 'HighlyAvailable'],
  ];
  for (const [masters, workers, controlPlaneTopology, infrastructureTopology] of rows) {
    assert.deepEqual(topologies({ masters, workers }), { controlPlaneTopology, infrastructureTopology }, `${masters} masters, ${workers} workers`);
  }
});

test('a one-master install writes a SingleReplica Infrastructure', async () => {
  const api = await startTestApiServer();
  try {
    const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    // The payload's CRDs, as the installer applies them before its facts.
    const dir = join(ROOT, 'release-payload/manifests');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.crd.yaml'))) {
      for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) await client.create(resources.customResourceDefinitions, doc.toJS());
    }
    await eventually('the facts written (CRDs established)', () => writeClusterFacts(client, { caPem: api.caPem, apiUrl: api.url, apiInternalUrl: api.url, serviceNetwork: '127.30.0.0/16', size: { masters: 1, workers: 0 } }).then(() => true));
    const infrastructure = await client.get(resources.infrastructures, 'cluster');
    assert.equal(infrastructure.status?.controlPlaneTopology, 'SingleReplica');
    assert.equal(infrastructure.status?.infrastructureTopology, 'SingleReplica');
  } finally {
    await api.stop();
  }
});
