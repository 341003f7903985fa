// File-Based Catalogs, pure: operator-registry's own test catalog (test/fixtures/olm) resolves the
// channel heads opm does; every rule of `opm validate` refuses a bad catalog naming the blob; the
// resolver's initial choice, upgrades one replaces step at a time, skips and skipRange jumps, and
// dependencies (olm.gvk.required, olm.package.required) with messages naming what is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { InvalidCatalogError, bundleCsv, loadCatalog, type Catalog } from '../../src/olm/fbc.js';
import { dependencies, nextUpgrade, resolveInitial, ResolutionError, type CatalogRef } from '../../src/olm/resolve.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/olm/${name}`, import.meta.url), 'utf8');
const LATEST = fixture('operator-registry-latest.yaml');

test('operator-registry\'s test catalog: packages, channels, the heads opm resolves, inline objects decoded', () => {
  const catalog = loadCatalog({ 'index.yaml': LATEST });
  const heads: Record<string, string> = Object.fromEntries([...catalog.packages.values()].flatMap((p) => [...p.channels.values()].map((c) => [`${p.name}/${c.name}`, c.head])));
  assert.deepEqual(heads, { 'bar/alpha': 'bar.v1.0.0', 'bar/stable': 'bar.v1.0.0', 'baz/stable': 'baz.v1.1.0', 'foo/beta': 'foo.v0.3.1' });
  // opm's heads-only rendering of the same catalog (operator-registry's expected output): each
  // channel of it keeps only its head where nothing depends on older bundles.
  const expected = parseAllDocuments(fixture('operator-registry-exp-headsonly.yaml')).map((d) => d.toJS());
  for (const channel of expected.filter((b) => b.schema === 'olm.channel' && b.package !== 'bar')) {
    assert.deepEqual(channel.entries.map((e: { name: string }) => e.name), [(heads as Record<string, string>)[String(`${channel.package}/${channel.name}`)]]);
  }
  const bundles = expected.filter((b) => b.schema === 'olm.bundle').map((b) => b.name);
  for (const head of Object.values(heads)) assert.ok(bundles.includes(head), head);
  const foo = catalog.packages.get('foo')!.bundles.get('foo.v0.3.1')!;
  assert.equal(foo.version, '0.3.1');
  assert.deepEqual(foo.objects.map((o) => o.kind).sort(), ['ClusterServiceVersion', 'CustomResourceDefinition']);
  assert.equal(bundleCsv(foo)?.metadata.name, 'foo.v0.3.1');
  assert.deepEqual(foo.requires, [{ group: 'test.bar', version: 'v1alpha1', kind: 'Bar' }]);
  assert.deepEqual(foo.requiresPackages, [{ packageName: 'bar', versionRange: '<0.2.0' }]);
});

test('JSON streams as opm writes catalog.json, and several files', () => {
  const pkg = { schema: 'olm.package', name: 'p', defaultChannel: 'c' };
  const ch = { schema: 'olm.channel', package: 'p', name: 'c', entries: [{ name: 'p.v1' }] };
  const bundle = { schema: 'olm.bundle', package: 'p', name: 'p.v1', image: 'x', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }] };
  const catalog = loadCatalog({ 'a.json': `${JSON.stringify(pkg, null, 2)}\n${JSON.stringify(ch)}`, 'b.yaml': JSON.stringify(bundle) });
  assert.equal(catalog.packages.get('p')!.channels.get('c')!.head, 'p.v1');
});

const PKG = 'schema: olm.package\nname: p\ndefaultChannel: stable\n';
const bundle = (name: string, version: string, extra = '') => `---\nschema: olm.bundle\npackage: p\nname: ${name}\nimage: example/${name}\nproperties:\n- {type: olm.package, value: {packageName: p, version: "${version}"}}\n${extra}`;
const invalid = (files: Record<string, string>): string => {
  try {
    loadCatalog(files);
  } catch (e) {
    assert.ok(e instanceof InvalidCatalogError, String(e));
    return e.message;
  }
  assert.fail('the catalog was accepted');
};

