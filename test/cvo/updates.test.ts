// The CVO's pure update helpers: the graph walk, risk evaluation, desiredUpdate resolution and
// every upgrade precondition, as tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GraphWalkError, parseGraphResponse, walkGraph, type ConditionalUpdate } from '../../src/cvo/updates/graph-walk.js';
import { evaluateConditionalUpdate, evaluateConditionalUpdates, risksInOrder, type PromQLRuleMatcher } from '../../src/cvo/updates/risks.js';
import { resolveDesiredUpdate, ResolveError } from '../../src/cvo/updates/resolve.js';
import { checkPreconditions, type PreconditionInput } from '../../src/cvo/updates/preconditions.js';
import { graphURL, RetrievalError } from '../../src/cvo/updates/upstream.js';
import type { GraphResponse, Risk } from '../../src/cincinnati/graph-api.js';

const node = (version: string, channels = 'stable-1.0,stable-1.1') => ({ version, payload: `bosun.local/release@sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`, metadata: { 'io.openshift.upgrades.graph.release.channels': channels } });
const always = (name: string): Risk => ({ name, url: `https://x/${name}`, message: `${name} happens`, matchingRules: [{ type: 'Always' }] });
const promql = (name: string, q = 'up'): Risk => ({ name, url: `https://x/${name}`, message: `${name} may happen`, matchingRules: [{ type: 'PromQL', promql: { promql: q } }] });

const graph: GraphResponse = {
  version: 1,
  nodes: [node('1.0.0'), node('1.0.1'), node('1.0.2'), node('1.1.0', 'stable-1.1'), node('1.1.1', 'stable-1.1')],
  edges: [[0, 1], [1, 2], [1, 3], [2, 3], [3, 4]],
  conditionalEdges: [
    { edges: [{ from: '1.0.0', to: '1.0.2' }], risks: [always('A')] },
    { edges: [{ from: '1.0.0', to: '1.1.0' }, { from: '1.0.2', to: '1.1.1' }], risks: [promql('B')] },
    { edges: [{ from: '1.0.0', to: '1.1.0' }], risks: [always('C')] },
    { edges: [{ from: '1.1.0', to: '1.1.1' }], risks: [{ ...always('D'), matchingRules: [{ type: 'Frobnicate' }] }] },
    { edges: [{ from: '1.0.1', to: '1.1.1' }], risks: [{ ...always('E'), matchingRules: [{ type: 'Frobnicate' }] }] },
  ],
};

const walkCases: { from: string; available: string[]; conditional: [string, string[]][] }[] = [
  { from: '1.0.0', available: ['1.0.1'], conditional: [['1.1.0', ['B', 'C']], ['1.0.2', ['A']]] },
  { from: '1.0.1', available: ['1.1.0', '1.0.2'], conditional: [] }, // E has no known rule type: target dropped
  { from: '1.0.2', available: ['1.1.0'], conditional: [['1.1.1', ['B']]] },
  { from: '1.1.0', available: ['1.1.1'], conditional: [] }, // already recommended: the conditional edge is ignored
  { from: '1.1.1', available: [], conditional: [] },
];
for (const c of walkCases) {
  test(`walk: from ${c.from}`, () => {
    const r = walkGraph(graph, c.from);
    assert.deepEqual(r.availableUpdates.map((u) => u.version), c.available);
    assert.deepEqual(r.conditionalUpdates.map((u) => [u.release.version, u.risks.map((x) => x.name)]), c.conditional);
  });
}

test('walk: the node is found by payload first, then by version; channels come from its metadata', () => {
  const r = walkGraph(graph, '9.9.9', graph.nodes[1].payload);
  assert.deepEqual(r.availableUpdates.map((u) => u.version), ['1.1.0', '1.0.2']);
  assert.deepEqual(r.channels, ['stable-1.0', 'stable-1.1']);
  assert.equal(r.availableUpdates[0].image, graph.nodes[3].payload);
  assert.throws(() => walkGraph(graph, '2.0.0'), (e: Error) => e instanceof GraphWalkError && e.reason === 'VersionNotFound' && /2\.0\.0/.test(e.message));
});

