// Jobs (batch/v1) refused as kube-apiserver 1.33 refuses them: pods that would never end (a
// template without a restart policy gets the default, Always), a selector of one's own without
// manualSelector, counts below zero, completion modes and per-index limits that do not go
// together, a replacement policy a pod failure policy rules out. Checked with the real kubectl
// where an administrator meets it (apply of a manifest without restartPolicy). (A Job stored by an
// earlier bosun, which let such a template through: ratcheting.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import type { Unstructured } from '../../src/api/index.js';

const JOBS = '/apis/batch/v1/namespaces/default/jobs';
let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api?.stop();
});

const job = (name: string, spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = { restartPolicy: 'Never' }, labels?: Record<string, string>) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: { ...(labels ? { metadata: { labels } } : {}), spec: { containers: [{ name: 'c', image: 'busybox' }], ...podSpec } }, ...spec },
});

test('kubectl apply of a Job without a restart policy is refused as kube refuses it, and nothing is stored', async () => {
  const r = await api.kubectl(['apply', '-f', '-'], { input: JSON.stringify(job('no-policy', {}, {})) });
  assert.notEqual(r.code, 0, r.stdout);
  assert.match(r.stderr, /The Job "no-policy" is invalid: spec\.template\.spec\.restartPolicy: Required value: valid values: "OnFailure", "Never"/);
  assert.equal((await api.request('GET', `${JOBS}/no-policy`)).status, 404);
  // What kubectl create job sends (restartPolicy Never) is a Job; so is one that restarts on failure.
  await api.kubectlOk(['create', 'job', 'made', '--image=busybox']);
  assert.equal((await api.request('POST', JOBS, { body: job('on-failure', {}, { restartPolicy: 'OnFailure' }) })).status, 201);
});

test('a Job whose fields do not go together is refused, each problem named as kube names it', async () => {
  const never = { restartPolicy: 'Never' };
  const cases: [string, Record<string, unknown>, RegExp, Record<string, unknown>?, Record<string, string>?][] = [
    ['always', {}, /spec\.template\.spec\.restartPolicy: Required value: valid values: "OnFailure", "Never"/, { restartPolicy: 'Always' }],
    ['sometimes', {}, /spec\.template\.spec\.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"/, { restartPolicy: 'Sometimes' }],
    ['own-selector', { selector: { matchLabels: { app: 'x' } } }, /spec\.selector: Invalid value: .*`selector` not auto-generated/, never, { app: 'x' }],
    ['manual-mismatch', { manualSelector: true, selector: { matchLabels: { app: 'x' } } }, /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/, never, { app: 'y' }],
    ['manual-without', { manualSelector: true }, /spec\.selector: Required value/],
    ['negative', { backoffLimit: -1, parallelism: -2 }, /spec\.parallelism: Invalid value: -2: must be greater than or equal to 0.*spec\.backoffLimit: Invalid value: -1: must be greater than or equal to 0|spec\.backoffLimit: Invalid value: -1.*spec\.parallelism: Invalid value: -2/],
    ['mode', { completionMode: 'Weird' }, /spec\.completionMode: Unsupported value: "Weird": supported values: "NonIndexed", "Indexed"/],
    ['indexed', { completionMode: 'Indexed', parallelism: 2 }, /spec\.completions: Required value: when completion mode is Indexed/],
    ['per-index', { backoffLimitPerIndex: 1 }, /spec\.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode/],
    ['max-failed', { completionMode: 'Indexed', completions: 3, maxFailedIndexes: 1 }, /spec\.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified/],
    ['failure-policy', { podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } }] } }, /spec\.template\.spec\.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified/, { restartPolicy: 'OnFailure' }],
    ['replacement', { podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } }] }, podReplacementPolicy: 'TerminatingOrFailed' }, /spec\.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"/],
    ['replacement-kind', { podReplacementPolicy: 'Whenever' }, /spec\.podReplacementPolicy: Unsupported value: "Whenever": supported values: "Failed", "TerminatingOrFailed"/],
  ];
  for (const [name, spec, message, podSpec, labels] of cases) {
    const r = await api.request('POST', JOBS, { body: job(name, spec, podSpec, labels) });
    assert.equal(r.status, 422, `${name}: ${r.text}`);
    assert.equal(r.json.reason, 'Invalid', name);
    assert.match(r.json.message, message, name);
  }
  const stored = (await api.request('GET', JOBS)).json.items.map((i: Unstructured) => i.metadata.name);
  assert.deepEqual(stored.filter((n: string) => cases.some(([c]) => c === n)), [], 'none was stored');
  // With manualSelector, a selector of one's own that matches the template is the Job's.
  const manual = await api.request('POST', JOBS, { body: job('manual', { manualSelector: true, selector: { matchLabels: { app: 'x' } } }, { restartPolicy: 'Never' }, { app: 'x' }) });
  assert.equal(manual.status, 201, manual.text);
  assert.deepEqual(manual.json.spec.selector, { matchLabels: { app: 'x' } });
  assert.equal(manual.json.spec.template.metadata.labels['controller-uid'], undefined, 'no generated labels');
  // An Indexed Job with its limits per index.
  const indexed = await api.request('POST', JOBS, { body: job('indexed-ok', { completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1, maxFailedIndexes: 1 }) });
  assert.equal(indexed.status, 201, indexed.text);
});
