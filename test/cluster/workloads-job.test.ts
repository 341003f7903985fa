// The Job controller against the embedded API server with the scheduler/kubelet stand-ins (the
// kubelet stand-in also ends pods Succeeded or Failed, as containers exiting would): completions
// with at most `parallelism` pods at once and kube's SuccessCriteriaMet/Complete conditions
// (`kubectl wait --for=condition=complete` returns), pods released from the tracking finalizer
// once counted; failures replaced after back-off until backoffLimit, then FailureTarget/Failed
// BackoffLimitExceeded; activeDeadlineSeconds stops running pods with DeadlineExceeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { InformerFactory, loadKubeConfig } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { JOBS, PODS } from '../../src/cluster/workloads/resources.js';
import { eventually } from '../helpers/eventually.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { createNode, startStandIns, startWorkloadTestServer, type StandInOptions } from './workloads/stand-ins.js';
import type { KubeClient } from '../../src/kube/index.js';

const job = (name: string, spec: Partial<NonNullable<api.Job['spec']>> = {}, image = 'task:1'): api.Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image }] } }, ...spec },
});

async function withCluster(fn: (api: TestApiServer, client: KubeClient) => Promise<void>, standIn: StandInOptions): Promise<void> {
  const { api, client } = await startWorkloadTestServer();
  const stop = new AbortController();
  const standIns = startStandIns(client, standIn);
  try {
    await createNode(client, 'node-1');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['job'], leaderElection: false, job: { failureBackoff: { initialMs: 100, maxMs: 400 } } });
    await fn(api, client);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await standIns.stop();
    await api.stop();
  }
}

const conditionsOf = (j: api.Job) => Object.fromEntries((j.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason, c.message]]));

test('a Job runs its completions at most parallelism at a time and completes as kube reports it', async () => {
  await withCluster(async (api, client) => {
    const factory = new InformerFactory(client);
    const pods = factory.forResource(PODS, { namespace: 'default', labelSelector: 'job-name=sum' });
    let maxRunning = 0;
    pods.on(() => {
      maxRunning = Math.max(maxRunning, pods.list().filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length);
    });
    const stop = new AbortController();
    factory.start(stop.signal);
    await client.create(JOBS, job('sum', { completions: 5, parallelism: 2 }));
    const waited = await api.kubectl(['wait', '--for=condition=complete', 'job/sum', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(waited.code, 0, waited.stderr);
    stop.abort();
    await factory.stop();
    const j = await client.get(JOBS, 'sum', 'default');
    assert.deepEqual(conditionsOf(j), {
      SuccessCriteriaMet: ['True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
      Complete: ['True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
    });
    assert.equal(j.status!.succeeded, 5);
    assert.equal(j.status!.failed, undefined);
    assert.equal(j.status!.active, undefined);
    assert.deepEqual(j.status!.uncountedTerminatedPods, {});
    assert.ok(j.status!.startTime && j.status!.completionTime);
    assert.ok(maxRunning <= 2 && maxRunning > 0, `at most parallelism pods ran at once (saw ${maxRunning})`);
    const list = (await client.list(PODS, 'default', { labelSelector: 'job-name=sum' })).items;
    assert.equal(list.length, 5);
    for (const pod of list) {
      assert.equal(pod.status!.phase, 'Succeeded');
      assert.ok(!(pod.metadata.finalizers ?? []).includes('batch.kubernetes.io/job-tracking'), 'counted pods are released');
      assert.equal(pod.metadata.ownerReferences![0].kind, 'Job');
    }
    // Counted pods deleted afterwards do not change the count.
    await client.request('DELETE', '/api/v1/namespaces/default/pods', { query: { labelSelector: 'job-name=sum' } });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await client.get(JOBS, 'sum', 'default')).status!.succeeded, 5);
  }, { phase: () => 'Succeeded', readyAfterMs: 100 });
});

test('failed pods are replaced after back-off until backoffLimit, then the Job fails BackoffLimitExceeded', async () => {
  await withCluster(async (api, client) => {
    await client.create(JOBS, job('flaky', { backoffLimit: 2 }));
    const waited = await api.kubectl(['wait', '--for=condition=failed', 'job/flaky', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(waited.code, 0, waited.stderr);
    const j = await client.get(JOBS, 'flaky', 'default');
    assert.deepEqual(conditionsOf(j), {
      FailureTarget: ['True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
      Failed: ['True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
    });
    assert.equal(j.status!.failed, 3, 'backoffLimit 2: the third failure fails the Job');
    const list = ((await client.list(PODS, 'default', { labelSelector: 'job-name=flaky' })).items).sort((a, b) => a.metadata.creationTimestamp!.localeCompare(b.metadata.creationTimestamp!));
    assert.equal(list.length, 3, 'one pod per attempt');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(((await client.list(PODS, 'default', { labelSelector: 'job-name=flaky' })).items).length, 3, 'no attempt after failing');
  }, { phase: () => 'Failed', readyAfterMs: 50 });
});

test('activeDeadlineSeconds stops a Job that runs too long: DeadlineExceeded, its pods deleted', async () => {
  await withCluster(async (api, client) => {
    await client.create(JOBS, job('forever', { activeDeadlineSeconds: 1, parallelism: 2, completions: 2 }));
    const waited = await api.kubectl(['wait', '--for=condition=failed', 'job/forever', '--timeout=30s'], { timeoutMs: 40_000 });
    assert.equal(waited.code, 0, waited.stderr);
    const j = await client.get(JOBS, 'forever', 'default');
    assert.deepEqual(conditionsOf(j).Failed, ['True', 'DeadlineExceeded', 'Job was active longer than specified deadline']);
    await eventually('its pods gone', async () => ((await client.list(PODS, 'default', { labelSelector: 'job-name=forever' })).items).length === 0);
    assert.equal(j.status!.active, undefined);
  }, { phase: () => 'Running', readyAfterMs: 50 });
});
