// The CronJob controller against the embedded API server, on a FakeClock (time moves when the test
// says, the controller's requeues with it): a run at each scheduled time, its Job named after the
// scheduled minute with kube's annotation and owner, once however often the controller looks;
// finished Jobs leave status.active and set lastSuccessfulTime; missed runs made up once, or
// not at all past startingDeadlineSeconds; Forbid and Replace; history limits; suspend; a time
// zone. Jobs' outcomes are written by the test (no Job controller runs here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { FakeClock } from '../../src/kube/clock.js';
import { loadKubeConfig, type KubeClient } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { CRON_JOBS, JOBS } from '../../src/cluster/workloads/resources.js';
import { SCHEDULED_TIMESTAMP } from '../../src/cluster/workloads/cronjob.js';
import { dueRun } from '../../src/cluster/workloads/cronjob.js';
import { parseSchedule } from '../../src/common/cron-schedule.js';
import { eventually } from '../helpers/eventually.js';
import { startWorkloadTestServer } from './workloads/stand-ins.js';
import type { TestApiServer } from '../helpers/apiserver.js';

const MINUTE = 60_000;

const cronJob = (name: string, spec: Partial<NonNullable<api.CronJob['spec']>>): api.CronJob => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name, namespace: 'default' },
  spec: {
    schedule: '*/5 * * * *',
    jobTemplate: { metadata: { labels: { team: 'night' }, annotations: { note: 'from the template' } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'task:1' }] } } } },
    ...spec,
  },
});

/**
 * An API server and the controller on a FakeClock set a little after the last five-minute
 * boundary (no scheduled time between a CronJob's creation, on the server's real clock, and the
 * controller's now), for one test.
 */
async function withCluster(fn: (c: { api: TestApiServer; client: KubeClient; clock: FakeClock }) => Promise<void>): Promise<void> {
  const { api, client } = await startWorkloadTestServer();
  const clock = new FakeClock(Math.floor(Date.now() / (5 * MINUTE)) * 5 * MINUTE + 10_000);
  const abort = new AbortController();
  const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: abort.signal, controllers: ['cronjob'], leaderElection: false, clock });
  try {
    await fn({ api, client, clock });
  } finally {
    abort.abort();
    await running;
    await api.stop();
  }
}

const jobsOf = async (client: KubeClient, name: string): Promise<api.Job[]> =>
  (await client.list(JOBS, 'default')).items.filter((j) => j.metadata.ownerReferences?.[0]?.name === name).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

async function finish(client: KubeClient, job: api.Job, as: 'Complete' | 'Failed', at: number): Promise<void> {
  const time = new Date(at).toISOString().replace(/\.\d+Z$/, 'Z');
  const current = await client.get(JOBS, job.metadata.name, 'default');
  const conditions = as === 'Complete'
    ? [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }]
    : [{ type: 'FailureTarget', status: 'True' }, { type: 'Failed', status: 'True' }];
  await client.update(JOBS, { ...current, status: { ...current.status, startTime: time, ...(as === 'Complete' ? { completionTime: time, succeeded: 1 } : { failed: 1 }), conditions } }, 'status');
}

/** Waits until `check` stops throwing, and returns what it returns. */
const settles = <T>(what: string, check: () => Promise<T>): Promise<T> => eventually(what, async () => ({ value: await check() })).then((r) => r.value);

