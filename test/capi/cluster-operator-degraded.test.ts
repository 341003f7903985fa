// ClusterOperator/cluster-api and degraded-on-error: while one of the Cluster API controllers keeps
// failing (a key failing `after` times in a row) the report says Degraded=True with the failure,
// written at once; once the key syncs again it says Degraded=False — through the status
// controller of src/capi/cluster-operator.ts and the operator-status library.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { clusterApiStatus, clusterOperatorController, CLUSTER_OPERATOR } from '../../src/capi/cluster-operator.js';
import { capiContext } from '../../src/capi/context.js';
import { Controller, Manager, findCondition, loadKubeConfig, resources } from '../../src/kube/index.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

const CO_CRD = fileURLToPath(new URL('../../manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml', import.meta.url));

test('a Cluster API controller that keeps failing makes ClusterOperator/cluster-api Degraded until its key syncs again', async () => {
  const api = await startTestApiServer();
  const manager = new Manager({ name: 'cluster-api-controllers', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  try {
    await manager.client.create(resources.customResourceDefinitions, parse(readFileSync(CO_CRD, 'utf8')));
    await eventually('ClusterOperators served', () => manager.client.list(resources.clusterOperators).then(() => true, () => false), 10_000);
    const ctx = capiContext(manager);
    const status = clusterApiStatus(ctx);
    let broken = true;
    const failing = new Controller({
      name: 'machine-controller',
      keys: ['openshift-cluster-api/worker-0'],
      queue: { baseDelayMs: 20, maxDelayMs: 100 },
      sync: () => {
        if (broken) throw new Error('the instance cannot be created');
      },
    });
    failing.reportTo(status.degradedOnError(failing.name, { after: 3, message: (e) => `${failing.name}: ${e.message}` }));
    manager.add(failing, clusterOperatorController(ctx, { version: '1.0.0', noProvider: true }, status));
    running = manager.start(stop.signal);
    const co = () => manager.client.read(resources.clusterOperators, CLUSTER_OPERATOR);
    const degraded = await eventually('Degraded=True from the failing controller', async () => {
      const c = findCondition((await co())?.status?.conditions, 'Degraded');
      return c?.status === 'True' ? c : undefined;
    }, 15_000);
    assert.deepEqual([degraded.reason, degraded.message], ['SyncFailed', 'machine-controller: the instance cannot be created']);
    assert.ok(failing.queue.retries('openshift-cluster-api/worker-0') >= 3, 'not before the third failure in a row');
    assert.equal(findCondition((await co())?.status?.conditions, 'Available')?.reason, 'CustomResourceDefinitionsMissing', 'the rest of the report stands (no Cluster API CRDs here)');
    broken = false;
    await eventually('Degraded=False once the key syncs', async () => findCondition((await co())?.status?.conditions, 'Degraded')?.status === 'False', 15_000);
  } finally {
    stop.abort();
    await running?.catch(() => undefined);
    await api.stop();
  }
});
