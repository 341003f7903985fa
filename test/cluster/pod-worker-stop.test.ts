// A pod stopped while its container's environment is being read from the API (a ConfigMap the env
// refers to, the request slow under load): no process is started for it afterwards, and its stop
// ends. Before, the read's answer started the process after the stop, and the worker then waited
// for that process's exit forever — holding the node agent's, the machine's, the cluster's stop.
// The embedded API server answers; the one fault is the read of the ConfigMap, held until the
// stop has been asked for.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as api from '../../src/api/index.js';
import { PodWorker } from '../../src/cluster/node-agent/pod-worker.js';
import { KubeClient, type ResourceRef } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources as R } from '../../src/kube/resources.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { podWorkerContext } from '../helpers/pod-worker.js';
import { eventually } from '../helpers/eventually.js';

/** The API, but a read of a ConfigMap waits for `release()` once `held` says it was asked. */
class HeldConfigMapReads extends KubeClient {
  asked = false;
  private opened!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));
  release(): void {
    this.opened();
  }
  override async get<T>(ref: ResourceRef<T>, name: string, namespace?: string): Promise<T> {
    if (ref.resource === 'configmaps') {
      this.asked = true;
      await this.gate;
    }
    return super.get(ref, name, namespace);
  }
}

let apiServer: TestApiServer;
const root = mkdtempSync(join(tmpdir(), 'bosun-pod-worker-'));
before(async () => {
  apiServer = await startTestApiServer();
});
after(async () => {
  await apiServer?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('a pod stopped while its environment is read starts no process, and its stop ends', { timeout: 60_000 }, async () => {
  const client = new HeldConfigMapReads(loadKubeConfig(apiServer.kubeconfigPath));
  await client.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'greeting', namespace: 'default' }, data: { text: 'hello' } });
  const pod: api.Pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: '4c1f8a52-0000-4000-8000-000000000001' },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'web', image: 'bosun.local/echo', env: [{ name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'greeting', key: 'text' } } }] }],
    },
  };
  // The echo container's process, were it started: one that runs until it is stopped.
  const worker = new PodWorker(pod, '127.1.9.2', podWorkerContext(apiServer, client, root, ['sleep', '600']));
  worker.start();
  await eventually('the container environment being read', () => client.asked, 20_000);
  const stopped = worker.stop(1000);
  client.release();
  await stopped;
  assert.equal(worker.pids.size, 0, 'no process started for the stopped pod');
  assert.equal(existsSync(worker.logFile('web', worker.records[0].restartCount)), false, 'no container log written');
  assert.equal(worker.records[0].state.running, undefined, 'the container never ran');
});
