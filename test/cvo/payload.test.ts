// Payload loading and validation: every problem named by file and document, the ignored
// files, and the metadata/image-references agreement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatProblem, fullParse, parseManifestFile, parseManifestName } from '../../src/cvo/payload/manifest.js';
import { loadPayload, PayloadInvalidError, validatePayload, type PayloadFile } from '../../src/cvo/payload/payload.js';
import { tempDir } from './helpers.js';

const metadata = (version = '1.0.0'): PayloadFile => ({ name: 'release-metadata', text: JSON.stringify({ kind: 'cincinnati-metadata-v0', version, previous: [] }) });
const references = (version = '1.0.0'): PayloadFile => ({
  name: 'image-references',
  text: `apiVersion: image.openshift.io/v1\nkind: ImageStream\nmetadata:\n  name: ${version}\nspec:\n  tags:\n  - name: cvo\n    from:\n      kind: DockerImage\n      name: bosun.local/cvo:${version}\n`,
});
const ns = (name: string): string => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;

function problems(files: PayloadFile[]): string[] {
  return validatePayload(files).problems.map(formatProblem);
}

test('a valid payload loads: manifests in name order, documents in order, empty documents skipped', () => {
  const { payload, problems: p } = validatePayload([
    metadata(),
    references(),
    { name: '0000_20_b_x.yaml', text: ns('b') },
    { name: '0000_10_a_x.yaml', text: `${ns('a1')}---\n---\n${ns('a2')}` },
    { name: '0000_30_c_x.json', text: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'a1' } }) },
    { name: 'README.md', text: 'not a manifest: ignored' },
  ]);
  assert.deepEqual(p, []);
  assert.equal(payload!.version, '1.0.0');
  assert.deepEqual(payload!.manifests.map((m) => `${m.file}#${m.document}:${m.object.metadata.name}`), [
    '0000_10_a_x.yaml#0:a1',
    '0000_10_a_x.yaml#2:a2',
    '0000_20_b_x.yaml#0:b',
    '0000_30_c_x.json#0:c',
  ]);
  assert.deepEqual(payload!.manifests[3].gvk, { group: '', version: 'v1', kind: 'ConfigMap' });
});

