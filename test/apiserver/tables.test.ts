// Server-side printing: ages, JSONPath, CRD printer columns and built-in columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crdTable, humanDuration, jsonPathFirst, tableFor } from '../../src/apiserver/tables.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

test('ages as kubectl prints them, at each boundary', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'], [59 * S, '59s'], [119 * S, '119s'], [2 * M, '2m'], [3 * M + 12 * S, '3m12s'], [9 * M + 59 * S, '9m59s'],
    [10 * M, '10m'], [179 * M, '179m'], [3 * H, '3h'], [5 * H + 3 * M, '5h3m'], [8 * H, '8h'], [47 * H, '47h'],
    [48 * H, '2d'], [3 * D + 4 * H, '3d4h'], [8 * D, '8d'], [729 * D, '729d'], [730 * D, '2y'], [760 * D, '2y30d'], [3000 * D, '8y'],
  ];
  for (const [ms, expected] of cases) assert.equal(humanDuration(ms), expected, `${ms} ms`);
});

test('JSONPath first match', () => {
  const cv = { status: { history: [{ state: 'Partial', version: '1.1.0' }, { state: 'Completed', version: '1.0.0' }], conditions: [{ type: 'Available', status: 'True' }] }, list: [1, 2, 3] };
  assert.equal(jsonPathFirst(cv, '.status.history[?(@.state=="Completed")].version'), '1.0.0');
  assert.equal(jsonPathFirst(cv, '{.status.conditions[?(@.type=="Available")].status}'), 'True');
  assert.equal(jsonPathFirst(cv, '.status.history[0].version'), '1.1.0');
  assert.equal(jsonPathFirst(cv, '.status.history[*].version'), '1.1.0');
  assert.equal(jsonPathFirst(cv, '.list[-1]'), 3);
  assert.equal(jsonPathFirst(cv, '.status.missing.deeper'), undefined);
  assert.equal(jsonPathFirst(cv, '.status.conditions[?(@.type=="Nope")].status'), undefined);
});

test('CRD printer columns', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const objects = [{ metadata: { name: 'version', creationTimestamp: '2026-01-01T00:00:00Z' }, status: { conditions: [{ type: 'Progressing', status: 'False', lastTransitionTime: '2026-01-01T00:05:00Z', message: 'Cluster version is 1.0.0' }] } }];
  const table = crdTable(
    [
      { name: 'Progressing', type: 'string', jsonPath: '.status.conditions[?(@.type=="Progressing")].status' },
      { name: 'Since', type: 'date', jsonPath: '.status.conditions[?(@.type=="Progressing")].lastTransitionTime' },
      { name: 'Missing', type: 'string', jsonPath: '.status.nothing', priority: 1 },
    ],
    objects,
    { now },
  );
  assert.deepEqual(table.columnDefinitions.map((c) => [c.name, c.priority]), [['Name', 0], ['Progressing', 0], ['Since', 0], ['Missing', 1]]);
  assert.deepEqual(table.rows[0].cells, ['version', 'False', '5m', null]);
  assert.deepEqual(table.rows[0].object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: objects[0].metadata });
  assert.deepEqual(crdTable([], objects, { now, includeObject: 'None' }).rows[0], { cells: ['version', '10m'] });
});

test('built-in columns for pods, nodes and deployments', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const created = '2026-01-01T00:00:00Z';
  const pod = {
    metadata: { name: 'web-1', creationTimestamp: created },
    spec: { nodeName: 'node-1', containers: [{ name: 'a' }, { name: 'b' }] },
    status: { phase: 'Running', podIP: '127.1.1.5', containerStatuses: [{ ready: true, restartCount: 2 }, { ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
  };
  assert.deepEqual(tableFor('pods', [pod], { now }).rows[0].cells, ['web-1', '1/2', 'CrashLoopBackOff', '3', '60m', '127.1.1.5', 'node-1', '<none>', '<none>']);
  assert.equal(tableFor('pods', [{ ...pod, metadata: { ...pod.metadata, deletionTimestamp: created } }], { now }).rows[0].cells[2], 'Terminating');
  const node = {
    metadata: { name: 'm1', creationTimestamp: created, labels: { 'node-role.kubernetes.io/master': '', 'node-role.kubernetes.io/control-plane': '' } },
    spec: { unschedulable: true },
    status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.33.0+bosun' }, addresses: [{ type: 'InternalIP', address: '127.0.1.1' }] },
  };
  assert.deepEqual(tableFor('nodes', [node], { now }).rows[0].cells.slice(0, 6), ['m1', 'Ready,SchedulingDisabled', 'control-plane,master', '60m', 'v1.33.0+bosun', '127.0.1.1']);
  const deploy = { metadata: { name: 'web', creationTimestamp: created }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'app', image: 'nginx' }] } } }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } };
  assert.deepEqual(tableFor('deployments', [deploy], { now }).rows[0].cells, ['web', '2/3', 3, 2, '60m', 'app', 'nginx', 'app=web']);
  assert.deepEqual(tableFor('widgets', [deploy], { now, noHeaders: true }), { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {}, columnDefinitions: [], rows: [{ cells: ['web', '60m'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: deploy.metadata } }] });
});
