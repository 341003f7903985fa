// CronJobs (batch/v1) as kube-apiserver serves them: kube's defaults, its validation (name length,
// a schedule robfig/cron reads, a known time zone and none in the schedule, policies and limits,
// a Job template whose pods end), and kubectl's columns.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const CJ = '/apis/batch/v1/namespaces/default/cronjobs';
let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const body = (name: string, spec: Record<string, unknown> = {}, restartPolicy = 'OnFailure') => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy, containers: [{ name: 'c', image: 'busybox' }] } } } }, ...spec },
});

test('a CronJob gets kube\'s defaults and a generation, and prints its columns', async () => {
  const r = await api.request('POST', CJ, { body: body('defaults') });
  assert.equal(r.status, 201, r.text);
  const { concurrencyPolicy, suspend, successfulJobsHistoryLimit, failedJobsHistoryLimit } = r.json.spec;
  assert.deepEqual({ concurrencyPolicy, suspend, successfulJobsHistoryLimit, failedJobsHistoryLimit }, { concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
  assert.equal(r.json.metadata.generation, 1);
  const changed = await api.request('PATCH', `${CJ}/defaults`, { contentType: 'application/merge-patch+json', body: { spec: { schedule: '@hourly' } } });
  assert.equal(changed.json.metadata.generation, 2);
  await api.request('POST', CJ, { body: body('tz', { schedule: '0 9 * * 1-5', timeZone: 'Europe/Berlin' }) });
  const table = await api.kubectl(['get', 'cronjobs', '-o', 'wide']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
  assert.match(table.stdout, /^defaults\s+@hourly\s+<none>\s+False\s+0\s+<none>\s+\S+\s+c\s+busybox\s+<none>$/m);
  assert.match(table.stdout, /^tz\s+0 9 \* \* 1-5\s+Europe\/Berlin\s+False\s+0\s+<none>/m);
  assert.match((await api.kubectl(['get', 'cj', 'tz', '-o', 'name'])).stdout, /^cronjob.batch\/tz$/m, 'the short name cj');
});

test('a CronJob that cannot run is refused, each problem named as kube names it', async () => {
  const cases: [string, Record<string, unknown>, RegExp, string?][] = [
    ['x'.repeat(53), {}, /metadata\.name: Invalid value: "x{53}": must be no more than 52 characters/],
    ['no-schedule', { schedule: '' }, /spec\.schedule: Required value/],
    ['bad-minute', { schedule: '61 * * * *' }, /spec\.schedule: Invalid value: "61 \* \* \* \*"/],
    ['four-fields', { schedule: '* * * *' }, /spec\.schedule: Invalid value: "\* \* \* \*": expected exactly 5 fields, found 4/],
    ['tz-inside', { schedule: 'TZ=UTC 0 * * * *' }, /cannot use TZ or CRON_TZ in schedule, use timeZone field instead/],
    ['mars', { timeZone: 'Mars/Olympus_Mons' }, /spec\.timeZone: Invalid value: "Mars\/Olympus_Mons": unknown time zone/],
    ['local', { timeZone: 'Local' }, /spec\.timeZone: Invalid value: "Local"/],
    ['policy', { concurrencyPolicy: 'Sometimes' }, /spec\.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"/],
    ['limits', { successfulJobsHistoryLimit: -1 }, /spec\.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0/],
    ['deadline', { startingDeadlineSeconds: -5 }, /spec\.startingDeadlineSeconds: Invalid value: -5/],
    // kube 1.33 says Required for Always (the default a template without one gets) and Unsupported for the rest.
    ['always', {}, /spec\.jobTemplate\.spec\.template\.spec\.restartPolicy: Required value: valid values: "OnFailure", "Never"/, 'Always'],
    ['sometimes', {}, /spec\.jobTemplate\.spec\.template\.spec\.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"/, 'Sometimes'],
    ['own-selector', { jobTemplate: { spec: { selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } }, /spec\.jobTemplate\.spec\.selector: Invalid value: .*`selector` will be auto-generated/],
    ['manual', { jobTemplate: { spec: { manualSelector: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } }, /spec\.jobTemplate\.spec\.manualSelector: Unsupported value: true: supported values: "nil", "false"/],
    ['job-limits', { jobTemplate: { spec: { backoffLimit: -1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } }, /spec\.jobTemplate\.spec\.backoffLimit: Invalid value: -1: must be greater than or equal to 0/],
  ];
  for (const [name, spec, message, restartPolicy] of cases) {
    const r = await api.request('POST', CJ, { body: body(name, spec, restartPolicy) });
    assert.equal(r.status, 422, `${name}: ${r.text}`);
    assert.match(r.json.message, message, name);
  }
  assert.equal((await api.request('GET', CJ)).json.items.filter((i: any) => cases.some(([n]) => n === i.metadata.name)).length, 0, 'none was stored');
});
