// The metrics server's pure parts: the Prometheus text it reads, the rates it computes between two
// scrapes (nanocores, Ki, the window), a restarted container without a rate, and the API answers
// (lists, one object, labelSelector, 404) and the attributes they are authorised with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { parseSamples } from '../../src/metrics-server/prometheus-text.js';
import { formatCpu, formatMemory, formatWindow, pointsOf, usageBetween } from '../../src/metrics-server/usage.js';
import { answer, attributesOf } from '../../src/metrics-server/server.js';
import { kubeletUrl } from '../../src/metrics-server/scraper.js';
import { nodeTable, podTable } from '../../src/cli/adm-top.js';

const scrape = (cpu: number, at: number, start = 100) => `# HELP node_cpu_usage_seconds_total x
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total ${cpu * 2} ${at}
node_memory_working_set_bytes 2048000 ${at}
container_cpu_usage_seconds_total{container="main",namespace="ns",pod="p"} ${cpu} ${at}
container_memory_working_set_bytes{container="main",namespace="ns",pod="p"} 1048576 ${at}
container_start_time_seconds{container="main",namespace="ns",pod="p"} ${start} ${at}
resource_scrape_error 0
`;

test('Prometheus text: names, escaped label values, values and timestamps; a malformed line is an error', () => {
  const [s] = parseSamples('x_total{a="1",b="q\\"uote\\\\d\\n"} 1.5e3 1700000000000\n# comment\n');
  assert.deepEqual(s, { name: 'x_total', labels: { a: '1', b: 'q"uote\\d\n' }, value: 1500, timestampMs: 1700000000000 });
  assert.deepEqual(parseSamples('up 1'), [{ name: 'up', labels: {}, value: 1 }]);
  assert.equal(parseSamples('inf +Inf')[0].value, Infinity);
  assert.throws(() => parseSamples('bad{a=1} 1'), /malformed labels|not a Prometheus sample/);
  assert.throws(() => parseSamples('x abc'), /malformed value/);
});

test('usage between two scrapes: CPU as the counter\'s rate in nanocores, memory latest in Ki, the window between them', () => {
  const a = pointsOf(parseSamples(scrape(10, 1_000_000)), 0);
  const b = pointsOf(parseSamples(scrape(10.5, 1_010_000)), 0);
  const container = usageBetween(a.pods.get('ns/p')?.get('main'), b.pods.get('ns/p')?.get('main'))!;
  assert.equal(formatCpu(container.cpuCores), '50000000n', '0.5 s of CPU over 10 s is 0.05 cores');
  assert.equal(formatMemory(container.memoryBytes), '1024Ki');
  assert.equal(formatWindow(container.windowMs), '10s');
  assert.equal(formatCpu(usageBetween(a.node, b.node)!.cpuCores), '100000000n');
  // A restart (another start time, or a counter that went down) has no rate yet; nor has one scrape.
  const restarted = pointsOf(parseSamples(scrape(11, 1_020_000, 200)), 0);
  assert.equal(usageBetween(b.pods.get('ns/p')?.get('main'), restarted.pods.get('ns/p')?.get('main')), undefined);
  assert.equal(usageBetween(b.pods.get('ns/p')?.get('main'), pointsOf(parseSamples(scrape(1, 1_030_000)), 0).pods.get('ns/p')?.get('main')), undefined);
  assert.equal(usageBetween(undefined, b.node), undefined);
});

const node = (name: string, labels: Record<string, string> = {}): api.Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, status: { allocatable: { cpu: '2', memory: '4Gi' }, addresses: [{ type: 'InternalIP', address: '127.0.1.5' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } } });
const pod = (namespace: string, name: string): api.Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: name } }, spec: { containers: [] } });
const usage = { cpuCores: 0.25, memoryBytes: 512 * 1024 * 1024, timestampMs: Date.parse('2026-01-01T00:00:10Z'), windowMs: 15_000 };
const figures = {
  nodes: () => [{ node: node('a', { role: 'master' }), usage }, { node: node('b'), usage }],
  pods: () => [{ pod: pod('x', 'p1'), usage: { containers: [{ name: 'c', usage }], timestampMs: usage.timestampMs, windowMs: usage.windowMs } }, { pod: pod('y', 'p2'), usage: { containers: [{ name: 'c', usage }], timestampMs: usage.timestampMs, windowMs: usage.windowMs } }],
};

test('the metrics.k8s.io answers: NodeMetrics and PodMetrics lists and objects, labelSelector, 404s', () => {
  const list = answer(figures, '/nodes', new URLSearchParams('labelSelector=role=master'));
  assert.equal(list.code, 200);
  const body = list.body as { kind: string; items: Array<{ metadata: { name: string }; usage: { cpu: string; memory: string }; window: string; timestamp: string }> };
  assert.equal(body.kind, 'NodeMetricsList');
  assert.deepEqual(body.items.map((i) => [i.metadata.name, i.usage.cpu, i.usage.memory, i.window, i.timestamp]), [['a', '250000000n', '524288Ki', '15s', '2026-01-01T00:00:10Z']]);
  assert.equal((answer(figures, '/nodes/b', new URLSearchParams()).body as { kind: string }).kind, 'NodeMetrics');
  assert.equal(answer(figures, '/nodes/zz', new URLSearchParams()).code, 404);
  assert.deepEqual((answer(figures, '/namespaces/y/pods', new URLSearchParams()).body as { items: Array<{ metadata: { name: string } }> }).items.map((i) => i.metadata.name), ['p2']);
  assert.equal((answer(figures, '/pods', new URLSearchParams()).body as { items: unknown[] }).items.length, 2);
  assert.equal(answer(figures, '/namespaces/x/pods/p2', new URLSearchParams()).code, 404);
  assert.equal(answer(figures, '/nodes', new URLSearchParams('labelSelector=a in (')).code, 400);
  assert.equal((answer(figures, '', new URLSearchParams()).body as { kind: string }).kind, 'APIResourceList');
  assert.deepEqual(attributesOf('/namespaces/x/pods/p1'), { verb: 'get', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods', namespace: 'x', name: 'p1' });
  assert.deepEqual(attributesOf('/nodes'), { verb: 'list', group: 'metrics.k8s.io', version: 'v1beta1', resource: 'nodes' });
  assert.equal(attributesOf(''), undefined);
  assert.equal(kubeletUrl(node('a'), '/metrics/resource')?.href, 'https://127.0.1.5:10250/metrics/resource');
});

test('adm top prints kubectl top\'s columns: millicores, Mi and the share of allocatable; <unknown> without metrics', () => {
  const nodes = nodeTable([node('b'), node('a')], [{ metadata: { name: 'a' }, usage: { cpu: '250000000n', memory: '524288Ki' } }]);
  assert.equal(nodes, [
    'NAME   CPU(cores)   CPU(%)      MEMORY(bytes)   MEMORY(%)   ',
    'a      250m         12%         512Mi           12%         ',
    'b      <unknown>    <unknown>   <unknown>       <unknown>   ',
    '',
  ].join('\n'));
  const pods = podTable([{ metadata: { name: 'p', namespace: 'x' }, containers: [{ name: 'a', usage: { cpu: '1000000n', memory: '1024Ki' } }, { name: 'b', usage: { cpu: '2m', memory: '2Mi' } }] }], true);
  assert.equal(pods, 'NAMESPACE   NAME   CPU(cores)   MEMORY(bytes)   \nx           p      3m           3Mi             \n');
});