test('opm\'s rules: each bad catalog is refused with a message naming the blob', () => {
  const table: Array<[string, string, RegExp]> = [
    ['not YAML', 'schema: [', /^invalid catalog: c\.yaml: not YAML or JSON/],
    ['no schema', 'name: x\n', /c\.yaml#1: the blob has no schema/],
    ['no default channel', `${PKG.replace('defaultChannel: stable\n', '')}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}]\n${bundle('p.v1', '1.0.0')}`, /c\.yaml#1 \(olm\.package "p"\): default channel must be set/],
    ['default channel missing', `${PKG}---\nschema: olm.channel\npackage: p\nname: fast\nentries: [{name: p.v1}]\n${bundle('p.v1', '1.0.0')}`, /default channel "stable" not found/],
    ['entry not a bundle', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}, {name: p.v2, replaces: p.v1}]\n${bundle('p.v1', '1.0.0')}`, /c\.yaml#2 \(olm\.channel "stable"\): entry "p\.v2" is not a bundle of package "p"/],
    ['two heads', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}, {name: p.v2}]\n${bundle('p.v1', '1.0.0')}${bundle('p.v2', '2.0.0')}`, /multiple channel heads found in graph: p\.v1, p\.v2/],
    ['cycle', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1, replaces: p.v2}, {name: p.v2, replaces: p.v1}, {name: p.v3, replaces: p.v2}]\n${bundle('p.v1', '1.0.0')}${bundle('p.v2', '2.0.0')}${bundle('p.v3', '3.0.0')}`, /detected cycle in replaces chain of upgrade graph: p\.v3 -> p\.v2 -> p\.v1 -> p\.v2/],
    ['bad version', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}]\n${bundle('p.v1', 'one')}`, /c\.yaml#3 \(olm\.bundle "p\.v1"\): version "one" of its olm\.package property is not a semantic version/],
    ['bad skipRange', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1, skipRange: "not a range"}]\n${bundle('p.v1', '1.0.0')}`, /invalid skipRange "not a range"/],
    ['bundle in no channel', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}]\n${bundle('p.v1', '1.0.0')}${bundle('p.v9', '9.0.0')}`, /c\.yaml#4 \(olm\.bundle "p\.v9"\): bundle "p\.v9" not found in any channel entries/],
    ['bad inline object', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}]\n${bundle('p.v1', '1.0.0', '- {type: olm.bundle.object, value: {data: "bm90IGEgbWFuaWZlc3Q="}}\n')}`, /c\.yaml#3 \(olm\.bundle "p\.v1"\): properties\[1\] \(olm\.bundle\.object\): the manifest has no apiVersion/],
    ['duplicate version', `${PKG}---\nschema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}, {name: p.v1b, replaces: p.v1}]\n${bundle('p.v1', '1.0.0')}${bundle('p.v1b', '1.0.0')}`, /version 1\.0\.0 of package "p" is also bundle "p\.v1"'s/],
    ['unknown package', `${PKG}---\nschema: olm.channel\npackage: q\nname: stable\nentries: [{name: q.v1}]\n`, /c\.yaml#2 \(olm\.channel "stable"\): package "q" not found/],
  ];
  for (const [what, content, pattern] of table) assert.match(invalid({ 'c.yaml': content }), pattern, what);
});

// A channel: v1 ← v2 ← v3 (replaces), v4 replaces v3 and skips v3b, v5 with skipRange <5.0.0.
const GRAPH = `${PKG}---
schema: olm.channel
package: p
name: stable
entries:
- {name: p.v1}
- {name: p.v2, replaces: p.v1}
- {name: p.v3, replaces: p.v2}
- {name: p.v3b, replaces: p.v3}
- {name: p.v4, replaces: p.v3, skips: [p.v3b]}
---
schema: olm.channel
package: p
name: fast
entries:
- {name: p.v4}
- {name: p.v5, replaces: p.v4, skipRange: "<5.0.0"}
${bundle('p.v1', '1.0.0')}${bundle('p.v2', '2.0.0')}${bundle('p.v3', '3.0.0')}${bundle('p.v3b', '3.1.0')}${bundle('p.v4', '4.0.0')}${bundle('p.v5', '5.0.0')}`;

test('resolution: channel head or startingCSV; upgrades one replaces step at a time, skipped bundles passed over, skipRange in one jump', () => {
  const catalog: Catalog = loadCatalog({ 'c.yaml': GRAPH });
  const source: CatalogRef = { name: 'cat', namespace: 'ns', catalog };
  assert.equal(resolveInitial(source, 'p', undefined).bundle.name, 'p.v4');
  assert.equal(resolveInitial(source, 'p', 'fast').bundle.name, 'p.v5');
  assert.equal(resolveInitial(source, 'p', 'stable', 'p.v1').bundle.name, 'p.v1');
  const pkg = catalog.packages.get('p')!;
  const stable = pkg.channels.get('stable')!;
  const walk: string[] = [];
  for (let at: string | undefined = 'p.v1'; at; at = nextUpgrade(pkg, stable, { name: at })?.name) walk.push(at);
  assert.deepEqual(walk, ['p.v1', 'p.v2', 'p.v3', 'p.v4'], 'one step at a time; p.v3b skipped');
  assert.equal(nextUpgrade(pkg, stable, { name: 'p.v3b' })?.name, 'p.v4', 'a skipped bundle upgrades to the one skipping it');
  assert.equal(nextUpgrade(pkg, pkg.channels.get('fast')!, { name: 'p.v2', version: '2.0.0' })?.name, 'p.v5', 'skipRange jumps');
  assert.equal(nextUpgrade(pkg, pkg.channels.get('fast')!, { name: 'p.v5' }), undefined);
  assert.throws(() => resolveInitial(source, 'nope', undefined), (e: Error) => e instanceof ResolutionError && /package "nope" not found in catalog ns\/cat \(it has: p\)/.test(e.message));
  assert.throws(() => resolveInitial(source, 'p', 'beta'), /channel "beta" of package "p" not found in catalog ns\/cat \(its channels: fast, stable\)/);
  assert.throws(() => resolveInitial(source, 'p', 'fast', 'p.v1'), /startingCSV "p\.v1" is not in channel "fast"/);
});

test('dependencies: the bundles that provide a required API or package, or a message naming the missing requirement', () => {
  const source: CatalogRef = { name: 'latest', namespace: 'ns', catalog: loadCatalog({ 'index.yaml': LATEST }) };
  const foo = resolveInitial(source, 'foo', undefined);
  const deps = dependencies(foo, [source], { apis: [], packages: [] });
  assert.deepEqual(deps.map((d) => d.bundle.name), ['bar.v0.1.0'], 'bar <0.2.0 providing test.bar/v1alpha1 Bar, as opm\'s heads-only rendering keeps it');
  assert.deepEqual(dependencies(foo, [source], { apis: [{ group: 'test.bar', version: 'v1alpha1', kind: 'Bar' }], packages: [{ packageName: 'bar', version: '0.1.5' }] }), []);
  const alone: CatalogRef = { ...source, catalog: { packages: new Map([['foo', source.catalog.packages.get('foo')!]]) } };
  assert.throws(() => dependencies(resolveInitial(alone, 'foo', undefined), [alone], { apis: [], packages: [] }),
    /bundle foo\.v0\.3\.1 \(package "foo", channel "beta", catalog ns\/latest\) requires package "bar" in version range <0\.2\.0, which is not installed and which no catalog offers/);
  assert.throws(() => dependencies(resolveInitial(alone, 'foo', undefined), [alone], { apis: [], packages: [{ packageName: 'bar', version: '0.1.5' }] }),
    /bundle foo\.v0\.3\.1 \(package "foo", channel "beta", catalog ns\/latest\) requires API test\.bar\/v1alpha1, Kind=Bar, which no installed operator provides and no bundle of any catalog offers/);
});
