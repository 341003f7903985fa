// Server-side printing: ages, JSONPath, CRD printer columns and built-in columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crdTable, humanDuration, jsonPathFirst, tableFor, tableJson } from '../../src/apiserver/printing/tables.js';
import type * as api from '../../src/api/index.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

test('ages as kubectl prints them, at each boundary', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'], [59 * S, '59s'], [119 * S, '119s'], [2 * M, '2m'], [3 * M + 12 * S, '3m12s'], [9 * M + 59 * S, '9m59s'],
    [10 * M, '10m'], [179 * M, '179m'], [3 * H, '3h'], [5 * H + 3 * M, '5h3m'], [8 * H, '8h'], [47 * H, '47h'],
    [-1999, '0s'], [-2000, '<invalid>'], [1999, '1s'], [48 * H, '2d'], [3 * D + 4 * H, '3d4h'], [8 * D, '8d'], [729 * D, '729d'], [730 * D, '2y'], [760 * D, '2y30d'], [3000 * D, '8y'],
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
  const annotated = { metadata: { annotations: { 'example.io/ver': 'v1', 'a.b': { c: 1 } } } };
  assert.equal(jsonPathFirst(annotated, '.metadata.annotations.example\\.io/ver'), 'v1');
  assert.equal(jsonPathFirst(annotated, "{.metadata.annotations['example.io/ver']}"), 'v1');
  assert.equal(jsonPathFirst(annotated, '.metadata.annotations.a\\.b.c'), 1);
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

test('rows carry the metadata without managedFields (the full object, asked for, keeps them); shared frozen metadata is copied once', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const managedFields = [{ manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } }];
  const metadata = { name: 'n1', labels: { a: 'b' }, creationTimestamp: '2026-01-01T00:00:00Z', managedFields };
  const node = { apiVersion: 'v1', kind: 'Node', metadata, status: {} } as api.Unstructured;
  const row = tableFor('nodes', [node], { now }).rows[0];
  assert.deepEqual(row.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'n1', labels: { a: 'b' }, creationTimestamp: '2026-01-01T00:00:00Z' } });
  assert.equal(node.metadata?.managedFields, managedFields, 'the object itself is left whole');
  assert.equal((tableFor('nodes', [node], { now, includeObject: 'Object' }).rows[0].object as api.Unstructured).metadata?.managedFields, managedFields);

  // As the storage shares decoded objects: frozen. One copy per metadata object, frozen, and the JSON is the Table's.
  const shared = Object.freeze({ ...node, metadata: Object.freeze({ ...metadata }) }) as api.Unstructured;
  const first = tableFor('nodes', [shared], { now });
  const again = tableFor('nodes', [shared], { now });
  const copy = (first.rows[0].object as { metadata: object }).metadata;
  assert.equal((again.rows[0].object as { metadata: object }).metadata, copy, 'the same copy the second time');
  assert.ok(Object.isFrozen(copy));
  assert.equal(tableJson(first), JSON.stringify(first));
  assert.doesNotMatch(tableJson(again), /managedFields/);
});

