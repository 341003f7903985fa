// Graph building: edges from previous/next, channel filtering, blocked edges by anchored regex,
// conditional edges with risks, architectures; graph-data validation; the real data loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { buildGraph, channelGraph, GraphBuildError, type Release } from '../../src/update-service/graph.js';
import { GraphDataError, loadGraphData, parseBlockedEdge, parseChannel, type GraphData } from '../../src/update-service/graph-data.js';
import { precompute, lookup } from '../../src/update-service/responses.js';
import { synthesiseReleases } from '../helpers/synthetic-releases.js';

const rel = (version: string, previous: string[] = [], extra: Partial<Release> = {}): Release => ({
  version,
  arch: 'amd64',
  payload: `bosun.local/release@sha256:${version.replace(/\D/g, '').padEnd(64, '0')}${extra.arch ?? ''}`,
  previous,
  next: [],
  metadata: {},
  ...extra,
});

const data = (channels: Record<string, string[]>, blocked: string[] = []): GraphData => ({
  channels: Object.entries(channels).map(([name, versions]) => ({ name, versions })),
  blockedEdges: blocked.map((text, i) => parseBlockedEdge(text, `b${i}.yaml`)),
});

/** Edges of a channel as "from->to" strings, and conditional ones as "from->to:risk". */
function edgesOf(releases: Release[], d: GraphData, channel: string, arch = 'amd64'): { edges: string[]; conditional: string[] } {
  const g = channelGraph(buildGraph(releases, d), channel, arch);
  return {
    edges: g.edges.map(([f, t]) => `${g.nodes[f].version}->${g.nodes[t].version}`).sort(),
    conditional: g.conditionalEdges.flatMap((c) => c.edges.map((e) => `${e.from}->${e.to}:${c.risks.map((r) => r.name).join('+')}`)).sort(),
  };
}

const releases = [rel('1.0.0'), rel('1.0.1', ['1.0.0']), rel('1.0.2', ['1.0.0', '1.0.1']), rel('1.1.0', ['1.0.1', '1.0.2']), rel('1.1.1', ['1.1.0'])];
const all = { 'stable-1.1': ['1.0.0', '1.0.1', '1.0.2', '1.1.0', '1.1.1'], 'stable-1.0': ['1.0.0', '1.0.1', '1.0.2'] };

const cases: { name: string; releases: Release[]; data: GraphData; channel: string; arch?: string; edges: string[]; conditional?: string[] }[] = [
  { name: 'previous lists make edges', releases, data: data(all), channel: 'stable-1.1', edges: ['1.0.0->1.0.1', '1.0.0->1.0.2', '1.0.1->1.0.2', '1.0.1->1.1.0', '1.0.2->1.1.0', '1.1.0->1.1.1'] },
  { name: 'a channel keeps only edges between its own versions', releases, data: data(all), channel: 'stable-1.0', edges: ['1.0.0->1.0.1', '1.0.0->1.0.2', '1.0.1->1.0.2'] },
  { name: 'next lists make edges too, without duplicates', releases: [rel('1.0.0', [], { next: ['1.0.1'] }), rel('1.0.1', ['1.0.0'])], data: data({ c: ['1.0.0', '1.0.1'] }), channel: 'c', edges: ['1.0.0->1.0.1'] },
  { name: 'edges to unknown versions are ignored', releases: [rel('1.0.1', ['0.9.0', '1.0.0'])], data: data({ c: ['1.0.1'] }), channel: 'c', edges: [] },
  { name: 'an unknown channel is empty', releases, data: data(all), channel: 'nope', edges: [] },
  {
    name: 'an unconditional block removes the edge in every channel',
    releases,
    data: data(all, ['to: 1.1.0\nfrom: 1[.]0[.]1[+].*\n']),
    channel: 'stable-1.1',
    edges: ['1.0.0->1.0.1', '1.0.0->1.0.2', '1.0.1->1.0.2', '1.0.2->1.1.0', '1.1.0->1.1.1'],
  },
  {
    name: 'the from regex is anchored: 1[.]0 does not match 1.0.1',
    releases,
    data: data(all, ['to: 1.1.0\nfrom: 1[.]0\n']),
    channel: 'stable-1.1',
    edges: ['1.0.0->1.0.1', '1.0.0->1.0.2', '1.0.1->1.0.2', '1.0.1->1.1.0', '1.0.2->1.1.0', '1.1.0->1.1.1'],
  },
  {
    name: 'a bare-version regex matches too; .* blocks every edge into the target',
    releases,
    data: data(all, ['to: 1.0.2\nfrom: .*\n']),
    channel: 'stable-1.0',
    edges: ['1.0.0->1.0.1'],
  },
  {
    name: 'a block with matchingRules becomes a conditional edge with its risk',
    releases,
    data: data(all, ['to: 1.0.2\nfrom: 1[.]0[.]0[+].*\nurl: https://x/1\nname: RiskA\nmessage: m\nmatchingRules:\n- type: Always\n']),
    channel: 'stable-1.0',
    edges: ['1.0.0->1.0.1', '1.0.1->1.0.2'],
    conditional: ['1.0.0->1.0.2:RiskA'],
  },
  {
    name: 'two risks on one edge are served together; removal beats a risk',
    releases,
    data: data(all, [
      'to: 1.1.0\nfrom: 1[.]0[.].*\nurl: https://x/1\nname: RiskA\nmessage: m\nmatchingRules:\n- type: Always\n',
      'to: 1.1.0\nfrom: 1[.]0[.]2\nurl: https://x/2\nname: RiskB\nmessage: m\nmatchingRules:\n- type: PromQL\n  promql:\n    promql: up == 1\n',
      'to: 1.1.1\nfrom: .*\n',
      'to: 1.1.1\nfrom: .*\nurl: https://x/3\nname: RiskC\nmessage: m\nmatchingRules:\n- type: Always\n',
    ]),
    channel: 'stable-1.1',
    edges: ['1.0.0->1.0.1', '1.0.0->1.0.2', '1.0.1->1.0.2'],
    conditional: ['1.0.1->1.1.0:RiskA', '1.0.2->1.1.0:RiskA+RiskB'],
  },
  {
    name: 'architectures do not mix: arm64 sees only arm64 releases and their edges',
    releases: [...releases, rel('1.0.0', [], { arch: 'arm64' }), rel('1.0.1', ['1.0.0'], { arch: 'arm64' })],
    data: data(all),
    channel: 'stable-1.1',
    arch: 'arm64',
    edges: ['1.0.0->1.0.1'],
  },
];

