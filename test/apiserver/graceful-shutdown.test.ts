// A stopping API server with a grace period (kube-apiserver's, http/drain.ts) lets its clients go
// without failing a request: new connections are refused at once; a client asking in a loop on a
// keep-alive connection gets answers, then a 503 with Retry-After and `Connection: close` (never a
// reset or a cut answer), and its connection is closed after that answer; a connection that stays idle is closed once the grace
// period is over, and the stop completes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../src/apiserver/server.js';
import { eventually } from '../helpers/eventually.js';

interface Answer { status: number; retryAfter?: string; connection?: string }

function get(agent: Agent, url: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/v1/namespaces/default/configmaps?limit=1`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], connection: res.headers.connection }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

test('a stopping API server with a grace period answers 503 with Retry-After and Connection: close on open connections, fails none, and closes idle ones', { timeout: 60_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-apiserver-drain-'));
  const server = await startApiServer({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn', shutdownGraceMs: 2_000 });
  const busy = new Agent({ ca: server.caPem, keepAlive: true, maxSockets: 1 });
  const idle = new Agent({ ca: server.caPem, keepAlive: true, maxSockets: 1 });
  const answers: Answer[] = [];
  const failures: string[] = [];
  let looping = true;
  try {
    // An idle keep-alive connection: one answer, then nothing more on it.
    assert.equal((await get(idle, server.url, server.token)).status, 200);
    const loop = (async () => {
      while (looping) {
        try {
          const a = await get(busy, server.url, server.token);
          answers.push(a);
          if (a.status === 503) break;
        } catch (e) {
          failures.push((e as Error).message);
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await eventually('the client answered on its connection', () => answers.length >= 5, { timeoutMs: 10_000, intervalMs: 20 });
    const stopping = server.stop();
    // The listener is closed at once: a new connection is refused (a balancer sends it elsewhere).
    await assert.rejects(get(new Agent({ ca: server.caPem }), server.url, server.token), /ECONNREFUSED/);
    await stopping;
    looping = false;
    await loop;
    assert.deepEqual(failures, [], 'no request failed');
    const last = answers[answers.length - 1];
    assert.equal(last.status, 503, `the last answer is the shutdown's 503: ${JSON.stringify(answers.slice(-3))}`);
    assert.equal(last.retryAfter, '1');
    assert.equal(last.connection, 'close');
    assert.ok(answers.slice(0, -1).every((a) => a.status === 200), JSON.stringify(answers));
  } finally {
    looping = false;
    busy.destroy();
    idle.destroy();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