test('built-in columns for pods, nodes and deployments', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const created = '2026-01-01T00:00:00Z';
  const pod = {
    metadata: { name: 'web-1', creationTimestamp: created },
    spec: { nodeName: 'node-1', containers: [{ name: 'a' }, { name: 'b' }] },
    status: { phase: 'Running', podIP: '127.1.1.5', containerStatuses: [{ ready: true, restartCount: 2, state: { running: {} } }, { ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
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

test('pod Status, Ready and Restarts as kubectl printPod computes them', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const created = '2026-01-01T00:00:00Z';
  const pod = (spec: object, status: object, metadata: object = {}) => ({ metadata: { name: 'p', creationTimestamp: created, ...metadata }, spec: { containers: [{ name: 'a' }], ...spec }, status });
  const running = { name: 'a', ready: true, restartCount: 0, state: { running: {} } };
  const cases: Array<[string, object, [string, string, string]]> = [
    ['pending, no statuses', pod({}, { phase: 'Pending' }), ['0/1', 'Pending', '0']],
    ['running and ready', pod({}, { phase: 'Running', containerStatuses: [running] }), ['1/1', 'Running', '0']],
    ['ready but not running is not counted', pod({}, { phase: 'Running', containerStatuses: [{ ...running, state: { waiting: {} } }] }), ['0/1', 'Running', '0']],
    ['first container reason wins', pod({ containers: [{ name: 'a' }, { name: 'b' }] }, { phase: 'Running', containerStatuses: [{ name: 'a', state: { waiting: { reason: 'ImagePullBackOff' } } }, { name: 'b', state: { waiting: { reason: 'ContainerCreating' } } }] }), ['0/2', 'ImagePullBackOff', '0']],
    ['terminated without reason', pod({}, { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 3 } } }] }), ['0/1', 'ExitCode:3', '0']],
    ['killed by a signal', pod({}, { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 137, signal: 9 } } }] }), ['0/1', 'Signal:9', '0']],
    ['completed', pod({}, { phase: 'Succeeded', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }), ['0/1', 'Completed', '0']],
    ['completed while another runs, not ready', pod({ containers: [{ name: 'a' }, { name: 'b' }] }, { phase: 'Running', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } }, { ...running, name: 'b' }] }), ['1/2', 'NotReady', '0']],
    ['second init container running', pod({ initContainers: [{ name: 'i1' }, { name: 'i2' }] }, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 0 } } }, { name: 'i2', state: { running: {} } }] }), ['0/1', 'Init:1/2', '0']],
    ['init container crash looping', pod({ initContainers: [{ name: 'i1' }] }, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:55:00Z' } } }] }), ['0/1', 'Init:CrashLoopBackOff', '4 (5m ago)']],
    ['init container failed', pod({ initContainers: [{ name: 'i1' }] }, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 2 } } }] }), ['0/1', 'Init:ExitCode:2', '0']],
    ['sidecar init container counts once started', pod({ initContainers: [{ name: 's', restartPolicy: 'Always' }] }, { phase: 'Running', initContainerStatuses: [{ name: 's', started: true, ready: true, restartCount: 1, state: { running: {} } }], containerStatuses: [running] }), ['2/2', 'Running', '1']],
    ['restarts with the time of the last one', pod({}, { phase: 'Running', containerStatuses: [{ ...running, restartCount: 3, lastState: { terminated: { finishedAt: '2026-01-01T00:30:00Z' } } }] }), ['1/1', 'Running', '3 (30m ago)']],
    ['being deleted', pod({}, { phase: 'Running', containerStatuses: [running] }, { deletionTimestamp: created }), ['1/1', 'Terminating', '0']],
    ['deleted after finishing', pod({}, { phase: 'Succeeded' }, { deletionTimestamp: created }), ['0/1', 'Succeeded', '0']],
    ['node lost', pod({}, { phase: 'Running', reason: 'NodeLost' }, { deletionTimestamp: created }), ['0/1', 'Unknown', '0']],
    ['evicted', pod({}, { phase: 'Failed', reason: 'Evicted' }), ['0/1', 'Evicted', '0']],
    ['scheduling gated', pod({}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }), ['0/1', 'SchedulingGated', '0']],
  ];
  for (const [name, object, expected] of cases) {
    assert.deepEqual(tableFor('pods', [object as api.Unstructured], { now }).rows[0].cells.slice(1, 4), expected, name);
  }
  const wide = tableFor('pods', [pod({ nodeName: 'n1', readinessGates: [{ conditionType: 'x/ok' }] }, { podIPs: [{ ip: '10.0.0.7' }], conditions: [{ type: 'x/ok', status: 'True' }] })], { now }).rows[0].cells.slice(5);
  assert.deepEqual(wide, ['10.0.0.7', 'n1', '<none>', '1/1']);
});