test('walk: invalid responses are refused as ResponseInvalid, naming the fault', () => {
  const bad: [unknown, RegExp][] = [
    [null, /JSON object/],
    [{ edges: [] }, /"nodes"/],
    [{ nodes: [{ version: 'x', payload: 'p' }] }, /not a semantic version/],
    [{ nodes: [node('1.0.0')], edges: [[0, 5]] }, /edges\[0\]/],
    [{ nodes: [node('1.0.0')], edges: [], conditionalEdges: [{ edges: [] }] }, /conditionalEdges\[0\]/],
  ];
  for (const [body, pattern] of bad) assert.throws(() => parseGraphResponse(body), (e: Error) => e instanceof GraphWalkError && e.reason === 'ResponseInvalid' && pattern.test(e.message), String(pattern));
  assert.equal(parseGraphResponse({ nodes: [node('1.0.0')] }).edges.length, 0);
});

const update = (...risks: Risk[]): ConditionalUpdate => ({ release: { version: '1.1.0', image: 'img' }, risks });
const evaluator = (values: Record<string, number | Error>): PromQLRuleMatcher => async (rule) => {
  const v = values[rule.promql!.promql];
  if (v instanceof Error) throw v;
  if (v === undefined) throw new Error(`no sample for ${rule.promql!.promql}`);
  return v === 1;
};

const riskCases: { name: string; update: ConditionalUpdate; evaluate?: PromQLRuleMatcher; accepted?: string[]; status: string; reason: string; message?: RegExp }[] = [
  { name: 'Always applies', update: update(always('A')), status: 'False', reason: 'A', message: /^A happens https:\/\/x\/A$/ },
  { name: 'two applying risks', update: update(always('A'), always('C')), status: 'False', reason: 'MultipleReasons', message: /A happens https:\/\/x\/A\n\nC happens/ },
  { name: 'a risk name that is no valid reason becomes ExposedToRisks', update: update({ ...always('A'), name: 'not a reason!' }), status: 'False', reason: 'ExposedToRisks' },
  { name: 'PromQL 1 applies', update: update(promql('B', 'q1')), evaluate: evaluator({ q1: 1 }), status: 'False', reason: 'B' },
  { name: 'PromQL 0 does not apply', update: update(promql('B', 'q0')), evaluate: evaluator({ q0: 0 }), status: 'True', reason: 'NotExposedToRisks', message: /none of the conditional update risks apply/ },
  { name: 'PromQL without a PromQL service is Unknown', update: update(promql('B')), status: 'Unknown', reason: 'EvaluationFailed', message: /^Could not evaluate exposure to update risk B \(no PromQL service is configured/ },
  { name: 'unreachable metrics are Unknown', update: update(promql('B', 'q')), evaluate: evaluator({ q: new Error('ECONNREFUSED') }), status: 'Unknown', reason: 'EvaluationFailed', message: /ECONNREFUSED\)\n {2}B description: B may happen\n {2}B URL: https:\/\/x\/B/ },
  { name: 'an applying risk and an unknown one: False, MultipleReasons', update: update(promql('B', 'q'), always('A')), status: 'False', reason: 'MultipleReasons', message: /Could not evaluate exposure to update risk B[^]*\n\nA happens/ },
  { name: 'an unknown risk and one not applying: Unknown, EvaluationFailed', update: update(promql('B', 'q'), promql('C', 'q0')), evaluate: evaluator({ q: new Error('down'), q0: 0 }), status: 'Unknown', reason: 'EvaluationFailed' },
  {
    name: 'the first rule with an answer decides',
    update: update({ ...promql('B', 'broken'), matchingRules: [{ type: 'PromQL', promql: { promql: 'broken' } }, { type: 'PromQL', promql: { promql: 'q0' } }, { type: 'Always' }] }),
    evaluate: evaluator({ broken: new Error('bad query'), q0: 0 }),
    status: 'True',
    reason: 'NotExposedToRisks',
  },
  {
    name: 'all rules failing: EvaluationFailed with every failure',
    update: update({ ...promql('B', 'x'), matchingRules: [{ type: 'PromQL', promql: { promql: 'x' } }, { type: 'PromQL', promql: { promql: 'y' } }] }),
    evaluate: evaluator({ x: new Error('first'), y: new Error('second') }),
    status: 'Unknown',
    reason: 'EvaluationFailed',
    message: /\[first, second\]/,
  },
  { name: 'an accepted applying risk: AllExposedRisksAccepted', update: update(always('A')), accepted: ['A'], status: 'True', reason: 'AllExposedRisksAccepted', message: /accepted by cluster admins/ },
  { name: 'two applying risks, both accepted', update: update(always('A'), always('C')), accepted: ['A', 'C'], status: 'True', reason: 'AllExposedRisksAccepted' },
  { name: 'one of two applying risks accepted: the other decides', update: update(always('A'), always('C')), accepted: ['A'], status: 'False', reason: 'C', message: /^C happens/ },
  { name: 'an accepted risk that does not apply changes nothing', update: update(promql('B', 'q0')), evaluate: evaluator({ q0: 0 }), accepted: ['B'], status: 'True', reason: 'NotExposedToRisks' },
  { name: 'accepted and unknown: Unknown, EvaluationFailed', update: update(always('A'), promql('B', 'q')), evaluate: evaluator({ q: new Error('down') }), accepted: ['A'], status: 'Unknown', reason: 'EvaluationFailed' },
];
for (const c of riskCases) {
  test(`risks: ${c.name}`, async () => {
    const r = await evaluateConditionalUpdate(c.update, c.evaluate, new Set(c.accepted ?? []));
    assert.equal(r.status, c.status);
    assert.equal(r.reason, c.reason);
    if (c.message) assert.match(r.message, c.message);
  });
}

