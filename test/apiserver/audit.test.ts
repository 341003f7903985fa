// Audit lines: the record built from request attributes, only mutating requests kept, written both
// to the pino logger and the JSON-lines file in the data directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AuditLog, auditEvent } from '../../src/apiserver/filters/audit-log.js';
import { requestAttributes } from '../../src/apiserver/auth/request-attributes.js';

const bob = { name: 'bob', groups: ['system:authenticated'] };
const time = new Date('2026-01-01T00:00:00Z');

test('audit records name the user, verb, resource and object', () => {
  const table: [string, string, Record<string, unknown>][] = [
    ['DELETE', '/apis/apps/v1/namespaces/ns/deployments/web', { verb: 'delete', resource: 'deployments.apps', namespace: 'ns', name: 'web' }],
    ['POST', '/api/v1/namespaces/ns/pods/p/eviction', { verb: 'create', resource: 'pods/eviction', namespace: 'ns', name: 'p' }],
    ['PATCH', '/api/v1/nodes/n1', { verb: 'patch', resource: 'nodes', name: 'n1' }],
    ['POST', '/logs', { verb: 'create', resource: '/logs' }],
  ];
  for (const [method, url, want] of table) {
    const e = auditEvent(requestAttributes(bob, method, url), { code: 200, userAgent: 'kubectl/v1.32', requestId: 'r1', time });
    assert.deepEqual(e, { time: '2026-01-01T00:00:00.000Z', requestId: 'r1', user: 'bob', groups: bob.groups, code: 200, userAgent: 'kubectl/v1.32', ...want });
  }
});

test('mutating requests go to the logger and the file; reads do not', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bosun-audit-'));
  try {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(chunk.toString()); done(); } });
    const log = new AuditLog({ dataDir: dir, logger: pino(sink) });
    log.record(auditEvent(requestAttributes(bob, 'GET', '/api/v1/pods'), { code: 200, requestId: 'a' }));
    log.record(auditEvent(requestAttributes(bob, 'PUT', '/api/v1/namespaces/x/configmaps/c'), { code: 409, requestId: 'b' }));
    await log.close();
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]).audit.requestId, 'b');
    assert.match(JSON.parse(lines[0]).msg, /bob update configmaps -n x c → 409/);
    const file = fs.readFileSync(path.join(dir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(file.map((e) => [e.user, e.verb, e.name, e.code]), [['bob', 'update', 'c', 409]]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
