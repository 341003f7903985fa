// Ratcheting, as kube ratchets a CRD's schema: an update is refused only for a problem it brings,
// not for one the stored object already has. Objects an earlier bosun accepted and today's checks
// refuse — a Job whose template restarts Always, a CronJob whose Job template has a selector and a
// negative back-off limit, a Deployment that recreates with rolling parameters, a Service with an
// unknown traffic policy — are written straight into the store while the server is stopped; after a
// restart each can still be labelled and have its status written, and a change that brings a
// problem of its own is still refused, naming only that one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { openSqliteStorage } from '../../src/apiserver/storage/sqlite.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api?.stop();
});

test('objects an earlier bosun stored, which today\'s checks refuse, can still be labelled and have their status written, but not be made worse', async () => {
  await api.kubectlOk(['create', 'job', 'old-always', '--image=busybox']);
  await api.kubectlOk(['create', 'cronjob', 'old-cron', '--image=busybox', '--schedule=0 2 * * *']);
  await api.kubectlOk(['create', 'deployment', 'old-deploy', '--image=busybox']);
  await api.kubectlOk(['create', 'service', 'clusterip', 'old-svc', '--tcp=80']);
  const dataDir = api.dataDir;
  await api.stop({ keepData: true });
  const storage = openSqliteStorage(join(dataDir, 'state.db'));
  const rewrite = async (key: string, change: (object: any) => void) => {
    const stored = storage.get(key)!;
    const object = structuredClone(stored.object);
    change(object);
    await storage.update(key, object, { expectedRevision: stored.revision });
  };
  await rewrite('/batch/jobs/default/old-always', (o) => (o.spec.template.spec.restartPolicy = 'Always'));
  // Accepted before: a Job template with a selector of its own and a negative back-off limit.
  await rewrite('/batch/cronjobs/default/old-cron', (o) => Object.assign(o.spec.jobTemplate.spec, { selector: { matchLabels: { app: 'x' } }, backoffLimit: -1 }));
  await rewrite('/apps/deployments/default/old-deploy', (o) => (o.spec.strategy = { type: 'Recreate', rollingUpdate: { maxSurge: 1 } }));
  await rewrite('/core/services/default/old-svc', (o) => (o.spec.internalTrafficPolicy = 'Nearby'));
  await storage.close();
  api = await startTestApiServer({ dataDir });
  await api.kubectlOk(['label', 'job', 'old-always', 'tier=batch']);
  const labelled = JSON.parse(await api.kubectlOk(['get', 'job', 'old-always', '-o', 'json']));
  assert.equal(labelled.metadata.labels.tier, 'batch');
  assert.equal(labelled.spec.template.spec.restartPolicy, 'Always', 'its template as it was');
  // A change that brings a problem of its own is still refused.
  const r = await api.request('PATCH', '/apis/batch/v1/namespaces/default/jobs/old-always', { contentType: 'application/merge-patch+json', body: { spec: { backoffLimit: -3 } } });
  assert.equal(r.status, 422, r.text);
  assert.match(r.json.message, /spec\.backoffLimit: Invalid value: -3: must be greater than or equal to 0/);
  assert.doesNotMatch(r.json.message, /restartPolicy/, 'not for what it had already');
  // The CronJob: labelled, and its controller's status write goes through.
  await api.kubectlOk(['label', 'cronjob', 'old-cron', 'tier=batch']);
  const status = await api.request('PATCH', '/apis/batch/v1/namespaces/default/cronjobs/old-cron/status', { contentType: 'application/merge-patch+json', body: { status: { lastScheduleTime: '2026-11-29T02:00:00Z' } } });
  assert.equal(status.status, 200, status.text);
  const worse = await api.request('PATCH', '/apis/batch/v1/namespaces/default/cronjobs/old-cron', { contentType: 'application/merge-patch+json', body: { spec: { jobTemplate: { spec: { parallelism: -1 } } } } });
  assert.equal(worse.status, 422, worse.text);
  assert.match(worse.json.message, /spec\.jobTemplate\.spec\.parallelism: Invalid value: -1/);
  assert.doesNotMatch(worse.json.message, /backoffLimit|selector/, 'not for what it had already');
  // The Deployment: its controller's status write, and a label.
  const deployStatus = await api.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/old-deploy/status', { contentType: 'application/merge-patch+json', body: { status: { observedGeneration: 1 } } });
  assert.equal(deployStatus.status, 200, deployStatus.text);
  await api.kubectlOk(['label', 'deployment', 'old-deploy', 'tier=web']);
  const recreate = await api.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/old-deploy', { contentType: 'application/merge-patch+json', body: { spec: { replicas: -1 } } });
  assert.equal(recreate.status, 422, recreate.text);
  assert.match(recreate.json.message, /spec\.replicas: Invalid value: -1/);
  assert.doesNotMatch(recreate.json.message, /rollingUpdate/, 'not for what it had already');
  // The Service: a label, and a load balancer's status written.
  await api.kubectlOk(['label', 'service', 'old-svc', 'tier=web']);
  const svcStatus = await api.request('PATCH', '/api/v1/namespaces/default/services/old-svc/status', { contentType: 'application/merge-patch+json', body: { status: { loadBalancer: {} } } });
  assert.equal(svcStatus.status, 200, svcStatus.text);
});