const broken: { name: string; files: PayloadFile[]; want: string[] }[] = [
  {
    name: 'invalid YAML in the second document',
    files: [metadata(), references(), { name: '0000_10_a_x.yaml', text: `${ns('a')}---\nkind: [unclosed\n` }],
    want: ['release-manifests/0000_10_a_x.yaml (document 1): invalid YAML'],
  },
  {
    name: 'no kind, no apiVersion',
    files: [metadata(), references(), { name: '0000_10_a_x.yaml', text: 'metadata:\n  name: x\n' }],
    want: ['release-manifests/0000_10_a_x.yaml (document 0): apiVersion is missing', 'release-manifests/0000_10_a_x.yaml (document 0): kind is missing'],
  },
  {
    name: 'no metadata.name',
    files: [metadata(), references(), { name: '0000_10_a_x.yaml', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n' }],
    want: ['release-manifests/0000_10_a_x.yaml (document 0): metadata.name is missing'],
  },
  {
    name: 'invalid name and kind',
    files: [metadata(), references(), { name: '0000_10_a_x.yaml', text: 'apiVersion: v1\nkind: config map\nmetadata:\n  name: Bad_Name\n' }],
    want: ['release-manifests/0000_10_a_x.yaml (document 0): kind "config map" is not a valid kind', 'release-manifests/0000_10_a_x.yaml (document 0): metadata.name "Bad_Name" is not a valid name'],
  },
  {
    name: 'a document that is not an object',
    files: [metadata(), references(), { name: '0000_10_a_x.yaml', text: '- a\n- b\n' }],
    want: ['release-manifests/0000_10_a_x.yaml (document 0): the document is not a mapping'],
  },
  {
    name: 'the same object twice',
    files: [metadata(), references(), { name: '0000_10_a_x.yaml', text: ns('a') }, { name: '0000_20_b_x.yaml', text: `${ns('b')}---\n${ns('a')}` }],
    want: ['release-manifests/0000_20_b_x.yaml (document 1): duplicate namespace "a", first defined in release-manifests/0000_10_a_x.yaml (document 0)'],
  },
  {
    name: 'image-references named for another version',
    files: [metadata('1.0.1'), references('1.0.0')],
    want: ['release-manifests/image-references: metadata.name "1.0.0" does not match the release version "1.0.1" in release-manifests/release-metadata'],
  },
  {
    name: 'release-metadata missing, image-references not an ImageStream',
    files: [{ name: 'image-references', text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n' }],
    want: ['release-manifests/release-metadata: missing', 'release-manifests/image-references: must be an image.openshift.io/v1 ImageStream'],
  },
  {
    name: 'release-metadata with a bad version and kind',
    files: [{ name: 'release-metadata', text: '{"kind":"other","version":"one"}' }, references()],
    want: ['release-manifests/release-metadata: kind must be "cincinnati-metadata-v0"', 'release-manifests/release-metadata: version "one" is not a semantic version'],
  },
];

for (const c of broken) {
  test(`payload validation names file and document — ${c.name}`, () => {
    const got = problems(c.files);
    assert.equal(got.length, c.want.length, got.join('\n'));
    c.want.forEach((w, i) => assert.ok(got[i].startsWith(w), `${got[i]}\n  does not start with\n${w}`));
  });
}

test('loadPayload reads a release directory and throws PayloadInvalidError listing every problem', (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'release-manifests'));
  mkdirSync(join(dir, 'manifests'));
  for (const f of [metadata(), references()]) writeFileSync(join(dir, 'release-manifests', f.name), f.text);
  writeFileSync(join(dir, 'release-manifests', '0000_10_a_x.yaml'), ns('a'));
  writeFileSync(join(dir, 'manifests', '0000_00_cvo_x.yaml'), ns('a'));
  mkdirSync(join(dir, 'release-manifests', 'subdir.yaml'));
  const payload = loadPayload(dir);
  assert.equal(payload.manifests.length, 1);
  assert.equal(payload.cvoManifests.length, 1, 'manifests/ may repeat release-manifests/ objects');

  writeFileSync(join(dir, 'release-manifests', '0000_20_b_x.yaml'), 'apiVersion: v1\nkind: Namespace\n---\n: :\n');
  assert.throws(() => loadPayload(dir), (err: unknown) => {
    assert.ok(err instanceof PayloadInvalidError);
    assert.equal(err.problems.length, 2);
    assert.match(err.message, /0000_20_b_x\.yaml \(document 0\): metadata is missing/);
    assert.match(err.message, /0000_20_b_x\.yaml \(document 1\)/);
    return true;
  });
  assert.throws(() => loadPayload(join(dir, 'nowhere')), /no release-manifests\/ directory/);
});

test('file names parse as OpenShift parses them', () => {
  assert.deepEqual(parseManifestName('0000_00_cluster-version-operator_01_clusterversions.crd.yaml'), { runLevel: 0, component: 'cluster-version-operator' });
  assert.deepEqual(parseManifestName('0000_80_machine-config_00_namespace.yaml'), { runLevel: 80, component: 'machine-config' });
  assert.equal(parseManifestName('0000_10_nounderscore.yaml'), undefined);
  assert.equal(parseManifestName('01_namespace.yaml'), undefined);
  assert.equal(parseManifestName('0000_xx_a_b.yaml'), undefined);
});

test('the fast parser reads every manifest of the payload and the edge cases as the full parser does', () => {
  const dir = fileURLToPath(new URL('../../release-payload/manifests/', import.meta.url));
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  assert.ok(files.length > 50, `the payload's manifests in ${dir}`);
  const edges: Array<[string, string]> = [
    ['leading-and-trailing.yaml', '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\n'],
    ['empty-and-comment.yaml', '# c\n---\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: x}\n...\n'],
    ['scalars.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x, annotations: {t: "2024-01-01"}}\ndata: {when: 2024-01-01T00:00:00Z, yes: yes, on: on, octal: 0o17, old: 012, hex: 0x1F, sep: 1_000, nothing: ~, e: 1e3}\n'],
    ['json.yaml', '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d", "namespace": "x"}}'],
    ['duplicate-key.yaml', 'apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: e}\n'],
    ['not-an-object.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\n---\n- a list\n'],
    ['invalid.yaml', 'apiVersion: v1\nkind: [\n'],
  ];
  const texts: Array<[string, string]> = [...files.map((f): [string, string] => [f, readFileSync(join(dir, f), 'utf8')]), ...edges];
  for (const [file, text] of texts) assert.deepEqual(parseManifestFile(file, text), fullParse(file, text), file);
  // The full parser's problems, where there are some, are the ones reported.
  assert.match(parseManifestFile('duplicate-key.yaml', edges[4][1]).problems[0].message, /invalid YAML: Map keys must be unique/);
  assert.equal(parseManifestFile('not-an-object.yaml', edges[5][1]).problems[0].document, 1);
});