for (const c of cases) {
  test(`graph: ${c.name}`, () => {
    const got = edgesOf(c.releases, c.data, c.channel, c.arch);
    assert.deepEqual(got.edges, [...c.edges].sort());
    assert.deepEqual(got.conditional, [...(c.conditional ?? [])].sort());
  });
}

test('graph: nodes are sorted by version and carry their channels', () => {
  const g = channelGraph(buildGraph([...releases].reverse(), data(all)), 'stable-1.0', 'amd64');
  assert.deepEqual(g.nodes.map((n) => n.version), ['1.0.0', '1.0.1', '1.0.2']);
  assert.equal(g.nodes[0].metadata['io.openshift.upgrades.graph.release.channels'], 'stable-1.0,stable-1.1');
  assert.equal(g.version, 1);
});

test('graph: a version twice for one architecture is refused, naming both payloads', () => {
  assert.throws(() => buildGraph([rel('1.0.0'), rel('1.0.0', [], { payload: 'other' })], data(all)), (e: Error) => e instanceof GraphBuildError && /1\.0\.0.*twice.*other/.test(e.message));
});

test('graph: unknown channel and architecture get an empty precomputed body', () => {
  const pre = precompute(releases, data(all));
  assert.deepEqual(JSON.parse(lookup(pre, 'nope', 'amd64').toString()), { version: 1, nodes: [], edges: [], conditionalEdges: [] });
  assert.equal(JSON.parse(lookup(pre, 'stable-1.0', 's390x').toString()).nodes.length, 0);
  assert.equal(JSON.parse(lookup(pre, 'stable-1.0', 'amd64').toString()).nodes.length, 3);
});

test('graph data: bad files are refused with the file and the cause named', () => {
  const bad: [() => unknown, RegExp][] = [
    [() => parseChannel('name: Bad_Name\nversions: []\n', 'channels/x.yaml'), /channels\/x\.yaml: channel name "Bad_Name"/],
    [() => parseChannel('name: ok\nversions: [banana]\n', 'channels/x.yaml'), /"banana" is not a semantic version/],
    [() => parseChannel('name: ok\nversions: [\n', 'channels/x.yaml'), /invalid YAML/],
    [() => parseBlockedEdge('to: 1.0.0\n', 'b.yaml'), /b\.yaml: "from" must be a non-empty string/],
    [() => parseBlockedEdge('to: 1.0.0\nfrom: "4[.(1"\n', 'b.yaml'), /invalid "from" regex/],
    [() => parseBlockedEdge('to: 1.0.0\nfrom: .*\nmatchingRules:\n- type: Always\n', 'b.yaml'), /"url" must be/],
    [() => parseBlockedEdge('to: 1.0.0\nfrom: .*\nurl: u\nname: n\nmessage: m\nmatchingRules:\n- type: PromQL\n', 'b.yaml'), /promql/],
  ];
  for (const [fn, pattern] of bad) assert.throws(fn, (e: Error) => e instanceof GraphDataError && pattern.test(e.message), String(pattern));
});

test('graph data: the real cincinnati-graph-data loads and builds with synthesised releases', () => {
  const real = loadGraphData(fileURLToPath(new URL('../fixtures/cincinnati-graph-data', import.meta.url)));
  assert.equal(real.channels.length, 76);
  assert.equal(real.blockedEdges.length, 1717);
  assert.equal(real.blockedEdges.filter((b) => b.risk).length, 1601);
  const pre = precompute(synthesiseReleases(real), real);
  assert.equal(pre.graph.releases.size, 1383);
  const stable414 = JSON.parse(lookup(pre, 'stable-4.14', 'amd64').toString());
  assert.equal(stable414.nodes.length, 178);
  assert.ok(stable414.edges.length > 2000, `stable-4.14 has ${stable414.edges.length} edges`);
  assert.ok(stable414.conditionalEdges.length > 0);
  // Spot check against the data: 4.11.23 was pulled (DuplicateRelease, from .*, Always) so every
  // edge into it is conditional in stable-4.12, never recommended.
  const s412 = JSON.parse(lookup(pre, 'stable-4.12', 'amd64').toString());
  const i = s412.nodes.findIndex((n: { version: string }) => n.version === '4.11.23');
  assert.ok(i >= 0);
  assert.equal(s412.edges.filter(([, t]: number[]) => t === i).length, 0);
  assert.ok(s412.conditionalEdges.some((c: { edges: { to: string }[]; risks: { name: string }[] }) => c.risks.some((r) => r.name === 'DuplicateRelease') && c.edges.some((e) => e.to === '4.11.23')));
});
