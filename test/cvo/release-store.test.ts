// The release store and `bosun release build`: content-addressed, deterministic digests,
// version substitution, release metadata from releases/<V>.yaml, and the CLI end to end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { loadPayload } from '../../src/cvo/payload/payload.js';
import {
  computeReleaseDigest, digestOfFiles, digestOfPullspec, listReleases, resolvePullspec, writeRelease,
} from '../../src/release/release-store.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { runBosun } from '../helpers/cli.js';
import { tempDir } from './helpers.js';

const releasePayload = join(repositoryRoot, 'release-payload');
const cvoManifests = join(repositoryRoot, 'manifests');

/** A small release source tree with a Deployment using the version placeholder. */
function sources(dir: string, extra: Record<string, string> = {}): string {
  mkdirSync(join(dir, 'manifests'), { recursive: true });
  writeFileSync(join(dir, 'manifests', '0000_10_demo_00_ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n');
  writeFileSync(
    join(dir, 'manifests', '0000_10_demo_01_deployment.yaml'),
    [
      'apiVersion: apps/v1', 'kind: Deployment', 'metadata:', '  name: demo-operator', '  namespace: demo', 'spec:', '  template:', '    spec:', '      containers:',
      '      - name: operator', '        image: bosun.local/demo-operator:{{VERSION}}', '        env:', '        - name: RELEASE_VERSION', '          value: "{{VERSION}}"', '',
    ].join('\n'),
  );
  for (const [path, text] of Object.entries(extra)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

test('the digest covers names and contents and nothing else', () => {
  const a = digestOfFiles({ 'release-manifests/a.yaml': 'x', 'release-manifests/b.yaml': 'y' });
  assert.equal(a, digestOfFiles({ 'release-manifests/b.yaml': 'y', 'release-manifests/a.yaml': 'x' }), 'insertion order does not matter');
  assert.notEqual(a, digestOfFiles({ 'release-manifests/a.yaml': 'x', 'release-manifests/b.yaml': 'y ' }));
  assert.notEqual(a, digestOfFiles({ 'release-manifests/a.yaml': 'x', 'release-manifests/c.yaml': 'y' }));
  assert.match(a, /^[0-9a-f]{64}$/);
});

test('same sources and version give the same pullspec in any store; another version another one', (t) => {
  const src = sources(tempDir(t));
  const one = buildRelease({ version: '1.0.0', from: src, store: tempDir(t) });
  const two = buildRelease({ version: '1.0.0', from: src, store: tempDir(t) });
  const other = buildRelease({ version: '1.0.1', from: src, store: one.dir.replace(/\/sha256=.*$/, '') });
  assert.equal(one.pullspec, two.pullspec);
  assert.notEqual(one.pullspec, other.pullspec);
  assert.equal(computeReleaseDigest(one.dir), one.digest, 'the stored files hash to the digest');
  assert.match(one.pullspec, /^bosun\.local\/release@sha256:[0-9a-f]{64}$/);
});

test('build substitutes the version, lists images by component and loads back', (t) => {
  const store = tempDir(t);
  const built = buildRelease({ version: '1.2.3', from: sources(tempDir(t)), store });
  const payload = loadPayload(built.dir);
  assert.equal(payload.version, '1.2.3');
  const deployment = payload.manifests.find((m) => m.gvk.kind === 'Deployment')!.object as any;
  assert.equal(deployment.spec.template.spec.containers[0].image, 'bosun.local/demo-operator:1.2.3');
  assert.deepEqual(deployment.spec.template.spec.containers[0].env, [{ name: 'RELEASE_VERSION', value: '1.2.3' }]);
  assert.deepEqual(payload.imageReferences.spec.tags, [{ name: 'demo-operator', from: { kind: 'DockerImage', name: 'bosun.local/demo-operator:1.2.3' } }]);
  assert.equal(payload.imageReferences.metadata.name, '1.2.3');
  assert.deepEqual(payload.metadata, { kind: 'cincinnati-metadata-v0', version: '1.2.3', previous: [], next: [], metadata: {} });
});

test('previous and channels come from releases/<V>.yaml', (t) => {
  const src = sources(tempDir(t), { 'releases/1.1.0.yaml': 'version: 1.1.0\nprevious: [1.0.0, 1.0.1]\nchannels: [candidate-1.1, fast-1.1]\n' });
  const built = buildRelease({ version: '1.1.0', from: src, store: tempDir(t) });
  const metadata = JSON.parse(readFileSync(join(built.dir, 'release-manifests', 'release-metadata'), 'utf8'));
  assert.deepEqual(metadata.previous, ['1.0.0', '1.0.1']);
  assert.equal(metadata.metadata['io.openshift.upgrades.graph.release.channels'], 'candidate-1.1,fast-1.1');
});

test('build refuses bad input, naming the file', (t) => {
  assert.throws(() => buildRelease({ version: 'one', from: sources(tempDir(t)), store: tempDir(t) }), /not a semantic version/);
  const unknown = sources(tempDir(t), { 'manifests/0000_20_x_y.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{NAME}}\n' });
  assert.throws(() => buildRelease({ version: '1.0.0', from: unknown, store: tempDir(t) }), /0000_20_x_y\.yaml: unknown placeholder \{\{NAME\}\}/);
  const invalid = sources(tempDir(t), { 'manifests/0000_20_x_y.yaml': 'apiVersion: v1\nkind: ConfigMap\n' });
  const store = tempDir(t);
  assert.throws(() => buildRelease({ version: '1.0.0', from: invalid, store }), /release-manifests\/0000_20_x_y\.yaml \(document 0\): metadata is missing/);
  assert.deepEqual(readdirSync(store), [], 'nothing is written for an invalid payload');
});

test('the store lists releases by version and resolves pullspecs', (t) => {
  const store = tempDir(t);
  const src = sources(tempDir(t));
  const b = buildRelease({ version: '1.10.0', from: src, store });
  const a = buildRelease({ version: '1.9.0', from: src, store });
  const broken = writeRelease(store, { 'release-manifests/0000_10_x_y.yaml': 'not: [valid' });
  assert.deepEqual(listReleases(store).map((r) => r.version), ['1.9.0', '1.10.0', undefined]);
  assert.equal(resolvePullspec(store, a.pullspec), a.dir);
  assert.equal(resolvePullspec(store, `quay.io/elsewhere/release@sha256:${b.digest}`), b.dir, 'the store is keyed by digest');
  assert.equal(resolvePullspec(store, broken.pullspec), broken.dir, 'broken payloads can be stored for tests; loading them fails');
  assert.throws(() => resolvePullspec(store, `bosun.local/release@sha256:${'0'.repeat(64)}`), /has no release/);
  assert.throws(() => digestOfPullspec('bosun.local/release:1.0.0'), /not a release pullspec by digest/);
});

test("bosun's own release sources build and load, with the CVO manifests in manifests/", (t) => {
  const built = buildRelease({ version: '1.0.0', from: releasePayload, cvoManifests, store: tempDir(t) });
  const payload = loadPayload(built.dir);
  const names = payload.manifests.map((m) => `${m.gvk.kind}/${m.object.metadata.name}`);
  for (const want of [
    'Namespace/openshift-cluster-version', 'Namespace/openshift-config', 'Namespace/openshift-config-managed',
    'CustomResourceDefinition/clusterversions.config.openshift.io', 'CustomResourceDefinition/clusteroperators.config.openshift.io',
    'CustomResourceDefinition/infrastructures.config.openshift.io', 'Deployment/cluster-version-operator',
  ]) assert.ok(names.includes(want), `${want} is in the payload`);
  assert.ok(payload.cvoManifests.some((m) => m.gvk.kind === 'Deployment'));
  for (const m of payload.manifests) assert.equal(m.object.metadata.annotations?.['include.release.openshift.io/self-managed-high-availability'], 'true', `${m.file} is in the default profile`);
  const env = (payload.manifests.find((m) => m.gvk.kind === 'Deployment')!.object as any).spec.template.spec.containers[0].env;
  assert.deepEqual(env.find((e: { name: string }) => e.name === 'RELEASE_VERSION'), { name: 'RELEASE_VERSION', value: '1.0.0' });
});

test('bosun release build and bosun adm release graph, end to end', async (t) => {
  const store = tempDir(t);
  const src = tempDir(t);
  cpSync(releasePayload, src, { recursive: true, dereference: true });
  const first = await runBosun(['release', 'build', '--version', '1.0.0', '--from', src, '--out', store]);
  assert.equal(first.code, 0, first.stderr);
  const pullspec = first.stdout.trim();
  assert.match(pullspec, /^bosun\.local\/release@sha256:[0-9a-f]{64}$/);
  const again = await runBosun(['release', 'build', '--version', '1.0.0', '--from', src, '--out', store]);
  assert.equal(again.stdout.trim(), pullspec);

  const graph = await runBosun(['adm', 'release', 'graph', '--store', store, pullspec]);
  assert.equal(graph.code, 0, graph.stderr);
  assert.match(graph.stdout, /^digraph tasks \{/);
  assert.match(graph.stdout, /label="00-cluster-version-operator, \d+ manifests"/);
  assert.match(graph.stdout, /label="03-config-operator, \d+ manifests"/);
  assert.match(graph.stdout, /0 -> 1;/);

  const init = await runBosun(['adm', 'release', 'graph', '--mode', 'Initializing', join(store, `sha256=${pullspec.split(':')[1]}`)]);
  assert.equal(init.code, 0, init.stderr);
  assert.doesNotMatch(init.stdout, /->/);

  const otherProfile = await runBosun(['adm', 'release', 'graph', '--profile', 'no-such-profile', '--store', store, pullspec]);
  assert.equal(otherProfile.code, 0, otherProfile.stderr);
  assert.doesNotMatch(otherProfile.stdout, /label=/, 'no manifest of bosun is in a profile it does not name');

  const bad = await runBosun(['adm', 'release', 'graph', '--mode', 'Sideways', '--store', store, pullspec]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--mode must be one of Updating, Initializing, Reconciling/);
  const missing = await runBosun(['release', 'build', '--version', '1.0.0', '--from', join(src, 'nope'), '--out', store]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /nope\/manifests does not exist/);
});

test('the CRDs in manifests/ carry OpenShift printer columns and the co short name', () => {
  const cv = parseYaml(readFileSync(join(cvoManifests, '0000_00_cluster-version-operator_01_clusterversions.crd.yaml'), 'utf8'));
  assert.deepEqual(
    cv.spec.versions[0].additionalPrinterColumns.map((c: { name: string; jsonPath: string }) => `${c.name} ${c.jsonPath}`),
    [
      'Version .status.history[?(@.state=="Completed")].version',
      'Available .status.conditions[?(@.type=="Available")].status',
      'Progressing .status.conditions[?(@.type=="Progressing")].status',
      'Since .status.conditions[?(@.type=="Progressing")].lastTransitionTime',
      'Status .status.conditions[?(@.type=="Progressing")].message',
    ],
  );
  const co = parseYaml(readFileSync(join(cvoManifests, '0000_00_cluster-version-operator_01_clusteroperators.crd.yaml'), 'utf8'));
  assert.deepEqual(co.spec.names.shortNames, ['co']);
  assert.deepEqual(co.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name), ['Version', 'Available', 'Progressing', 'Degraded', 'Since']);
  assert.deepEqual(co.spec.versions[0].subresources, { status: {} });
});
