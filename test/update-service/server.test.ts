// The update service over HTTP: the Cincinnati API (media types, errors, channels), the release
// and signature stores, reload on graph-data change (and keeping the old graph on a bad one), and
// `bosun adm upgrade recommend` reading it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpdateService, negotiate, type UpdateService } from '../../src/update-service/server.js';
import { writeReleasesFrom } from '../helpers/release-store.js';
import { runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

let dir: string;
let graphData: string;
let svc: UpdateService;
let pullspecs: Map<string, string>;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bosun-updatesvc-'));
  graphData = join(dir, 'graph-data');
  cpSync('release-payload/channels', join(graphData, 'channels'), { recursive: true });
  cpSync('release-payload/blocked-edges', join(graphData, 'blocked-edges'), { recursive: true });
  pullspecs = writeReleasesFrom('release-payload/releases', join(dir, 'store'));
  const digest = pullspecs.get('1.0.1')!.split('@')[1].replace(':', '=');
  mkdirSync(join(dir, 'signatures', digest), { recursive: true });
  writeFileSync(join(dir, 'signatures', digest, 'signature-1'), 'sig-bytes');
  svc = await startUpdateService({ graphData, releases: join(dir, 'store'), signatures: join(dir, 'signatures'), port: 0, reloadDelayMs: 50 });
});

after(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

const graph = (query: string, accept = 'application/json'): Promise<Response> => fetch(`${svc.url}/api/upgrades_info/v1/graph${query}`, { headers: { accept } });

test('server: both Cincinnati media types are served with the channel graph', async () => {
  for (const type of ['application/json', 'application/vnd.redhat.cincinnati.v1+json']) {
    const r = await graph('?channel=stable-1.0&arch=amd64&id=01234567-0123-0123-0123-0123456789ab&version=1.0.0', type);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type')?.split(';')[0], type);
    const body = (await r.json()) as { nodes: { version: string }[]; edges: number[][]; conditionalEdges: unknown[] };
    assert.deepEqual(body.nodes.map((n) => n.version), ['1.0.0', '1.0.1', '1.0.2']);
    assert.equal(body.edges.length, 2); // 1.0.0->1.0.1, 1.0.1->1.0.2; 1.0.0->1.0.2 is conditional
    assert.equal(body.conditionalEdges.length, 1);
  }
});

test('server: errors are {kind, value} with Cincinnati codes', async () => {
  const cases: [string, string, number, string][] = [
    ['', 'application/json', 400, 'missing_params'],
    ['?channel=', 'application/json', 400, 'missing_params'],
    ['?channel=Stable_1.0', 'application/json', 400, 'invalid_params'],
    ['?channel=a&channel=b', 'application/json', 400, 'invalid_params'],
    ['?channel=stable-1.0&arch=AMD/64', 'application/json', 400, 'invalid_params'],
    ['?channel=stable-1.0', 'text/html', 406, 'invalid_content_type'],
  ];
  for (const [query, accept, status, kind] of cases) {
    const r = await graph(query, accept);
    assert.equal(r.status, status, query);
    const body = (await r.json()) as { kind: string; value: string };
    assert.equal(body.kind, kind, query);
    assert.ok(body.value.length > 0);
  }
  const r = await fetch(`${svc.url}/no/such/route`);
  assert.equal(r.status, 404);
  assert.equal(((await r.json()) as { kind: string }).kind, 'not_found');
});

test('server: an unknown channel answers an empty graph; wildcards get JSON', async () => {
  const r = await graph('?channel=stable-9.9', '*/*');
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { version: 1, nodes: [], edges: [], conditionalEdges: [] });
});

test('server: Accept negotiation honours q-values', () => {
  assert.equal(negotiate(undefined), 'application/json');
  assert.equal(negotiate('text/html, application/vnd.redhat.cincinnati.v1+json;q=0.5'), 'application/vnd.redhat.cincinnati.v1+json');
  assert.equal(negotiate('application/json;q=0, text/plain'), undefined);
  assert.equal(negotiate('application/json;q=0.2, application/vnd.redhat.cincinnati.v1+json'), 'application/vnd.redhat.cincinnati.v1+json');
});