async function reasons(api: TestApiServer, name: string): Promise<string[]> {
  const events = (await api.request('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`)).json.items;
  return events.map((e: any) => e.reason);
}

test('a CronJob runs its Job at each scheduled time, once, and follows it to completion', () => withCluster(async ({ api, client, clock }) => {
  const created = await client.create(CRON_JOBS, cronJob('every-five', {}));
  // Looked at before the first scheduled time: nothing runs.
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(await jobsOf(client, 'every-five'), []);

  clock.advance(5 * MINUTE);
  const scheduled = Math.floor(clock.now() / (5 * MINUTE)) * 5 * MINUTE;
  const [job] = await settles('the first run\'s Job', async () => {
    const jobs = await jobsOf(client, 'every-five');
    assert.equal(jobs.length, 1);
    return jobs;
  });
  assert.equal(job.metadata.name, `every-five-${scheduled / MINUTE}`, 'named after the scheduled minute');
  assert.deepEqual(job.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'every-five', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.equal(job.metadata.labels?.team, 'night');
  assert.equal(job.metadata.annotations?.note, 'from the template');
  assert.equal(job.metadata.annotations?.[SCHEDULED_TIMESTAMP], new Date(scheduled).toISOString().replace('.000Z', 'Z'));
  assert.deepEqual(job.spec?.template.spec?.containers.map((c) => c.image), ['task:1']);
  const cj = await settles('the run in status.active', async () => {
    const c = await client.get(CRON_JOBS, 'every-five', 'default');
    assert.equal(c.status?.active?.length, 1);
    return c;
  });
  assert.equal(cj.status!.active![0].name, job.metadata.name);
  assert.equal(cj.status!.lastScheduleTime, new Date(scheduled).toISOString().replace('.000Z', 'Z'));
  assert.match((await api.kubectl(['get', 'cronjob', 'every-five'])).stdout, /^every-five\s+\*\/5 \* \* \* \*\s+<none>\s+False\s+1\s+\S+\s+\S+\n?$/m);

  // Looked at again within the same interval: no second Job.
  clock.advance(MINUTE);
  await client.mergePatch(CRON_JOBS, 'every-five', 'default', { metadata: { labels: { touched: 'yes' } } });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await jobsOf(client, 'every-five')).length, 1);

  await finish(client, job, 'Complete', clock.now());
  const done = await settles('the finished run out of status.active', async () => {
    const c = await client.get(CRON_JOBS, 'every-five', 'default');
    assert.equal(c.status?.active, undefined);
    assert.ok(c.status?.lastSuccessfulTime);
    return c;
  });
  assert.equal(Date.parse(done.status!.lastSuccessfulTime!), Math.floor(clock.now() / 1000) * 1000);
  await settles('the create and completion events', async () => assert.deepEqual((await reasons(api, 'every-five')).sort(), ['SawCompletedJob', 'SuccessfulCreate']));

  // The next time comes: the next run.
  clock.advance(5 * MINUTE);
  await settles('the next run', async () => assert.equal((await jobsOf(client, 'every-five')).length, 2));
}));

test('runs missed while nobody looked are made up once (the latest); past startingDeadlineSeconds, not at all', () => withCluster(async ({ api, client, clock }) => {
  await client.create(CRON_JOBS, cronJob('every-minute', { schedule: '* * * * *', suspend: true }));
  await client.create(CRON_JOBS, cronJob('with-deadline', { schedule: '0 * * * *', startingDeadlineSeconds: 30, suspend: true }));
  await client.create(CRON_JOBS, cronJob('within-deadline', { schedule: '0 * * * *', startingDeadlineSeconds: 60, suspend: true }));
  await new Promise((r) => setTimeout(r, 300));
  // Three hours pass while suspended: nothing runs.
  clock.advance(3 * 60 * MINUTE);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(await jobsOf(client, 'every-minute'), []);
  // Resumed 45 s after the hour: the minute schedule makes up its latest run only; the hourly
  // one, 45 s late with a 30 s deadline, misses it.
  clock.advance(Math.ceil(clock.now() / (60 * MINUTE)) * 60 * MINUTE + 45_000 - clock.now());
  await client.mergePatch(CRON_JOBS, 'every-minute', 'default', { spec: { suspend: false } });
  await client.mergePatch(CRON_JOBS, 'with-deadline', 'default', { spec: { suspend: false } });
  await client.mergePatch(CRON_JOBS, 'within-deadline', 'default', { spec: { suspend: false } });
  const jobs = await settles('the one made-up run', async () => {
    const list = await jobsOf(client, 'every-minute');
    assert.equal(list.length, 1);
    return list;
  });
  assert.equal(jobs[0].metadata.name, `every-minute-${Math.floor(clock.now() / MINUTE)}`, 'the latest missed minute');
  // The hourly run 45 s ago: within a 60 s deadline it is made up, past a 30 s one it is not.
  await settles('the run made up within its deadline', async () => assert.deepEqual((await jobsOf(client, 'within-deadline')).map((j) => j.metadata.name), [`within-deadline-${Math.floor(clock.now() / (60 * MINUTE)) * 60}`]));
  assert.deepEqual(await jobsOf(client, 'with-deadline'), []);
  await settles('the TooManyMissedTimes warning', async () => assert.ok((await reasons(api, 'every-minute')).includes('TooManyMissedTimes'), 'more than 100 runs were missed'));
}));

test('Forbid skips a run while one is active; Replace deletes the active one for the new run', () => withCluster(async ({ api, client, clock }) => {
  await client.create(CRON_JOBS, cronJob('forbid', { concurrencyPolicy: 'Forbid' }));
  await client.create(CRON_JOBS, cronJob('replace', { concurrencyPolicy: 'Replace' }));
  clock.advance(5 * MINUTE);
  const [first] = await settles('the first runs', async () => {
    const f = await jobsOf(client, 'forbid');
    assert.equal(f.length, 1);
    assert.equal((await jobsOf(client, 'replace')).length, 1);
    await settles('the Replace run in status.active', async () => assert.equal((await client.get(CRON_JOBS, 'replace', 'default')).status?.active?.length, 1));
    return f;
  });
  const replaced = (await jobsOf(client, 'replace'))[0];
  clock.advance(5 * MINUTE);
  await settles('the replacing run', async () => {
    const r = await jobsOf(client, 'replace');
    assert.equal(r.filter((j) => !j.metadata.deletionTimestamp).length, 1);
    assert.notEqual(r.find((j) => !j.metadata.deletionTimestamp)!.metadata.name, replaced.metadata.name);
  });
  await settles('the JobAlreadyActive event', async () => assert.ok((await reasons(api, 'forbid')).includes('JobAlreadyActive')));
  assert.deepEqual((await jobsOf(client, 'forbid')).map((j) => j.metadata.name), [first.metadata.name], 'no second run while the first is active');
  assert.ok((await reasons(api, 'replace')).includes('SuccessfulDelete'));
}));

test('beyond the history limits the oldest finished Jobs are deleted', () => withCluster(async ({ client, clock }) => {
  await client.create(CRON_JOBS, cronJob('history', { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 0 }));
  const finished: string[] = [];
  for (const outcome of ['Complete', 'Failed', 'Complete'] as const) {
    clock.advance(5 * MINUTE);
    const job = await settles('the next run\'s Job', async () => {
      const j = (await jobsOf(client, 'history')).find((x) => !finished.includes(x.metadata.name));
      assert.ok(j);
      return j;
    });
    await settles('the run in status.active', async () => assert.equal((await client.get(CRON_JOBS, 'history', 'default')).status?.active?.[0]?.name, job.metadata.name));
    await finish(client, job, outcome, clock.now());
    finished.push(job.metadata.name);
    await settles('the finished run out of status.active', async () => assert.equal((await client.get(CRON_JOBS, 'history', 'default')).status?.active, undefined));
  }
  // Kept: the newer Complete one only (one successful, no failed).
  await settles('the history trimmed', async () => assert.deepEqual((await jobsOf(client, 'history')).filter((j) => !j.metadata.deletionTimestamp).map((j) => j.metadata.name), [finished[2]]));
}));

test('a schedule in a time zone: the run at 09:00 in Tokyo, its Job annotated in that zone', () => withCluster(async ({ client, clock }) => {
  await client.create(CRON_JOBS, cronJob('tokyo', { schedule: '0 9 * * *', timeZone: 'Asia/Tokyo' }));
  const nine = parseSchedule('0 9 * * *', { timeZone: 'Asia/Tokyo' }).next(clock.now());
  assert.equal(new Date(nine).getUTCHours(), 0, '09:00 in Tokyo is 00:00 UTC');
  clock.advance(nine - clock.now() + 1000);
  const [job] = await settles('the Tokyo run', async () => {
    const jobs = await jobsOf(client, 'tokyo');
    assert.equal(jobs.length, 1);
    return jobs;
  });
  assert.match(job.metadata.annotations![SCHEDULED_TIMESTAMP], /^\d{4}-\d\d-\d\dT09:00:00\+09:00$/);
}));

test('dueRun counts the runs missed by their interval and picks the latest', () => {
  const created = Date.UTC(2026, 10, 28, 10, 0, 30);
  const cj = { ...cronJob('x', { schedule: '*/5 * * * *' }), metadata: { name: 'x', creationTimestamp: new Date(created).toISOString() } } as api.CronJob;
  const schedule = parseSchedule('*/5 * * * *', { timeZone: 'UTC' });
  assert.deepEqual(dueRun(cj, schedule, created + 4 * MINUTE), { missed: 0 });
  assert.deepEqual(dueRun(cj, schedule, created + 5 * MINUTE), { time: Date.UTC(2026, 10, 28, 10, 5), missed: 1 });
  assert.deepEqual(dueRun(cj, schedule, Date.UTC(2026, 10, 28, 11, 2)), { time: Date.UTC(2026, 10, 28, 11, 0), missed: 12 });
  const late = { ...cj, spec: { ...cj.spec!, startingDeadlineSeconds: 60 } };
  assert.deepEqual(dueRun(late, schedule, Date.UTC(2026, 10, 28, 11, 2)), { missed: 0 }, 'nothing within the last 60 s');
});
