// The package server behind the API server's aggregator, read with the real kubectl:
// `kubectl get packagemanifests -n NS` lists each READY catalog's packages (NAME, CATALOG, AGE),
// labelled catalog and catalog-namespace; a package shows its channels with their current CSV;
// catalogs of openshift-marketplace are offered in every namespace; a broken catalog offers
// nothing; writes are refused; operator-registry's test catalog lists its heads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Manager, loadKubeConfig } from '../../src/kube/index.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { demoCatalog, olmApiServer, packageServerOn } from './fixture.js';

let api: TestApiServer;
const stopping = new AbortController();
let running: Promise<void>;

const LATEST = readFileSync(new URL('../fixtures/olm/operator-registry-latest.yaml', import.meta.url), 'utf8');
const catalog = (ns: string, name: string, display: string, content: string) => [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { 'catalog.yaml': content } },
  { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', metadata: { name, namespace: ns }, spec: { sourceType: 'configmap', configMap: name, displayName: display, publisher: 'bosun' } },
];

before(async () => {
  let client;
  ({ api, client } = await olmApiServer());
  const manager = new Manager({ name: 'package-server', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
  const served = await packageServerOn(manager, api, client);
  running = manager.start(stopping.signal);
  await served();
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      ...['openshift-marketplace', 'team-a', 'team-b'].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
      ...catalog('openshift-marketplace', 'bosun-operators', 'bosun Operators', demoCatalog('demo', { stable: [{ version: '1.0.0' }, { version: '1.1.0', replaces: 'demo.v1.0.0' }], candidate: [{ version: '1.1.0', replaces: 'demo.v1.0.0' }, { version: '1.0.0' }] }, 'stable')),
      ...catalog('team-a', 'registry-tests', 'operator-registry tests', LATEST),
      ...catalog('team-b', 'broken', 'Broken', 'schema: olm.package\nname: x\n'),
    ],
  }));
});
after(async () => {
  stopping.abort();
  await running;
  await api?.stop();
});

test('kubectl get packagemanifests -n NS: its catalogs\' packages and the global catalog\'s, with their catalog', async () => {
  const shown = await eventually('the packages listed', async () => {
    const r = await api.kubectl(['get', 'packagemanifests', '-n', 'team-a']);
    return r.code === 0 && r.stdout.includes('foo') && r.stdout;
  });
  const lines = shown.trim().split('\n');
  assert.deepEqual(lines[0].split(/\s{2,}/), ['NAME', 'CATALOG', 'AGE']);
  const rows = lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 2).join(' | ')).sort();
  assert.deepEqual(rows, ['bar | operator-registry tests', 'baz | operator-registry tests', 'demo | bosun Operators', 'foo | operator-registry tests']);
  const inB = await api.kubectlOk(['get', 'packagemanifests', '-n', 'team-b', '-o', 'name']);
  assert.equal(inB.trim(), 'packagemanifest.packages.operators.coreos.com/demo', 'a broken catalog offers nothing; the global one is there');
  const byLabel = await api.kubectlOk(['get', 'packagemanifests', '-n', 'team-a', '-l', 'catalog=registry-tests,catalog-namespace=team-a', '-o', 'name']);
  assert.deepEqual(byLabel.trim().split('\n').sort(), ['bar', 'baz', 'foo'].map((p) => `packagemanifest.packages.operators.coreos.com/${p}`));
  const all = JSON.parse(await api.kubectlOk(['get', 'packagemanifests', '-A', '-o', 'json']));
  assert.deepEqual(all.items.map((m: { metadata: { namespace: string; name: string } }) => `${m.metadata.namespace}/${m.metadata.name}`).sort(), ['openshift-marketplace/demo', 'team-a/bar', 'team-a/baz', 'team-a/foo']);
});

test('a package: its channels with their current CSVs (the heads opm resolves), the default channel, OLM\'s labels', async () => {
  const foo = JSON.parse(await api.kubectlOk(['get', 'packagemanifest', 'foo', '-n', 'team-a', '-o', 'json']));
  assert.equal(foo.kind, 'PackageManifest');
  assert.deepEqual(foo.metadata.labels.catalog, 'registry-tests');
  assert.deepEqual(foo.metadata.labels['catalog-namespace'], 'team-a');
  assert.equal(foo.status.defaultChannel, 'beta');
  assert.deepEqual(foo.status.channels.map((c: { name: string; currentCSV: string }) => `${c.name}=${c.currentCSV}`), ['beta=foo.v0.3.1']);
  const bar = JSON.parse(await api.kubectlOk(['get', 'packagemanifest', 'bar', '-n', 'team-a', '-o', 'json']));
  assert.deepEqual(bar.status.channels.map((c: { name: string; currentCSV: string }) => `${c.name}=${c.currentCSV}`), ['alpha=bar.v1.0.0', 'stable=bar.v1.0.0']);
  const channels = await api.kubectlOk(['get', 'packagemanifest', 'demo', '-n', 'team-b', '-o', 'jsonpath={range .status.channels[*]}{.name}={.currentCSV} {.currentCSVDesc.version}{"\\n"}{end}']);
  assert.deepEqual(channels.trim().split('\n'), ['candidate=demo.v1.1.0 1.1.0', 'stable=demo.v1.1.0 1.1.0']);
  const missing = await api.kubectl(['get', 'packagemanifest', 'nope', '-n', 'team-a']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /packagemanifests.packages.operators.coreos.com "nope" not found/);
});

test('PackageManifests are read-only', async () => {
  const r = await api.request('POST', '/apis/packages.operators.coreos.com/v1/namespaces/team-a/packagemanifests', { body: { kind: 'PackageManifest', metadata: { name: 'x' } } });
  assert.equal(r.status, 405);
  assert.match(r.json.message, /read-only/);
});