test('risks: each risk is evaluated once, by the highest version it blocks, then by name', async () => {
  const at = (version: string, ...risks: Risk[]): ConditionalUpdate => ({ release: { version, image: `img-${version}` }, risks });
  const updates = [at('1.0.2', promql('Z', 'z'), promql('A', 'a')), at('1.1.0', promql('M', 'm')), at('1.2.0', promql('Z', 'z'))];
  assert.deepEqual(risksInOrder(updates).map((r) => r.name), ['Z', 'M', 'A']);
  const asked: string[] = [];
  const { conditions, risks } = await evaluateConditionalUpdates(updates, async (rule) => (asked.push(rule.promql!.promql), rule.promql!.promql === 'z'));
  assert.deepEqual(asked, ['z', 'm', 'a']);
  assert.deepEqual(conditions.map((c) => [c.status, c.reason]), [['False', 'Z'], ['True', 'NotExposedToRisks'], ['False', 'Z']]);
  assert.deepEqual([...risks], [['Z', true], ['M', false], ['A', false]]);
});

test('resolve: version-only requests are resolved against the offered updates', () => {
  const available = [{ version: '1.0.1', image: 'img-101' }];
  const conditional = [{ ...update(always('A')), recommended: { type: 'Recommended' as const, status: 'False' as const, reason: 'A', message: 'A happens' } }];
  assert.deepEqual(resolveDesiredUpdate({ version: '1.0.1' }, available, conditional), { version: '1.0.1', image: 'img-101', recommended: 'True' });
  assert.deepEqual(resolveDesiredUpdate({ version: '1.1.0' }, available, conditional), { version: '1.1.0', image: 'img', recommended: 'False', message: 'A happens' });
  assert.deepEqual(resolveDesiredUpdate({ image: 'img-101' }, available, conditional), { version: '1.0.1', image: 'img-101', recommended: 'True' });
  assert.equal(resolveDesiredUpdate({ image: 'elsewhere@sha256:1', version: '2.0.0' }, available, conditional).recommended, 'NotInGraph');
  assert.throws(() => resolveDesiredUpdate({ version: '1.0.9' }, available, conditional), (e: Error) => e instanceof ResolveError && /1\.0\.9 is not among the updates offered.*1\.0\.1, 1\.1\.0/.test(e.message));
  assert.throws(() => resolveDesiredUpdate({ version: '1.1.0', image: 'img-101' }, available, conditional), /asks for version 1\.1\.0 but image img-101 is version 1\.0\.1/);
  assert.throws(() => resolveDesiredUpdate({}, available, conditional), /neither a version nor an image/);
});

const pc = (current: string, target: string, extra: Partial<PreconditionInput> = {}): PreconditionInput => ({ currentVersion: current, target: { version: target, recommended: 'True' }, ...extra });
const upgradeableFalse = { status: 'False' as const, reason: 'AdminAckRequired', message: 'ClusterOperator storage: a manual step is needed' };

