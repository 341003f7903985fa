// Update service benchmark: the time to build the graph from the full real graph data
// (test/fixtures/cincinnati-graph-data, 76 channels, 1,383 versions, 1,717 blocked edges, with
// synthesised release metadata), and requests/s and latency percentiles for stable-4.14 (178
// versions, several thousand edges) served over HTTP with keep-alive, against a bare fastify
// server answering the same bytes from memory under the same load (the floor of serving a cached
// body). Targets: build < 1 s, >= 2,000 req/s, >= 0.8x the bare server. Bounded: about 20 s.
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { loadGraphData } from '../src/update-service/graph-data.js';
import { precompute, lookup } from '../src/update-service/responses.js';
import { startUpdateService } from '../src/update-service/server.js';
import { synthesiseReleases } from '../test/helpers/synthetic-releases.js';
import { writeRelease } from '../test/helpers/release-store.js';

const DATA = process.env.GRAPH_DATA ?? fileURLToPath(new URL('../test/fixtures/cincinnati-graph-data', import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const CHANNEL = 'stable-4.14';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// 1. Build time, three rounds (the first pays for JIT warm-up; all are reported).
const rounds: { load: number; build: number }[] = [];
let summary = '';
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  const data = loadGraphData(DATA);
  const t1 = performance.now();
  const releases = synthesiseReleases(data);
  const t2 = performance.now();
  const pre = precompute(releases, data);
  const t3 = performance.now();
  rounds.push({ load: t1 - t0, build: t3 - t2 });
  const body = JSON.parse(lookup(pre, CHANNEL, 'amd64').toString()) as { nodes: unknown[]; edges: unknown[]; conditionalEdges: { edges: unknown[] }[] };
  summary = `${pre.graph.channels.size} channels, ${pre.graph.stats.releases} releases, ${pre.graph.stats.edges} edges, ${pre.graph.stats.conditional} conditional, ${pre.graph.stats.removed} removed; ${CHANNEL}: ${body.nodes.length} nodes, ${body.edges.length} edges, ${body.conditionalEdges.reduce((n, c) => n + c.edges.length, 0)} conditional edges, ${lookup(pre, CHANNEL, 'amd64').length} bytes`;
}
console.log(`graph: ${summary}`);
for (const [i, r] of rounds.entries()) console.log(`round ${i + 1}: read+parse graph data ${r.load.toFixed(0)} ms, build+serialize every channel ${r.build.toFixed(0)} ms, total ${(r.load + r.build).toFixed(0)} ms`);
console.log(`build from full data (median of 3): ${median(rounds.map((r) => r.load + r.build)).toFixed(0)} ms (target < 1000 ms)`);

// 2. HTTP throughput for the big channel.
const dir = mkdtempSync(join(tmpdir(), 'bosun-bench-updatesvc-'));
const store = join(dir, 'store');
for (const r of synthesiseReleases(loadGraphData(DATA))) writeRelease(store, { version: r.version, previous: r.previous });
const svc = await startUpdateService({ graphData: DATA, releases: store, port: 0 });
const { port } = new URL(svc.url);
const path = `/api/upgrades_info/v1/graph?channel=${CHANNEL}&arch=amd64`;

/** Keep-alive load on one URL for DURATION_MS: request latencies and the elapsed seconds. */
async function measure(port: string | number, path: string): Promise<{ latencies: number[]; elapsed: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const once = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const start = performance.now();
      const req = request({ host: '127.0.0.1', port, path, agent, headers: { accept: 'application/json' } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.on('data', () => {});
        res.on('end', () => resolve(performance.now() - start));
      });
      req.on('error', reject);
      req.end();
    });
  const latencies: number[] = [];
  const deadline = performance.now() + DURATION_MS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) latencies.push(await once());
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { latencies, elapsed: (performance.now() - started) / 1000 };
}

const pct = (xs: number[], p: number): string => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))].toFixed(2);

const service = await measure(port, path);
console.log(`${CHANNEL} over HTTP: ${service.latencies.length} requests in ${service.elapsed.toFixed(1)} s with ${CONCURRENCY} connections (client in the same process, same 2 cores)`);
console.log(`requests/s: ${(service.latencies.length / service.elapsed).toFixed(0)} (target >= 2000); latency p50 ${pct(service.latencies, 50)} ms, p99 ${pct(service.latencies, 99)} ms`);

// 3. The reference: a bare fastify server answering the same bytes from memory, under the same load.
const cached = await new Promise<{ body: Buffer; type: string }>((resolve, reject) => {
  request({ host: '127.0.0.1', port, path, headers: { accept: 'application/json' } }, (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve({ body: Buffer.concat(chunks), type: String(res.headers['content-type'] ?? 'application/json') }));
  }).on('error', reject).end();
});
const bare = Fastify({ logger: false });
bare.get('/api/upgrades_info/v1/graph', (_req, reply) => reply.type(cached.type).send(cached.body));
await bare.listen({ host: '127.0.0.1', port: 0 });
const bareAddress = bare.server.address();
const reference = await measure(typeof bareAddress === 'object' && bareAddress ? bareAddress.port : 0, path);
await bare.close();
const rate = (r: { latencies: number[]; elapsed: number }) => r.latencies.length / r.elapsed;
console.log(`reference, bare fastify answering the same ${cached.body.length} bytes from memory: ${rate(reference).toFixed(0)} requests/s, p50 ${pct(reference.latencies, 50)} ms, p99 ${pct(reference.latencies, 99)} ms`);
console.log(`update service / bare fastify: ${(rate(service) / rate(reference)).toFixed(2)}x (goal >= 0.8)`);

await svc.close();
rmSync(dir, { recursive: true, force: true });