test('service columns', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const svc = (spec: object, status: object = {}) => ({ metadata: { name: 's', creationTimestamp: '2026-01-01T00:00:00Z' }, spec, status });
  const cells = (o: object) => tableFor('services', [o as api.Unstructured], { now }).rows[0].cells;
  assert.deepEqual(cells(svc({ type: 'ClusterIP', clusterIP: '10.96.0.1', ports: [{ port: 443, protocol: 'TCP' }], selector: { app: 'x' } })), ['s', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP', '60m', 'app=x']);
  assert.deepEqual(cells(svc({ type: 'NodePort', clusterIP: '10.96.0.2', ports: [{ port: 80, nodePort: 30080 }, { port: 53, protocol: 'UDP' }] })).slice(1, 5), ['NodePort', '10.96.0.2', '<none>', '80:30080/TCP,53/UDP']);
  assert.equal(cells(svc({ type: 'LoadBalancer', ports: [] }))[3], '<pending>');
  assert.equal(cells(svc({ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } }))[3], '1.2.3.4');
  assert.equal(cells(svc({ type: 'ExternalName', externalName: 'db.example.com' }))[3], 'db.example.com');
});

test('event columns: repeated events show their count and first sighting on wide', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const event = {
    metadata: { name: 'web-1.17f', creationTimestamp: '2026-01-01T00:00:00Z' },
    involvedObject: { kind: 'Pod', name: 'web-1', fieldPath: 'spec.containers{app}' },
    reason: 'BackOff',
    message: 'Back-off restarting failed container \n',
    type: 'Warning',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:59:00Z',
    count: 7,
  };
  const table = tableFor('events', [event], { now });
  assert.deepEqual(table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name), ['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
  assert.deepEqual(table.rows[0].cells, ['60s', 'Warning', 'BackOff', 'pod/web-1', 'spec.containers{app}', 'kubelet, node-1', 'Back-off restarting failed container', '60m', 7, 'web-1.17f']);
  const single = tableFor('events', [{ metadata: { name: 'e' }, eventTime: '2026-01-01T00:58:00.000000Z', reportingController: 'bosun', regarding: { kind: 'Node' }, note: 'hi' }], { now });
  assert.deepEqual(single.rows[0].cells, ['2m', '', '', 'node', '', 'bosun', 'hi', '2m', 1, 'e']);
});

test('job columns: status, completions and duration as kubectl shows them', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const job = (spec: object, status: object, metadata: object = {}) => ({ metadata: { name: 'j', creationTimestamp: '2026-01-01T00:00:00Z', ...metadata }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } }, ...spec }, status });
  const cases: Array<[string, object, string[]]> = [
    ['running', job({ completions: 3 }, { succeeded: 1, startTime: '2026-01-01T00:55:00Z' }), ['Running', '1/3', '5m']],
    ['complete', job({}, { succeeded: 1, startTime: '2026-01-01T00:00:00Z', completionTime: '2026-01-01T00:00:42Z', conditions: [{ type: 'Complete', status: 'True' }] }), ['Complete', '1/1', '42s']],
    ['parallel without completions', job({ parallelism: 4 }, { succeeded: 2 }), ['Running', '2/1 of 4', '']],
    ['failed', job({ completions: 1 }, { conditions: [{ type: 'Failed', status: 'True' }] }), ['Failed', '0/1', '']],
    ['suspended', job({}, { conditions: [{ type: 'Suspended', status: 'True' }] }), ['Suspended', '0/1', '']],
    ['being deleted', job({}, {}, { deletionTimestamp: '2026-01-01T00:59:00Z' }), ['Terminating', '0/1', '']],
  ];
  for (const [name, object, expected] of cases) assert.deepEqual(tableFor('jobs', [object as api.Unstructured], { now }).rows[0].cells.slice(1, 4), expected, name);
});