test('server: release payloads and signatures are served as files; traversal is refused', async () => {
  const list = (await (await fetch(`${svc.url}/releases`)).json()) as { version: string; url: string }[];
  assert.equal(list.length, 5);
  const r101 = list.find((r) => r.version === '1.0.1')!;
  const files = (await (await fetch(r101.url)).json()) as { files: string[] };
  assert.deepEqual(files.files, ['release-manifests/release-metadata']);
  const meta = (await (await fetch(`${r101.url}release-manifests/release-metadata`)).json()) as { version: string };
  assert.equal(meta.version, '1.0.1');
  const digest = pullspecs.get('1.0.1')!.split('@')[1].replace(':', '=');
  const sig = await fetch(`${svc.url}/signatures/${digest}/signature-1`);
  assert.equal(sig.status, 200);
  assert.equal(await sig.text(), 'sig-bytes');
  assert.equal((await fetch(`${svc.url}/signatures/${digest}/signature-2`)).status, 404);
  assert.equal((await fetch(`${svc.url}/signatures/sha256=abc/signature-1`)).status, 404);
  assert.equal((await fetch(`${svc.url}/releases/${digest}/..%2F..%2Fetc%2Fpasswd`)).status, 404);
  assert.equal((await fetch(`${svc.url}/releases/nothing-here`)).status, 404);
});

test('server: `adm upgrade recommend` lists recommended and conditional updates', async () => {
  const r = await runBosun(['adm', 'upgrade', 'recommend', '--upstream', svc.url, '--channel', 'stable-1.0', '--version', '1.0.0']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Recommended updates from 1\.0\.0:\n\n\s+VERSION\s+IMAGE\n\s+1\.0\.1\s+bosun\.local\/release@sha256:/);
  assert.doesNotMatch(r.stdout.split('Updates with known risks')[0], /1\.0\.2/);
  assert.match(r.stdout, /Version: 1\.0\.2[\s\S]*Recommended: False \(LeaderElectionRestart\)[\s\S]*Risk: LeaderElectionRestart \[Always\]/);
  const missing = await runBosun(['adm', 'upgrade', 'recommend', '--upstream', svc.url, '--channel', 'stable-1.0', '--version', '1.1.0']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /VersionNotFound: version 1\.1\.0 is not in the channel/);
});

test('server: graph data changes are picked up; a bad change keeps the previous graph', async () => {
  const edgesFrom101 = async (): Promise<string[]> => {
    const body = (await (await graph('?channel=stable-1.1')).json()) as { nodes: { version: string }[]; edges: number[][] };
    return body.edges.filter(([f]) => body.nodes[f].version === '1.0.1').map(([, t]) => body.nodes[t].version).sort();
  };
  assert.deepEqual(await edgesFrom101(), ['1.0.2', '1.1.0']);
  const generation = svc.generation();
  const file = join(graphData, 'blocked-edges', 'test-block.yaml');
  writeFileSync(file, 'to: 1.1.0\nfrom: 1[.]0[.]1[+].*\n');
  await eventually('a reload', () => svc.generation() > generation, { timeoutMs: 5000, intervalMs: 25 });
  assert.deepEqual(await edgesFrom101(), ['1.0.2']);

  const good = svc.generation();
  writeFileSync(join(graphData, 'channels', 'broken.yaml'), 'name: [not a string\n');
  await new Promise((r) => setTimeout(r, 400)); // longer than the debounce: the reload has run and failed
  assert.equal(svc.generation(), good);
  assert.deepEqual(await edgesFrom101(), ['1.0.2']);

  unlinkSync(join(graphData, 'channels', 'broken.yaml'));
  unlinkSync(file);
  await eventually('the repaired reload', () => svc.generation() > good, { timeoutMs: 5000, intervalMs: 25 });
  assert.deepEqual(await edgesFrom101(), ['1.0.2', '1.1.0']);
});

test('server: a release with invalid metadata fails the reload and names the release', async () => {
  const good = svc.generation();
  const bad = join(dir, 'store', `sha256=${'e'.repeat(64)}`, 'release-manifests');
  mkdirSync(bad, { recursive: true });
  writeFileSync(join(bad, 'release-metadata'), JSON.stringify({ kind: 'cincinnati-metadata-v0', version: 'one' }));
  assert.equal(svc.reload(), false);
  assert.equal(svc.generation(), good);
  rmSync(join(dir, 'store', `sha256=${'e'.repeat(64)}`), { recursive: true });
  assert.equal(svc.reload(), true);
});
