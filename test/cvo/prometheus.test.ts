// PromQL risks evaluated against a Prometheus-compatible API on loopback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { prometheusEvaluator } from '../../src/cvo/updates/prometheus.js';
import { evaluateConditionalUpdate } from '../../src/cvo/updates/risks.js';

test('a PromQL risk applies, does not apply, or is unknown, from a real HTTP metrics API', async () => {
  const answers: Record<string, unknown> = {
    'up{job="a"} == 1': { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [0, '1'] }] } },
    'absent(x)': { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [0, '0'] }] } },
    many: { status: 'success', data: { resultType: 'vector', result: [{ value: [0, '1'] }, { value: [0, '0'] }] } },
  };
  const server = createServer((req, res) => {
    const query = new URL(req.url!, 'http://x').searchParams.get('query') ?? '';
    const answer = answers[query];
    res.writeHead(answer ? 200 : 400, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer ?? { status: 'error', error: 'parse error' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const evaluate = prometheusEvaluator(url);
    assert.equal(await evaluate('up{job="a"} == 1'), 1);
    assert.equal(await evaluate('absent(x)'), 0);
    await assert.rejects(evaluate('many'), /exactly one/);
    await assert.rejects(evaluate('bad query'), /HTTP 400/);
    const update = (promql: string) => ({
      release: { version: '1.0.2', image: 'i' },
      risks: [{ name: 'R', url: 'u', message: 'm', matchingRules: [{ type: 'PromQL' as const, promql: { promql } }] }],
    });
    assert.equal((await evaluateConditionalUpdate(update('up{job="a"} == 1') as never, evaluate)).status, 'False');
    assert.equal((await evaluateConditionalUpdate(update('absent(x)') as never, evaluate)).status, 'True');
    assert.equal((await evaluateConditionalUpdate(update('many') as never, evaluate)).status, 'Unknown');
    assert.equal((await evaluateConditionalUpdate(update('absent(x)') as never, prometheusEvaluator('http://127.0.0.1:9'))).status, 'Unknown');
  } finally {
    server.close();
  }
});