const preconditionCases: { name: string; input: PreconditionInput; accepted: boolean; blocking?: string[]; warnings?: string[]; acceptedRisks?: RegExp }[] = [
  { name: 'a patch update passes', input: pc('1.0.0', '1.0.1'), accepted: true },
  { name: 'a minor update passes', input: pc('1.0.2', '1.1.0'), accepted: true },
  { name: 'a downgrade is refused', input: pc('1.1.0', '1.0.2'), accepted: false, blocking: ['ClusterVersionDowngrade'] },
  { name: 'a patch downgrade to an arbitrary earlier z is refused', input: pc('1.0.2', '1.0.0', { previousVersion: '1.0.1' }), accepted: false, blocking: ['ClusterVersionDowngrade'] },
  { name: 'going back to the previous version in the same z-stream is allowed', input: pc('1.0.2', '1.0.1', { previousVersion: '1.0.1' }), accepted: true },
  { name: 'going back to the previous minor is refused', input: pc('1.1.0', '1.0.2', { previousVersion: '1.0.2' }), accepted: false, blocking: ['ClusterVersionDowngrade'] },
  { name: 'a minor skip is refused', input: pc('1.0.2', '1.2.0'), accepted: false, blocking: ['MinorVersionSkip'] },
  { name: 'a major update is refused', input: pc('1.1.1', '2.0.0'), accepted: false, blocking: ['MajorVersionUpdate'] },
  { name: 'Upgradeable=False blocks a minor update, naming the reason', input: pc('1.0.2', '1.1.0', { upgradeable: upgradeableFalse }), accepted: false, blocking: ['UpgradeableFalse'] },
  { name: 'Upgradeable=False does not block a patch update', input: pc('1.0.1', '1.0.2', { upgradeable: upgradeableFalse }), accepted: true },
  { name: 'Upgradeable=Unknown does not block', input: pc('1.0.2', '1.1.0', { upgradeable: { status: 'Unknown' } }), accepted: true },
  { name: 'not recommended is only a warning', input: { currentVersion: '1.0.0', target: { version: '1.0.2', recommended: 'False', message: 'A happens' } }, accepted: true, warnings: ['NotRecommended'] },
  { name: 'not in the graph is only a warning', input: { currentVersion: '1.0.0', target: { version: '1.0.2', recommended: 'NotInGraph' } }, accepted: true, warnings: ['NotRecommended'] },
  {
    name: 'force accepts blocking failures and records them',
    input: pc('1.0.2', '1.2.0', { force: true, upgradeable: upgradeableFalse }),
    accepted: true,
    warnings: ['MinorVersionSkip', 'UpgradeableFalse'],
    acceptedRisks: /MinorVersionSkip: .*\nUpgradeableFalse: .*manual step/,
  },
  { name: 'force accepts a downgrade', input: pc('1.1.0', '1.0.0', { force: true }), accepted: true, warnings: ['ClusterVersionDowngrade'], acceptedRisks: /ClusterVersionDowngrade/ },
];
for (const c of preconditionCases) {
  test(`preconditions: ${c.name}`, () => {
    const r = checkPreconditions(c.input);
    assert.equal(r.accepted, c.accepted);
    assert.deepEqual(r.blocking.map((f) => f.name), c.blocking ?? []);
    assert.deepEqual(r.warnings.map((f) => f.name), c.warnings ?? []);
    for (const f of [...r.blocking, ...r.warnings]) assert.ok(f.message.length > 20, f.message);
    if (c.acceptedRisks) assert.match(r.acceptedRisks ?? '', c.acceptedRisks);
    else assert.equal(r.acceptedRisks, undefined);
  });
}

test('preconditions: the Upgradeable message reaches the administrator', () => {
  const r = checkPreconditions(pc('1.0.2', '1.1.0', { upgradeable: upgradeableFalse }));
  assert.match(r.blocking[0].message, /ClusterOperator storage: a manual step is needed/);
});

test('upstream: the request URL and the retrieval reasons for bad settings', () => {
  const url = graphURL({ upstream: 'http://127.0.0.1:8080', channel: 'stable-1.0', version: '1.0.0', id: 'abc' });
  assert.equal(url.toString(), 'http://127.0.0.1:8080/api/upgrades_info/v1/graph?channel=stable-1.0&arch=amd64&version=1.0.0&id=abc');
  assert.equal(graphURL({ upstream: 'https://api.openshift.com/api/upgrades_info/v1/graph', channel: 'stable-4.14', arch: 'arm64' }).pathname, '/api/upgrades_info/v1/graph');
  assert.throws(() => graphURL({ upstream: 'not a url', channel: 'c' }), (e: Error) => e instanceof RetrievalError && e.reason === 'InvalidURI');
  assert.throws(() => graphURL({ upstream: 'ftp://x', channel: 'c' }), (e: Error) => e instanceof RetrievalError && e.reason === 'InvalidURI');
  assert.throws(() => graphURL({ upstream: 'http://x', channel: '' }), (e: Error) => e instanceof RetrievalError && e.reason === 'NoChannel');
});
