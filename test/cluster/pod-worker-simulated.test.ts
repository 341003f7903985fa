// Simulated containers (any image but bosun.local's): Running and Ready at once, except a Job's,
// which complete at once with exit code 0 so that the pod Succeeds (kwok's pod-complete stage) —
// before, a Job of such an image never completed and a CronJob's pods piled up. On a machine's
// node agent (PodWorker) and in scale mode's simulated nodes alike.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as api from '../../src/api/index.js';
import { PodWorker } from '../../src/cluster/node-agent/pod-worker.js';
import { podStatus } from '../../src/cluster/node-agent/pod-status.js';
import { ownedByJob } from '../../src/cluster/node-agent/pod-spec.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { podWorkerContext, TEST_NODE_IP } from '../helpers/pod-worker.js';
import { eventually } from '../helpers/eventually.js';

let apiServer: TestApiServer;
const root = mkdtempSync(join(tmpdir(), 'bosun-pod-worker-'));
before(async () => {
  apiServer = await startTestApiServer();
});
after(async () => {
  await apiServer?.stop();
  rmSync(root, { recursive: true, force: true });
});

const JOB_OWNER = { apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: '9e0c3d1a-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true };

function simulatedPod(name: string, uid: string, restartPolicy: string, owner?: typeof JOB_OWNER): api.Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: { automountServiceAccountToken: false, restartPolicy, containers: [{ name: 'main', image: 'registry.example/perl:5.40', command: ['perl', '-e', 'print 1'] }] },
  };
}

async function run(pod: api.Pod): Promise<{ worker: PodWorker; phase: string }> {
  const worker = new PodWorker(pod, '127.1.9.3', podWorkerContext(apiServer, new KubeClient(loadKubeConfig(apiServer.kubeconfigPath)), root, ['true']));
  worker.start();
  await eventually('the container started or finished', () => Boolean(worker.records[0]?.state.running || worker.records[0]?.state.terminated), 20_000);
  const phase = podStatus(worker.pod, worker.records, { podIP: worker.podIP, hostIP: TEST_NODE_IP, startTime: worker.startTime }, new Date().toISOString(), worker.inits).phase!;
  await worker.stop(0);
  return { worker, phase };
}

test('a Job\'s simulated container completes with exit code 0 and its pod Succeeds; any other pod\'s runs', { timeout: 60_000 }, async () => {
  const job = await run(simulatedPod('pi-x7k2p', '9e0c3d1a-0000-4000-8000-000000000002', 'Never', JOB_OWNER));
  assert.equal(job.phase, 'Succeeded');
  assert.deepEqual({ exitCode: job.worker.records[0].state.terminated?.exitCode, reason: job.worker.records[0].state.terminated?.reason }, { exitCode: 0, reason: 'Completed' });
  const bare = await run(simulatedPod('once', '9e0c3d1a-0000-4000-8000-000000000003', 'Never'));
  assert.equal(bare.phase, 'Running', 'a bare pod with restartPolicy Never runs, as kwok leaves it');
  assert.ok(bare.worker.records[0].state.running);
});

test('what counts as a Job\'s pod: a controller reference to a batch Job', () => {
  assert.equal(ownedByJob(simulatedPod('a', 'u', 'Never', JOB_OWNER)), true);
  assert.equal(ownedByJob(simulatedPod('b', 'u', 'Never', { ...JOB_OWNER, controller: false })), false);
  assert.equal(ownedByJob(simulatedPod('c', 'u', 'Never', { ...JOB_OWNER, apiVersion: 'example.io/v1' })), false);
  assert.equal(ownedByJob(simulatedPod('d', 'u', 'Never')), false);
});
